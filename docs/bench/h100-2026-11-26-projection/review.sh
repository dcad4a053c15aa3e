#!/usr/bin/env bash
# Issue 20, after the review: R = P with the quad's covariance determinant taken as the conic's inverse (not
# recomputed, which cancels for thin splats). R's images against P's (compute path: byte for byte, nothing changed
# there) and against F's (quads and compute, PSNR), and R's frames at x18 beside P's.
set -u
mkdir -p /tmp/bin /tmp/scenes $OUT/img; for b in f p r; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
/tmp/bin/r tile --copies 18 $S /tmp/scenes/x18.ply > /dev/null 2>&1
/tmp/bin/r tile --copies 90 $S /tmp/scenes/x90.ply > /dev/null 2>&1
img() { "$@" > /dev/null 2>&1 || echo "failed: $*"; }
for cam in cam_demo near inside x18_framed cam_x18 x90_framed; do
  scene=$S; case $cam in *x18*) scene=/tmp/scenes/x18.ply;; x90*) scene=/tmp/scenes/x90.ply;; esac
  for b in f p r; do
    img /tmp/bin/$b render $scene --camera $C/$cam.json --algorithm onesweep --draw compute --key-bits 24 --out $OUT/img/${b}_$cam.png
    img /tmp/bin/$b render $scene --camera $C/$cam.json --algorithm onesweep --draw raster --key-bits 24 --out $OUT/img/${b}q_$cam.png
  done
  cmp $OUT/img/p_$cam.png $OUT/img/r_$cam.png && echo "$cam: R's compute image is P's, byte for byte"
  cmp -s $OUT/img/pq_$cam.png $OUT/img/rq_$cam.png && echo "$cam: R's quad image is P's, byte for byte"
  echo -n "$cam tiles R vs F: "; python3 devbin/psnr.py $OUT/img/r_$cam.png $OUT/img/f_$cam.png
  echo -n "$cam quads R vs F: "; python3 devbin/psnr.py $OUT/img/rq_$cam.png $OUT/img/fq_$cam.png
  echo -n "$cam quads R vs tiles R: "; python3 devbin/psnr.py $OUT/img/rq_$cam.png $OUT/img/r_$cam.png
done
rm -rf $OUT/img /tmp/scenes
for b in p r; do echo "-- $b x18 framed"; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 --frames 50 --tile 18 --camera $C/x18_framed.json 2>&1 | grep -E "frame \(span\)"; done
echo done
