#!/usr/bin/env bash
# Issue 17, step 5: B = 3898795 (last session's final build); U = B with the digit pass's per-key loops and the
# ballots' bit loops written out in the source (`unrolled_source`), and up to 24 keys per thread. Both builds at
# 2^20..2^26, pairs and keys only, two rounds; U at other tile shapes; 16-bit and u64 keys; CUB and VRDX; frames.
set -u
mkdir -p /tmp/bin; for b in b u; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|span|rror" | sed -e 's/onesweep sort, 8 radix bits, [0-9]* key bits ([0-9]* iterations), uniform keys, //' | paste - - | sed -e 's/: OK, matches a stable CPU sort[[:space:]]*whole sort (span)//'; }
for round in 1 2; do
  for b in b u; do
    run /tmp/bin/$b $SB --n $SIZES
    run /tmp/bin/$b $SB --n $SIZES --keys-only
  done
done
for shape in 512x18 384x23 384x20 256x24 512x12; do
  run /tmp/bin/u $SB --n $SIZES --onesweep-tile $shape
done
run /tmp/bin/u $SB --n 786432,1310720,2097152 
run /tmp/bin/u $SB --n 786432,1310720,2097152 --onesweep-tile 1024x4
for b in b u; do run /tmp/bin/$b $SB --n 16777216 --key-bits 16; run /tmp/bin/$b $SB --n 16777216 --key-type u64; run /tmp/bin/$b $SB --n 16777216 --key-type u64 --keys-only; done
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | grep "^| "
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      "; }
for b in b u; do
  echo "== $b"
  echo "-- demo cam_demo"; bench $b --frames 50 --camera $C/cam_demo.json
  echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
done
echo done
