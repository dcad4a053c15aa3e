#!/usr/bin/env bash
# Issue 19: the untimed frame as one compute pass (N1), and N1 with a ballot per bit of the pass's digit (N2),
# against B (f2d1644, the build before). Frame span and per-pass at the cameras, two rounds interleaved;
# images of each build compared byte for byte; then the sort (N2) beside CUB and VRDX in the same call.
set -u
mkdir -p /tmp/bin /tmp/img
xz -dc devbin/splatsort.xz > /tmp/bin/B; xz -dc devbin/splatsort-n1.xz > /tmp/bin/N1; xz -dc devbin/splatsort-n2.xz > /tmp/bin/N2; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
/tmp/bin/B tile --copies 18 $S /tmp/x18.ply > /dev/null
for b in B N1 N2; do
  for cam in cam_demo inside; do /tmp/bin/$b render $S --camera $C/$cam.json --algorithm onesweep --draw compute --key-bits 24 --out /tmp/img/$b-$cam.png > /dev/null; done
  /tmp/bin/$b render /tmp/x18.ply --camera $C/x18_framed.json --algorithm onesweep --draw compute --key-bits 24 --out /tmp/img/$b-x18.png > /dev/null
done
md5sum /tmp/img/*.png
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      |pairs"; }
for round in 1 2; do
  for b in B N1 N2; do
    echo "== round $round: $b"
    for cam in cam_demo inside; do echo "-- demo $cam"; bench $b --frames 50 --camera $C/$cam.json; done
    echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
    echo "-- x90 framed"; bench $b --frames 50 --tile 90 --camera $C/x90_framed.json
  done
done
echo "== x18 framed, third round"
for b in B N1 N2; do echo "-- $b"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json | grep -E "frame|tile sort"; done
echo "== sort"
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|span|^    total|error|differ|MISMATCH"; }
for b in B N2; do
  run /tmp/bin/$b $SB --n $SIZES
  run /tmp/bin/$b $SB --n $SIZES --keys-only
  run /tmp/bin/$b $SB --n 2200000 --key-bits 13
done
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | grep "^| "
echo done
