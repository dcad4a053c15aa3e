#!/usr/bin/env bash
# Issue 20, call A: the frame before (B: 90a5ed1, the render code of e7f3143) and after (N: this work, every array
# split across up to 4 bindings) in the full layout, and after in the compact layout. Compute path, onesweep,
# 1920x1080, medians of 50 frames, two rounds. Then the compact layout's image against the full one (PSNR) at
# the same views, both draw paths.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort-before.xz > /tmp/bin/B; xz -dc devbin/splatsort.xz > /tmp/bin/N
chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { "$@" --frames 50 --algorithm onesweep --draw compute 2>&1 | grep -E " x[0-9]+ = |depth keys|  sort|frame|rasterize|pairs|GPU memory|upload"; }
for round in 1 2; do
  for v in "B" "N --gpu-format full" "N --gpu-format compact"; do
    set -- $v; bin=/tmp/bin/$1; shift
    echo "== round $round: $v"
    for cam in cam_demo inside; do echo "-- demo $cam"; bench $bin render-bench $S --camera $C/$cam.json "$@"; done
    echo "-- x18 framed"; bench $bin render-bench $S --tile 18 --camera $C/x18_framed.json "$@"
    echo "-- x90 framed"; bench $bin render-bench $S --tile 90 --camera $C/x90_framed.json "$@"
  done
done
echo "== PSNR, compact against full"
mkdir -p /tmp/png
for draw in compute raster; do
  for cam in cam_demo near inside; do
    for f in full compact; do /tmp/bin/N render $S --camera $C/$cam.json --gpu-format $f --draw $draw --algorithm onesweep --out /tmp/png/$cam-$f-$draw.png > /dev/null 2>&1; done
    python3 devbin/psnr.py /tmp/png/$cam-full-$draw.png /tmp/png/$cam-compact-$draw.png
  done
  [ -f /tmp/x18.ply ] || /tmp/bin/N tile $S /tmp/x18.ply --copies 18 > /dev/null 2>&1
  for f in full compact; do /tmp/bin/N render /tmp/x18.ply --camera $C/x18_framed.json --gpu-format $f --draw $draw --algorithm onesweep --out /tmp/png/x18-$f-$draw.png > /dev/null 2>&1; done
  python3 devbin/psnr.py /tmp/png/x18-full-$draw.png /tmp/png/x18-compact-$draw.png
done
echo done
