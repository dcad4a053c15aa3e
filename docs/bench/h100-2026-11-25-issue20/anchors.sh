#!/usr/bin/env bash
# End of issue 20's session: OneSweep (sort crate unchanged since ed773b7) against CUB and VRDX in one call, pairs and
# keys only at 2^20, 2^22, 2^24 and 2^26, as docs/bench/h100-2026-11-25-issue18/anchors.sh.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort.xz > /tmp/bin/N; chmod +x /tmp/bin/N
N=/tmp/bin/N
S="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|span|^    total|error|differ|MISMATCH"; }
run $N $S --n $SIZES
run $N $S --n $SIZES --keys-only
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | grep "^| "
