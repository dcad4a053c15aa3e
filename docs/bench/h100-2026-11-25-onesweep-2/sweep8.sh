#!/usr/bin/env bash
# Issue 17, session 2: u64 keys, the scan fused into the digit passes (splatsort) against the build before it
# (splatsort-base), one-sort tile binning against depth sort + tile sort, CUB and VRDX in the same call.
set -u
B=devbin/splatsort-base
N=devbin/splatsort
S="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|span|^    total|error|MISMATCH|differ"; }
for round in 1 2; do
  for b in $B $N; do
    run $b $S --n $SIZES
    run $b $S --n $SIZES --keys-only
  done
done
for b in $B $N; do
  run $b $S --key-type u64 --n 1048576,16777216
  run $b $S --key-type u64 --n 1048576,16777216 --keys-only
  run $b $S --n 16777216 --key-bits 16
done
# Tile binning for the demo x18 at 1080p (1,000,782 splats, about 2.2M tile pairs, 8160 tiles = 13 key bits):
# today's depth sort + stable tile sort, against one sort of (tile << 32 | depth) keys, 45 bits.
run $N $S --n 1000782 --keys depth
run $N $S --n 2200000 --key-bits 13 --keys uniform
run $N $S --n 2200000 --key-type u64 --key-bits 45 --keys depth
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | tail -20
