#!/usr/bin/env bash
# Issue 19: the ballot rasterizer as its own kernel, picked by the prepare pass at <= 3 pairs per visible splat
# (N, "auto"), against the build before (B); N with the ballot kernel never taken (SPLATSORT_BALLOT=0: the walk
# over every splat, as B's) and always taken (=100). One round; same settings as walk.sh.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort.xz > /tmp/bin/N; xz -dc devbin/splatsort-base.xz > /tmp/bin/B; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "frame \(span\)|rasterize"; }
for v in B auto 0 100; do
  b=N; [ $v = B ] && b=B; unset SPLATSORT_BALLOT; case $v in 0|100) export SPLATSORT_BALLOT=$v;; esac
  echo "== $v"
  for cam in cam_demo near inside; do echo "-- demo $cam"; bench $b --frames 50 --camera $C/$cam.json; done
  echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
  echo "-- x18 oblique"; bench $b --frames 50 --tile 18 --camera $C/cam_x18.json
  echo "-- x90 framed"; bench $b --frames 50 --tile 90 --camera $C/x90_framed.json
  echo "-- x360 framed"; bench $b --frames 20 --tile 360 --camera $C/x360_framed.json
done
echo done
