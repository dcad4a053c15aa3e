#!/usr/bin/env bash
# Today's figures (the table at the top of docs/BENCHMARKS.md) in one call on the GPU machine: the OneSweep sort
# beside CUB, and frames of the demo scene and of the Semarang crop up to 100M splats. Run from the repository root:
#   SPLATSORT=path/to/splatsort REAL=dir ANCHORS=dir bash docs/bench/today.sh
# REAL holds semarang_stadium_sh3.ply (../shared/scenes/) and the anchors' cam_demo.json and inside.json; ANCHORS
# holds cub_bench.cu (../shared/tools/anchors/; nvcc builds it there). x90_flipped.json is the Semarang crop x90's
# framed camera (`render-bench --save-camera`) turned upside down: the same splats, its densest tiles last.
set -u
S=${SPLATSORT:-splatsort}
R=${REAL:-../shared/scenes}
A=${ANCHORS:-../shared/tools/anchors}
SIZES=1048576,4194304,16777216,67108864
echo "== sorts: onesweep, u32 keys + u32 values, then keys only"
"$S" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 --n $SIZES 2>&1 | grep -E "onesweep sort|span|rror"
"$S" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 --n $SIZES --keys-only 2>&1 | grep -E "onesweep sort|span|rror"
echo "== CUB"
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench "$A/cub_bench.cu" && /tmp/cub_bench 1048576 4194304 16777216 67108864
keep() { grep -E "^    |^      |pairs|entries|GPU memory|upload| x[0-9]+ = |rror"; }
frame() { echo "== frame: $*"; "$S" render-bench "$@" --algorithm onesweep --width 1920 --height 1080 2>&1 | keep; }
frame demo --frames 200 --warmup-secs 2
frame demo --frames 200 --warmup-secs 2 --camera assets/cameras/inside.json
frame demo --frames 200 --warmup-secs 2 --tile 10
frame "$R/semarang_stadium_sh3.ply" --frames 200 --warmup-secs 2 --camera "$R/cam_demo.json"
frame "$R/semarang_stadium_sh3.ply" --frames 200 --warmup-secs 2 --camera "$R/inside.json"
frame "$R/semarang_stadium_sh3.ply" --frames 50 --warmup-secs 2 --tile 90
frame "$R/semarang_stadium_sh3.ply" --frames 50 --warmup-secs 2 --tile 90 --camera docs/bench/x90_flipped.json
frame "$R/semarang_stadium_sh3.ply" --frames 20 --warmup-secs 1 --tile 1800 --gpu-format small
echo done
