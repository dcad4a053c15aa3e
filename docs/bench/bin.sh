#!/usr/bin/env bash
# The binning in one pass (issue 40; docs/BENCHMARKS.md, "The tile count and scan in one pass"): two builds' frames
# at 1080p, interleaved per view, two rounds, then their images at two cameras compared byte for byte. Run from
# the repository root on the GPU machine:
#   BEFORE=path/to/splatsort AFTER=path/to/splatsort OUT=dir bash docs/bench/bin.sh
set -u
declare -A BIN=([a]=${BEFORE:?the build before} [b]=${AFTER:?the build after})
O=${OUT:-/tmp}
keep() { grep -E "^    |^      |entries|rror"; }
frame() { local b=$1; shift; echo "== $b frame: $*"; "${BIN[$b]}" render-bench "$@" --algorithm onesweep --width 1920 --height 1080 --draw compute 2>&1 | keep; }
for round in 1 2; do
  for view in "demo --frames 200" "demo --frames 200 --camera assets/cameras/inside.json" "demo --frames 200 --tile 10" \
    "demo --frames 100 --tile 48" "demo --frames 20 --tile 966 --gpu-format small"; do
    for b in a b; do
      # shellcheck disable=SC2086
      frame $b $view --warmup-secs 1
    done
  done
  echo "(round $round done)"
done
for b in a b; do
  "${BIN[$b]}" render demo --width 1920 --height 1080 --draw compute --out "$O/$b-demo.png" 2>&1 | tail -1
  "${BIN[$b]}" render demo --camera assets/cameras/inside.json --draw compute --out "$O/$b-inside.png" 2>&1 | tail -1
done
cmp "$O/a-demo.png" "$O/b-demo.png" && echo "demo identical"
cmp "$O/a-inside.png" "$O/b-inside.png" && echo "inside identical"
echo done
