#!/usr/bin/env bash
# Issue 19, call 1: the frame before (devbin/splatsort-base, commit ed773b7) and after (devbin/splatsort), compute
# path, onesweep depth sort, 1920x1080: the demo at a 3/4 view and from inside, the demo x18 framed and oblique;
# gsplat 1.5.3 at the same cameras; PSNR of our images against gsplat's; 16- against 32-bit depth keys.
set -u
B=devbin/splatsort; A=devbin/splatsort-base; S=assets/semarang_stadium_sh3.ply; C=devbin/cams
mkdir -p $OUT/img /tmp/scenes
bench() { "$@" --frames 50 --algorithm onesweep --draw compute 2>&1 | grep -E " x[0-9]+ = |depth keys|  sort|frame|tile |rasterize|pairs"; }
# The new build first, so that it writes the framed camera the others use.
echo "== after: x18 framed"; bench $B render-bench $S --tile 18 --width 1920 --height 1080 --save-camera $C/x18_framed.json
for round in 1 2; do
  for bin in $A $B; do
    echo "== round $round: $bin"
    echo "-- demo 3/4";   bench $bin render-bench $S --camera $C/cam_demo.json
    echo "-- inside";     bench $bin render-bench $S --camera $C/inside.json
    echo "-- x18 framed"; bench $bin render-bench $S --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench $bin render-bench $S --tile 18 --camera $C/cam_x18.json
  done
done
echo "== depth key bits (after)"
for bits in 16 32; do
  echo "-- demo 3/4, $bits";    bench $B render-bench $S --camera $C/cam_demo.json --key-bits $bits
  echo "-- inside, $bits";      bench $B render-bench $S --camera $C/inside.json --key-bits $bits
  echo "-- x18 framed, $bits";  bench $B render-bench $S --tile 18 --camera $C/x18_framed.json --key-bits $bits
done
$B tile --copies 18 $S /tmp/scenes/x18.ply > /dev/null
echo "== images"
for cam in cam_demo inside; do
  for bits in 16 32; do
    $B render $S --camera $C/$cam.json --algorithm onesweep --draw compute --key-bits $bits --out $OUT/img/after_${cam}_$bits.png > /dev/null 2>&1
  done
  $B render $S --camera $C/$cam.json --algorithm onesweep --draw raster --out $OUT/img/after_${cam}_raster.png > /dev/null 2>&1
  $A render $S --camera $C/$cam.json --algorithm onesweep --draw compute --out $OUT/img/before_$cam.png > /dev/null 2>&1
done
for cam in x18_framed cam_x18; do
  for bits in 16 32; do
    $B render /tmp/scenes/x18.ply --camera $C/$cam.json --algorithm onesweep --draw compute --key-bits $bits --out $OUT/img/after_${cam}_$bits.png > /dev/null 2>&1
  done
  $A render /tmp/scenes/x18.ply --camera $C/$cam.json --algorithm onesweep --draw compute --out $OUT/img/before_$cam.png > /dev/null 2>&1
done
echo "== gsplat"
python3 -m pip install -q --no-index --no-deps --target /tmp/site devbin/gsplat-*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16
python3 devbin/gsplat_time.py $S $C/cam_demo.json $C/inside.json --out $OUT/img 2>&1 | grep -E "gsplat|splats|Error"
python3 devbin/gsplat_time.py /tmp/scenes/x18.ply $C/x18_framed.json $C/cam_x18.json --out $OUT/img 2>&1 | grep -E "gsplat|splats|Error"
echo "== psnr"
for cam in cam_demo inside x18_framed cam_x18; do
  python3 devbin/psnr.py $OUT/img/after_${cam}_32.png $OUT/img/gsplat_$cam.png
  python3 devbin/psnr.py $OUT/img/before_$cam.png $OUT/img/gsplat_$cam.png
  python3 devbin/psnr.py $OUT/img/after_${cam}_16.png $OUT/img/after_${cam}_32.png
done
for cam in cam_demo inside; do python3 devbin/psnr.py $OUT/img/after_${cam}_raster.png $OUT/img/after_${cam}_32.png; done
cp $C/x18_framed.json $OUT/
echo done
