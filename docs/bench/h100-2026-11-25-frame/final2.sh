#!/usr/bin/env bash
# Issue 19, final call 2: the demo x360 (20M splats), framed, before (A, ed773b7) and after (U4), one round; gsplat
# 1.5.3 at x90 and x360 framed, and PSNR against it.
set -u
mkdir -p /tmp/bin /tmp/scenes $OUT/img; for v in A U4; do xz -dc devbin/s$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { "$@" --frames 20 --algorithm onesweep --draw compute 2>&1 | grep -E " x[0-9]+ = |depth keys|  sort|  draw|frame|tile |rasterize|pairs|rror"; }
echo "-- U4 x360 framed"; bench /tmp/bin/U4 render-bench $S --tile 360 --width 1920 --height 1080 --save-camera $C/x360_framed.json
echo "-- A x360 framed"; bench /tmp/bin/A render-bench $S --tile 360 --camera $C/x360_framed.json
cp $C/x360_framed.json $OUT/
/tmp/bin/U4 tile --copies 90 $S /tmp/scenes/x90.ply > /dev/null 2>&1
/tmp/bin/U4 tile --copies 360 $S /tmp/scenes/x360.ply > /dev/null 2>&1
echo "== gsplat"
python3 -m pip install -q --no-index --no-deps --target /tmp/site devbin/gsplat-*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16
python3 devbin/gsplat_time.py /tmp/scenes/x90.ply $C/x90_framed.json --iters 20 --out $OUT/img 2>&1 | grep -E "gsplat|splats|Error"
/tmp/bin/U4 render /tmp/scenes/x90.ply --camera $C/x90_framed.json --algorithm onesweep --draw compute --out $OUT/img/after_x90.png > /dev/null 2>&1
python3 devbin/psnr.py $OUT/img/after_x90.png $OUT/img/gsplat_x90_framed.png
python3 devbin/gsplat_time.py /tmp/scenes/x360.ply $C/x360_framed.json --iters 20 --out $OUT/img 2>&1 | grep -E "gsplat|splats|Error"
/tmp/bin/U4 render /tmp/scenes/x360.ply --camera $C/x360_framed.json --algorithm onesweep --draw compute --out $OUT/img/after_x360.png > /dev/null 2>&1
python3 devbin/psnr.py $OUT/img/after_x360.png $OUT/img/gsplat_x360_framed.png
rm -f $OUT/img/*.png
echo done
