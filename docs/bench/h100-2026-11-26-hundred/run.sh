#!/usr/bin/env bash
# Issue 20, the 100-byte splat: S = f125968 (the session before: 32-byte projection, counts in their own buffer, a
# cap of 2 pairs a splat past 2^24) and N = 2afad24 (a 20-byte projection: the ellipse by its axes in f16 and
# a 16-bit direction, the colour in RGB9E5, the tile counts recomputed by the count pass; the counts scanned in the
# depth sort's spent keys; a cap of 1.5 pairs a splat past 2^24). render-bench, onesweep, 24-bit depth keys,
# 1920x1080, frame (span) medians. Outputs go to $OUT files (the device tool returns only the last 12,000
# characters of the call's output). Parts, one or more per call: x1800 frames images.
set -u
part() { [[ " $PARTS " == *" $1 "* ]]; }
PARTS="$*"
mkdir -p /tmp/bin /tmp/scenes $OUT/img; for b in s n; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
keep() { grep -E "^    |^      |pairs|GPU memory|upload| x[0-9]+ = |rror"; }
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --key-bits 24 --width 1920 --height 1080 "$@" 2>&1 | keep; }
part x1800 && {
  for run in "s compact compute" "n compact compute" "s small compute" "n small compute" "n small raster"; do
    set -- $run; echo "-- x1800 $1 $2 $3"; bench $1 --gpu-format $2 --draw $3 --frames 20 --warmup-secs 1 --tile 1800
  done
} > $OUT/x1800.txt 2>&1
part frames && {
  for round in 1 2; do
    for run in "s compact" "n compact" "s small" "n small"; do
      set -- $run; echo "== round $round: $1 $2"
      echo "-- demo"; bench $1 --draw compute --gpu-format $2 --frames 50 --camera $C/cam_demo.json
      echo "-- x18 framed"; bench $1 --draw compute --gpu-format $2 --frames 50 --tile 18 --camera $C/x18_framed.json
      echo "-- x90 framed"; bench $1 --draw compute --gpu-format $2 --frames 50 --tile 90 --camera $C/x90_framed.json
    done
  done
  for run in "s compact" "n compact" "s small" "n small"; do
    set -- $run; echo "== x360 framed: $1 $2"; bench $1 --draw compute --gpu-format $2 --frames 20 --tile 360 --camera $C/x360_framed.json
  done
} > $OUT/frames.txt 2>&1
part images && {
  /tmp/bin/n tile --copies 18 $S /tmp/scenes/x18.ply > /dev/null 2>&1
  /tmp/bin/n tile --copies 90 $S /tmp/scenes/x90.ply > /dev/null 2>&1
  img() { "$@" > /dev/null 2>&1 || echo "failed: $*"; }
  for cam in cam_demo near inside x18_framed cam_x18 x90_framed; do
    scene=$S; case $cam in *x18*) scene=/tmp/scenes/x18.ply;; x90*) scene=/tmp/scenes/x90.ply;; esac
    r() { img /tmp/bin/$1 render $scene --camera $C/$cam.json --algorithm onesweep --key-bits 24 --draw $2 --gpu-format $3 --out $OUT/img/$1_$2_$3_$cam.png; }
    for d in compute raster; do
      r s $d full
      for f in full compact small; do
        r n $d $f
        echo -n "$cam $d: N $f vs S full: "; python3 devbin/psnr.py $OUT/img/n_${d}_${f}_$cam.png $OUT/img/s_${d}_full_$cam.png
      done
    done
  done
  rm -rf $OUT/img /tmp/scenes
} > $OUT/images.txt 2>&1
cat $OUT/*.txt | grep -E "^==|^--|frame \(span\)|GPU memory|dB|psnr|rror|failed" | tail -150
echo done
