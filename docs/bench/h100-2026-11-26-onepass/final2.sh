#!/usr/bin/env bash
# Issues 17 and 19, the session's final call: B = f2d1644 (the build before this session), N = the final build
# (the untimed frame in one compute pass; the ranking atomic without a branch; 512 x 16 tiles past 640K keys).
# Frames (compute path, onesweep, 24-bit depth keys, 1920x1080, medians of 50, 20 at x360) of B and N; N's images
# against B's byte for byte and against gsplat 1.5.3's at the same cameras (timed here too); then the sort of B and
# N beside CUB and VRDX.
set -u
mkdir -p /tmp/bin /tmp/scenes $OUT/img; xz -dc devbin/splatsort.xz > /tmp/bin/B; xz -dc devbin/splatsort-n4.xz > /tmp/bin/N; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      |pairs"; }
for b in B N; do
  echo "== $b"
  for cam in cam_demo near inside; do echo "-- demo $cam"; bench $b --frames 50 --camera $C/$cam.json; done
  echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
  echo "-- x18 oblique"; bench $b --frames 50 --tile 18 --camera $C/cam_x18.json
  echo "-- x90 framed"; bench $b --frames 50 --tile 90 --camera $C/x90_framed.json
  echo "-- x360 framed"; bench $b --frames 20 --tile 360 --camera $C/x360_framed.json
done
echo "== x18 framed again"; for b in B N; do echo "-- $b"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json | grep "frame (span)"; done
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
rm -rf $OUT/img
echo "== sort"
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|span|error|differ|MISMATCH"; }
for b in B N; do
  run /tmp/bin/$b $SB --n $SIZES
  run /tmp/bin/$b $SB --n $SIZES --keys-only
  run /tmp/bin/$b $SB --n 16777216 --key-bits 16
  run /tmp/bin/$b $SB --n 1048576,16777216 --key-type u64
  run /tmp/bin/$b $SB --n 1048576,16777216 --key-type u64 --keys-only
done
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench devbin/cub_bench.cu && /tmp/cub_bench 1048576 4194304 16777216 67108864
devbin/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 2>&1 | grep "^| "
echo done
