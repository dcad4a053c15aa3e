#!/usr/bin/env bash
# Issue 19: the ballot walk with a dense threshold (a 32-splat chunk with more than D hits for the subgroup's
# blocks is walked in order; D = 32: never, as walk.sh's N), against the build before (B). One round; same
# settings as walk.sh.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort.xz > /tmp/bin/N; xz -dc devbin/splatsort-base.xz > /tmp/bin/B; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "frame \(span\)|rasterize"; }
for v in B 32 24 16 8; do
  b=N; [ $v = B ] && b=B; export SPLATSORT_DENSE=$v; [ $v = B ] && unset SPLATSORT_DENSE
  echo "== $v"
  for cam in cam_demo near inside; do echo "-- demo $cam"; bench $b --frames 50 --camera $C/$cam.json; done
  echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
  echo "-- x18 oblique"; bench $b --frames 50 --tile 18 --camera $C/cam_x18.json
  echo "-- x90 framed"; bench $b --frames 50 --tile 90 --camera $C/x90_framed.json
  echo "-- x360 framed"; bench $b --frames 20 --tile 360 --camera $C/x360_framed.json
done
echo done
