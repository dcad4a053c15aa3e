#!/usr/bin/env bash
# Issue 20: the 100M-splat frame (the demo tiled x1800, framed by render-bench, 1920x1080, medians of 20) with
# B = the build before this work (32-byte projection, separate pair buffers) and S = the small layout and the
# pairs sorted in the depth sort's buffers. Compute path: B compact, S compact, S small; quads: S small.
set -u
mkdir -p /tmp/bin; for b in r s; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply
run() { echo "-- $*"; /tmp/bin/"$@" --frames 20 --width 1920 --height 1080 --algorithm onesweep --key-bits 24 --warmup-secs 1 --tile 1800 2>&1 | grep -E "^    |^      |pairs|GPU memory|upload| x[0-9]+ = |rror"; }
run r render-bench $S --draw compute --gpu-format compact
run s render-bench $S --draw compute --gpu-format compact
run s render-bench $S --draw compute --gpu-format small
run s render-bench $S --draw raster --gpu-format small
echo done
