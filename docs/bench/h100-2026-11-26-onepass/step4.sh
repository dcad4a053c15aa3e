#!/usr/bin/env bash
# Issue 17, step 4: N4 = b18fa93; N6 = N4 with no branch when a key is placed in the tile and its values staged;
# N7 = N6 with up to 18 keys per thread (512 x 18 by --onesweep-tile). Then CUB and VRDX, and frames of the three
# builds at the demo and x18 cameras.
set -u
mkdir -p /tmp/bin; for b in n4 n6 n7; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|span|rror" | sed -e 's/onesweep sort, 8 radix bits, [0-9]* key bits ([0-9]* iterations), uniform keys, //' | paste - - | sed -e 's/: OK, matches a stable CPU sort[[:space:]]*whole sort (span)//'; }
for round in 1 2; do
  for b in n4 n6 n7; do
    run /tmp/bin/$b $SB --n $SIZES
    run /tmp/bin/$b $SB --n $SIZES --keys-only
  done
  run /tmp/bin/n7 $SB --n $SIZES --onesweep-tile 512x18
  run /tmp/bin/n7 $SB --n $SIZES --onesweep-tile 512x18 --keys-only
done
MID=786432,1000782,1310720,1572864,2097152,3145728,6291456
run /tmp/bin/n6 $SB --n $MID
run /tmp/bin/n7 $SB --n $MID --onesweep-tile 512x18
for b in n4 n6; do run /tmp/bin/$b $SB --n 16777216 --key-bits 16; run /tmp/bin/$b $SB --n 1048576,16777216 --key-type u64; run /tmp/bin/$b $SB --n 16777216 --key-type u64 --keys-only; done
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | grep "^| "
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      "; }
for b in n4 n6 n7; do
  echo "== $b"
  echo "-- demo cam_demo"; bench $b --frames 50 --camera $C/cam_demo.json
  echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
done
echo done
