#!/usr/bin/env bash
# Issue 19: as hybrid2.sh, with the other pipeline's loop inline again (as B's, not through `blend_four`); every
# pass printed. B = the build before (ec40c7a), auto = N as it ships (ballot at <= 8 pairs per visible splat),
# 0 = N with the ballot pipeline never taken. Two rounds interleaved.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort.xz > /tmp/bin/N; xz -dc devbin/splatsort-base.xz > /tmp/bin/B; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      |pairs"; }
for round in 1 2; do
for v in B auto 0; do
  b=N; [ $v = B ] && b=B; unset SPLATSORT_BALLOT; case $v in 0|100) export SPLATSORT_BALLOT=$v;; esac
  echo "== round $round: $v"
  for cam in cam_demo near inside; do echo "-- demo $cam"; bench $b --frames 50 --camera $C/$cam.json; done
  echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
  echo "-- x18 oblique"; bench $b --frames 50 --tile 18 --camera $C/cam_x18.json
  echo "-- x90 framed"; bench $b --frames 50 --tile 90 --camera $C/x90_framed.json
  [ $round = 1 ] && { echo "-- x360 framed"; bench $b --frames 20 --tile 360 --camera $C/x360_framed.json; }
done
done
echo done
