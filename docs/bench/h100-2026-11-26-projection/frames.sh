#!/usr/bin/env bash
# Issues 17 and 20, frames: B = 3898795 (the session's start), F = 67c68f3 (the sort's new tiles, unrolled loops),
# P = F with the 32-byte projection (the quad's axes and the coverage radius derived by the readers). Compute path,
# onesweep, 24-bit depth keys, 1920x1080, medians of 50 frames (20 at x360, 10 at x1800). Images: F against B byte
# for byte, P against F by PSNR. Then the 100M-splat frame (x1800) of F and P with GPU memory.
set -u
mkdir -p /tmp/bin /tmp/scenes $OUT/img; for b in b f p; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      |pairs|GPU memory|upload|peak| x[0-9]+ = "; }
for b in b f p; do
  echo "== $b"
  for cam in cam_demo near inside; do echo "-- demo $cam"; bench $b --frames 50 --camera $C/$cam.json; done
  echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
  echo "-- x18 oblique"; bench $b --frames 50 --tile 18 --camera $C/cam_x18.json
  echo "-- x90 framed"; bench $b --frames 50 --tile 90 --camera $C/x90_framed.json
  echo "-- x360 framed"; bench $b --frames 20 --tile 360 --camera $C/x360_framed.json
done
echo "== x18 framed again"; for b in b f p; do echo "-- $b"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json | grep -E "frame \(span\)|  sort"; done
/tmp/bin/p tile --copies 18 $S /tmp/scenes/x18.ply > /dev/null 2>&1
/tmp/bin/p tile --copies 90 $S /tmp/scenes/x90.ply > /dev/null 2>&1
img() { "$@" > /dev/null 2>&1 || echo "failed: $*"; }
for cam in cam_demo near inside x18_framed cam_x18 x90_framed; do
  scene=$S; case $cam in *x18*) scene=/tmp/scenes/x18.ply;; x90*) scene=/tmp/scenes/x90.ply;; esac
  for b in b f p; do img /tmp/bin/$b render $scene --camera $C/$cam.json --algorithm onesweep --draw compute --key-bits 24 --out $OUT/img/${b}_$cam.png; done
  img /tmp/bin/f render $scene --camera $C/$cam.json --algorithm onesweep --draw raster --key-bits 24 --out $OUT/img/fq_$cam.png
  img /tmp/bin/p render $scene --camera $C/$cam.json --algorithm onesweep --draw raster --key-bits 24 --out $OUT/img/pq_$cam.png
  cmp $OUT/img/b_$cam.png $OUT/img/f_$cam.png && echo "$cam: F's image is B's, byte for byte"
  echo -n "$cam tiles P vs F: "; python3 devbin/psnr.py $OUT/img/p_$cam.png $OUT/img/f_$cam.png
  echo -n "$cam quads P vs F: "; python3 devbin/psnr.py $OUT/img/pq_$cam.png $OUT/img/fq_$cam.png
done
rm -rf $OUT/img /tmp/scenes
echo "== x1800"
for b in f p; do echo "-- $b"; bench $b --frames 10 --tile 1800 --warmup-secs 1; done
echo done
