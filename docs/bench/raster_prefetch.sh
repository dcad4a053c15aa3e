#!/usr/bin/env bash
# The rasterizer reading the next batch's records before the walk of this one (issue 40; docs/BENCHMARKS.md): three
# builds' frames at 1080p interleaved per view, two rounds, and their images compared byte for byte.
set -u
# Builds to compare, each a path: A (before), B (prefetch, with the barrier before the uniform load), C (prefetch,
# without it; kept). Run from the repository root on the GPU machine:
#   A=path B=path C=path OUT=dir bash docs/bench/raster_prefetch.sh
declare -A BIN=([a]=${A:?} [b]=${B:?} [c]=${C:?})
BUILDS="a b c"
keep() { grep -E "span|rasterize|rror"; }
frame() { local b=$1; shift; echo "== $b frame: $*"; "${BIN[$b]}" render-bench "$@" --algorithm onesweep --width 1920 --height 1080 --draw compute 2>&1 | keep; }
for round in 1 2; do
for view in "demo --frames 200" "demo --frames 200 --camera assets/cameras/inside.json" "demo --frames 200 --tile 10" "demo --frames 100 --tile 48" "demo --frames 20 --tile 966 --gpu-format small"; do
  for b in $BUILDS; do
    # shellcheck disable=SC2086
    frame $b $view --warmup-secs 1
  done
done
done
for b in $BUILDS; do
  "${BIN[$b]}" render demo --width 1920 --height 1080 --draw compute --out "$OUT/$b-demo.png" 2>&1 | tail -1
  "${BIN[$b]}" render demo --camera assets/cameras/inside.json --draw compute --out "$OUT/$b-inside.png" 2>&1 | tail -1
  cmp "$OUT/a-demo.png" "$OUT/$b-demo.png" && echo "$b demo identical"
  cmp "$OUT/a-inside.png" "$OUT/$b-inside.png" && echo "$b inside identical"
done
echo done
