#!/usr/bin/env bash
# Issue 19, second final call: N3 = this session's last build (N2 of copies.sh, with the tile's range read by one
# invocation behind the existing barrier, and the two emits one kernel: one dispatch fewer a frame) against N2 and
# B (ec40c7a). Same settings as final.sh, two rounds interleaved, x360 in round 2. Then the sort against CUB and
# VRDX, as docs/bench/h100-2026-11-25-issue20/anchors.sh (the sort crate and shaders/sort unchanged).
set -u
mkdir -p /tmp/bin
xz -dc devbin/splatsort.xz > /tmp/bin/N3; xz -dc devbin/splatsort-n2.xz > /tmp/bin/N2; xz -dc devbin/splatsort-base.xz > /tmp/bin/B; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      |pairs"; }
for round in 1 2; do
  for b in B N2 N3; do
    echo "== round $round: $b"
    for cam in cam_demo near inside; do echo "-- demo $cam"; bench $b --frames 50 --camera $C/$cam.json; done
    echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench $b --frames 50 --tile 18 --camera $C/cam_x18.json
    echo "-- x90 framed"; bench $b --frames 50 --tile 90 --camera $C/x90_framed.json
    [ $round = 2 ] && { echo "-- x360 framed"; bench $b --frames 20 --tile 360 --camera $C/x360_framed.json; }
  done
done
echo "== sort anchors"
N=/tmp/bin/N3
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|span|^    total|error|differ|MISMATCH"; }
run $N $SB --n $SIZES
run $N $SB --n $SIZES --keys-only
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | grep "^| "
echo done
