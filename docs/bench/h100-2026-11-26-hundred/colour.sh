#!/usr/bin/env bash
# The rasterizer with the colour decoded per blend (N) and once per splat into f16 (M), against S (f125968): small
# layout, compute path, onesweep, 24-bit keys, 1920x1080, medians. Output in colour.txt (from the call's reply).
set -u
mkdir -p /tmp/bin; for b in s n m; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --key-bits 24 --width 1920 --height 1080 --draw compute --gpu-format small "$@" 2>&1 | grep -E "^    |^      "; }
for round in 1 2; do for b in s n m; do
  echo "== $round $b demo"; bench $b --frames 50 --camera $C/cam_demo.json | grep -E "span|rasterize|count"
  echo "== $round $b x18"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json | grep -E "span|rasterize|count"
done; done
for b in s n m; do echo "== $b x360"; bench $b --frames 20 --tile 360 --camera $C/x360_framed.json; done
