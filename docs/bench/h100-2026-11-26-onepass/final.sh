#!/usr/bin/env bash
# Issue 19, final call: B = f2d1644 (the build before this session), N = this session's (the untimed frame in one
# compute pass; the digit pass's ranking atomic without a branch). Compute path, onesweep, 24-bit depth keys,
# 1920x1080, medians of 50 frames (20 at x360), two rounds interleaved (x360 in round 2); then gsplat 1.5.3 at the
# same cameras, the PSNR of N's images against gsplat's, and N's images against B's byte for byte.
set -u
mkdir -p /tmp/bin /tmp/scenes $OUT/img; xz -dc devbin/splatsort.xz > /tmp/bin/B; xz -dc devbin/splatsort-n3.xz > /tmp/bin/N; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      |pairs"; }
for round in 1 2; do
  for b in B N; do
    echo "== round $round: $b"
    for cam in cam_demo near inside; do echo "-- demo $cam"; bench $b --frames 50 --camera $C/$cam.json; done
    echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench $b --frames 50 --tile 18 --camera $C/cam_x18.json
    echo "-- x90 framed"; bench $b --frames 50 --tile 90 --camera $C/x90_framed.json
    [ $round = 2 ] && { echo "-- x360 framed"; bench $b --frames 20 --tile 360 --camera $C/x360_framed.json; }
  done
done
/tmp/bin/N tile --copies 18 $S /tmp/scenes/x18.ply > /dev/null 2>&1
/tmp/bin/N tile --copies 90 $S /tmp/scenes/x90.ply > /dev/null 2>&1
img() { "$@" > /dev/null 2>&1 || echo "failed: $*"; }
for cam in cam_demo near inside x18_framed cam_x18 x90_framed; do
  scene=$S; case $cam in *x18*) scene=/tmp/scenes/x18.ply;; x90*) scene=/tmp/scenes/x90.ply;; esac
  for b in B N; do img /tmp/bin/$b render $scene --camera $C/$cam.json --algorithm onesweep --draw compute --key-bits 24 --out $OUT/img/${b}_$cam.png; done
  cmp $OUT/img/B_$cam.png $OUT/img/N_$cam.png && echo "$cam: N's image is B's, byte for byte"
done
echo "== gsplat"
python3 -m pip install -q --no-index --no-deps --target /tmp/site devbin/gsplat-*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16
python3 devbin/gsplat_time.py $S $C/cam_demo.json $C/near.json $C/inside.json --out $OUT/img 2>&1 | grep -E "gsplat|splats|Error"
python3 devbin/gsplat_time.py /tmp/scenes/x18.ply $C/x18_framed.json $C/cam_x18.json --out $OUT/img 2>&1 | grep -E "gsplat|splats|Error"
python3 devbin/gsplat_time.py /tmp/scenes/x90.ply $C/x90_framed.json --out $OUT/img 2>&1 | grep -E "gsplat|splats|Error"
echo "== psnr"
for cam in cam_demo near inside x18_framed cam_x18 x90_framed; do python3 devbin/psnr.py $OUT/img/N_$cam.png $OUT/img/gsplat_$cam.png; done
rm -f $OUT/img/B_* $OUT/img/N_*
echo done
