#!/usr/bin/env bash
# Issue 19: the ballot rasterizer as its own kernel, picked by the prepare pass at <= 8 pairs per visible splat (BALLOT_WALK set as a pipeline constant; the other pipeline is the loop of B)
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

echo "== images: B against N with the ballot walk always and never"
/tmp/bin/N tile --copies 18 $S /tmp/x18.ply > /dev/null 2>&1
for cam in cam_demo near inside x18_framed; do
  scene=$S; [ $cam = x18_framed ] && scene=/tmp/x18.ply
  r() { "$@" render $scene --camera $C/$cam.json --algorithm onesweep --draw compute --key-bits 24 --out $out > /dev/null 2>&1; }
  out=/tmp/B-$cam.png; r /tmp/bin/B
  out=/tmp/N100-$cam.png; SPLATSORT_BALLOT=100 r /tmp/bin/N
  out=/tmp/N0-$cam.png; SPLATSORT_BALLOT=0 r /tmp/bin/N
  cmp /tmp/B-$cam.png /tmp/N100-$cam.png && cmp /tmp/B-$cam.png /tmp/N0-$cam.png && echo "$cam: identical"
done
echo done
