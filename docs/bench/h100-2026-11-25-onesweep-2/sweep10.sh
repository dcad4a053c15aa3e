#!/usr/bin/env bash
# Issue 17, session 2, final: this build (splatsort: u64 keys, the scan fused into the digit passes, tiles by
# buffer size: 1024x4 up to 1.5M keys) against the build before it (splatsort-base: u64 keys only), CUB and VRDX.
set -u
B=devbin/splatsort-base
N=devbin/splatsort
S="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
SIZES=1048576,2097152,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|span|^    total|error|differ|histogram|digit pass|memory|bytes"; }
for b in $B $N; do
  run $b $S --n $SIZES
  run $b $S --n $SIZES --keys-only
done
run $N $S --n 16777216 --key-bits 16
run $N $S --key-type u64 --n 1048576,4194304,16777216,67108864
run $N $S --key-type u64 --n 1048576,4194304,16777216,67108864 --keys-only
# Tile binning for the demo x18 at 1080p (1,000,782 splats, about 2.2M tile pairs, 8160 tiles = 13 key bits).
run $N $S --n 1000782 --keys depth
run $N $S --n 2200000 --key-bits 13 --keys uniform
run $N $S --n 2200000 --key-type u64 --key-bits 45 --keys depth
for b in $B $N; do
  echo "### $b render-bench x18"
  $b render-bench assets/semarang_stadium_sh3.ply --width 1920 --height 1080 --frames 50 --tile 18 --algorithm onesweep 2>&1 | tail -30
done
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 2097152 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,2097152,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | grep "^| "
