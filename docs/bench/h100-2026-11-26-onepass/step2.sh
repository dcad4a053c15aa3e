#!/usr/bin/env bash
# Issue 17 experiment in the same call as issue 19's builds: N3 = N1 (the untimed frame in one compute pass) with
# the digit pass's ranking atomic taken by every lane (the leader adds its digit's count, the others 0 to a word
# of their own), so there is no branch around it. Sort B (f2d1644) against N3, then CUB and VRDX; frames of B, N1
# and N3 at the demo and x18 cameras.
set -u
mkdir -p /tmp/bin
xz -dc devbin/splatsort.xz > /tmp/bin/B; xz -dc devbin/splatsort-n1.xz > /tmp/bin/N1; xz -dc devbin/splatsort-n3.xz > /tmp/bin/N3; chmod +x /tmp/bin/*
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|span|error|differ|MISMATCH"; }
for round in 1 2; do
  for b in B N3; do
    run /tmp/bin/$b $SB --n $SIZES
    run /tmp/bin/$b $SB --n $SIZES --keys-only
    run /tmp/bin/$b $SB --n 2200000 --key-bits 13
  done
done
run /tmp/bin/N3 $SB --n 16777216 --key-bits 16
run /tmp/bin/N3 $SB --n 16777216 --key-type u64
run /tmp/bin/N3 $SB --n 16777216 --keys equal
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | grep "^| "
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      |pairs"; }
for b in B N1 N3; do
  echo "== $b"
  echo "-- demo cam_demo"; bench $b --frames 50 --camera $C/cam_demo.json
  echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
done
echo done
