#!/usr/bin/env bash
# Issue 22: load time per format for the demo tiled x18 (1,000,782 splats, SH degree 3), SOG and glTF beside the
# others, and the SOG writer's time for 1M splats. `splatsort info FILE`'s load time, five rounds, page cache warm.
# Run from the repository root after `cargo build --release`.
set -euo pipefail
B=target/release/splatsort
D=$(mktemp -d)
$B tile assets/semarang_stadium_sh3.ply "$D/m.ply" --copies 18 >/dev/null 2>&1
for f in m.compressed.ply m.v4.spz m.splat m.sog m.glb; do $B convert "$D/m.ply" "$D/$f" >/dev/null 2>&1; done
for f in m.ply m.compressed.ply m.v4.spz m.splat m.sog m.glb; do
  t=""
  for _ in 1 2 3 4 5; do t="$t $($B info "$D/$f" 2>/dev/null | awk '/load time/{print $3}')"; done
  echo "$f $(stat -c %s "$D/$f") bytes, load s:$t"
done
# The writer: the tiled demo repeats 22,828 distinct SH vectors, which become the palette as they are.
for _ in 1 2 3; do /usr/bin/time -f "convert m.ply m.sog (exact palette): %e s, peak %M KB" $B convert "$D/m.ply" "$D/w.sog" 2>&1 >/dev/null | tail -1; done
rm -rf "$D"
