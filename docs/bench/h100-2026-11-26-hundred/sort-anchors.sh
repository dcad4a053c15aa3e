#!/usr/bin/env bash
# The sort crate changed (ScanTable::in_buffer, a scan table in the caller's buffer): sort-bench with S = f125968
# and N = 2afad24 (the sort code of the last commit), two rounds, then CUB and VRDX in the same call.
set -u
mkdir -p /tmp/bin; for b in s n; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|histogram  |span|rror" | sed -e 's/onesweep sort, 8 radix bits, [0-9]* key bits ([0-9]* iterations), uniform keys, //' | paste - - - | sed -e 's/: OK, matches a stable CPU sort[[:space:]]*histogram//; s/whole sort (span)//'; }
for round in 1 2; do
  for b in s n; do
    run /tmp/bin/$b $SB --n $SIZES
    run /tmp/bin/$b $SB --n $SIZES --keys-only
  done
done
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | grep "^| "
echo done
