#!/usr/bin/env bash
# Issue 20, call A2 (after the projection went per part): the frame before (B: 90a5ed1, the render code of e7f3143) and after (N: this work, every array
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
echo done
