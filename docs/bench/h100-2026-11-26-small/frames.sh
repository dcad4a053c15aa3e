#!/usr/bin/env bash
# Issue 20, frames and images: R = the build before this work, S = the small layout and the pairs sorted in the
# depth sort's buffers. Compute path, onesweep, 24-bit depth keys, 1920x1080, medians of 50 frames (20 at x360).
# R compact against S compact (the shared buffers), and S small (the 4-bit SH). Images at six cameras: S compact's
# against R's byte for byte, and S's layouts against S full by PSNR, both draw paths.
set -u
mkdir -p /tmp/bin /tmp/scenes $OUT/img; for b in r s; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      |pairs|GPU memory| x[0-9]+ = "; }
for round in 1 2; do
  for run in "r compact" "s compact" "s small"; do
    set -- $run; echo "== round $round: $1 $2"
    echo "-- demo"; bench $1 --gpu-format $2 --frames 50 --camera $C/cam_demo.json | grep -E "frame \(span\)|depth keys|GPU memory"
    echo "-- x18 framed"; bench $1 --gpu-format $2 --frames 50 --tile 18 --camera $C/x18_framed.json
    echo "-- x90 framed"; bench $1 --gpu-format $2 --frames 50 --tile 90 --camera $C/x90_framed.json | grep -E "frame \(span\)|depth keys|GPU memory"
  done
done
for run in "r compact" "s compact" "s small"; do set -- $run; echo "== x360 framed: $1 $2"; bench $1 --gpu-format $2 --frames 20 --tile 360 --camera $C/x360_framed.json; done
/tmp/bin/s tile --copies 18 $S /tmp/scenes/x18.ply > /dev/null 2>&1
/tmp/bin/s tile --copies 90 $S /tmp/scenes/x90.ply > /dev/null 2>&1
img() { "$@" > /dev/null 2>&1 || echo "failed: $*"; }
for cam in cam_demo near inside x18_framed cam_x18 x90_framed; do
  scene=$S; case $cam in *x18*) scene=/tmp/scenes/x18.ply;; x90*) scene=/tmp/scenes/x90.ply;; esac
  r() { img /tmp/bin/$1 render $scene --camera $C/$cam.json --algorithm onesweep --key-bits 24 --draw $2 --gpu-format $3 --out $OUT/img/$1_$2_$3_$cam.png; }
  r r compute compact; r s compute compact
  for f in full compact small; do r s compute $f; r s raster $f; done
  cmp $OUT/img/r_compute_compact_$cam.png $OUT/img/s_compute_compact_$cam.png && echo "$cam: S's compact compute image is R's, byte for byte"
  for d in compute raster; do for f in compact small; do
    echo -n "$cam $d $f vs full: "; python3 devbin/psnr.py $OUT/img/s_${d}_${f}_$cam.png $OUT/img/s_${d}_full_$cam.png
  done; done
done
rm -rf $OUT/img /tmp/scenes
echo done
