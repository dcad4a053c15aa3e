#!/usr/bin/env bash
# Load time per format of about a million splats: SCENE tiled COPIES times, written by splatsort in each format,
# then `splatsort info FILE`'s load time, five rounds, page cache warm. Runs on any machine (no GPU needed):
#   SPLATSORT=target/release/splatsort SCENE=demo COPIES=10 bash docs/bench/load.sh
set -euo pipefail
B=${SPLATSORT:-target/release/splatsort}
SCENE=${SCENE:-demo}
COPIES=${COPIES:-10}
D=$(mktemp -d)
"$B" tile "$SCENE" "$D/m.ply" --copies "$COPIES" 2>/dev/null
for f in m.compressed.ply m.v4.spz m.splat m.sog m.glb; do "$B" convert "$D/m.ply" "$D/$f" >/dev/null 2>&1; done
for f in m.ply m.compressed.ply m.v4.spz m.splat m.sog m.glb; do
  t=""
  for _ in 1 2 3 4 5; do t="$t $("$B" info "$D/$f" 2>/dev/null | awk '/load time/{print $3}')"; done
  echo "$f $(stat -c %s "$D/$f") bytes, load s:$t"
done
rm -rf "$D"
