#!/usr/bin/env bash
# Issue 19, final call 1: A = the build before issue 19 (ed773b7); U4 and U8 = this work with four or eight splat
# records read at once in the per-pixel loop. Compute path, onesweep, 1920x1080, medians of 50 frames, two rounds:
# the demo from far (3/4 view), near and inside; the demo x18 framed and oblique; x90 framed. Then 16- against
# 32-bit depth keys, gsplat 1.5.3 at the same cameras, and PSNR.
set -u
mkdir -p /tmp/bin /tmp/scenes $OUT/img; for v in A U4 U8; do xz -dc devbin/s$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { "$@" --frames 50 --algorithm onesweep --draw compute 2>&1 | grep -E " x[0-9]+ = |depth keys|  sort|  draw|frame|tile |rasterize|pairs"; }
for round in 1 2; do
  for v in A U4 U8; do
    echo "== round $round: $v"
    for cam in cam_demo near inside; do echo "-- demo $cam"; bench /tmp/bin/$v render-bench $S --camera $C/$cam.json; done
    echo "-- x18 framed";  bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/cam_x18.json
    echo "-- x90 framed";  bench /tmp/bin/$v render-bench $S --tile 90 --camera $C/x90_framed.json
  done
done
echo "== depth key bits (U4)"
for bits in 16 32; do
  for cam in cam_demo near inside; do echo "-- demo $cam, $bits"; bench /tmp/bin/U4 render-bench $S --camera $C/$cam.json --key-bits $bits; done
  echo "-- x18 framed, $bits"; bench /tmp/bin/U4 render-bench $S --tile 18 --camera $C/x18_framed.json --key-bits $bits
done
/tmp/bin/U4 tile --copies 18 $S /tmp/scenes/x18.ply > /dev/null 2>&1
img() { "$@" > /dev/null 2>&1 || echo "failed: $*"; }
for cam in cam_demo near inside x18_framed cam_x18; do
  scene=$S; case $cam in *x18*) scene=/tmp/scenes/x18.ply;; esac
  for bits in 16 32; do img /tmp/bin/U4 render $scene --camera $C/$cam.json --algorithm onesweep --draw compute --key-bits $bits --out $OUT/img/after_${cam}_$bits.png; done
  img /tmp/bin/U4 render $scene --camera $C/$cam.json --algorithm onesweep --draw raster --out $OUT/img/after_${cam}_raster.png
  img /tmp/bin/A render $scene --camera $C/$cam.json --algorithm onesweep --draw compute --out $OUT/img/before_$cam.png
done
echo "== gsplat"
python3 -m pip install -q --no-index --no-deps --target /tmp/site devbin/gsplat-*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16
python3 devbin/gsplat_time.py $S $C/cam_demo.json $C/near.json $C/inside.json --out $OUT/img 2>&1 | grep -E "gsplat|splats|Error"
python3 devbin/gsplat_time.py /tmp/scenes/x18.ply $C/x18_framed.json $C/cam_x18.json --out $OUT/img 2>&1 | grep -E "gsplat|splats|Error"
echo "== psnr"
for cam in cam_demo near inside x18_framed cam_x18; do
  for img in after_${cam}_32 before_$cam after_${cam}_raster; do python3 devbin/psnr.py $OUT/img/$img.png $OUT/img/gsplat_$cam.png; done
  python3 devbin/psnr.py $OUT/img/after_${cam}_16.png $OUT/img/after_${cam}_32.png
  python3 devbin/psnr.py $OUT/img/after_${cam}_raster.png $OUT/img/after_${cam}_32.png
done
rm -f $OUT/img/*_16.png $OUT/img/*raster.png $OUT/img/before_*
echo done
