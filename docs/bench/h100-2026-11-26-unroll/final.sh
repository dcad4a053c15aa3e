#!/usr/bin/env bash
# Issue 17, final: K = 9b3cd99; F = K with the counts and the tile in one workgroup array, the default tiles chosen from
# step10 (1024 x 4 up to 4Mi keys, then 768 x 14; 1024 x 11 for keys-only sorts), and the histogram's loop over a
# word's digits written out. Two rounds of both, then CUB and VRDX in the same call.
set -u
mkdir -p /tmp/bin; for b in k f; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|histogram  |span|rror" | sed -e 's/onesweep sort, 8 radix bits, [0-9]* key bits ([0-9]* iterations), uniform keys, //' | paste - - - | sed -e 's/: OK, matches a stable CPU sort[[:space:]]*histogram//; s/whole sort (span)//'; }
for round in 1 2; do
  for b in k f; do
    run /tmp/bin/$b $SB --n $SIZES
    run /tmp/bin/$b $SB --n $SIZES --keys-only
  done
done
run /tmp/bin/f $SB --n 786432,1000782,1310720,2097152,3145728,4194305,8388608
for b in k f; do run /tmp/bin/$b $SB --n 16777216 --key-bits 16; run /tmp/bin/$b $SB --n 1048576,16777216 --key-type u64; run /tmp/bin/$b $SB --n 16777216 --key-type u64 --keys-only; done
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | grep "^| "
echo done
