#!/usr/bin/env bash
# Issue 20, call B: big scenes, the demo tiled x360 (20M), x720 (40M), x1440 (80M), x1800 (100M) in the compact
# layout and in the full one where it fits: per-pass times, frame, GPU memory in total and per splat, upload time,
# host peak memory. Compute path, onesweep, 1920x1080 framed, medians of 20 frames. Arguments: the tile counts.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort.xz > /tmp/bin/N; chmod +x /tmp/bin/N
S=assets/semarang_stadium_sh3.ply
bench() { /tmp/bin/N render-bench $S --frames 20 --width 1920 --height 1080 --algorithm onesweep --draw compute --warmup-secs 1 "$@" 2>&1 | grep -E " x[0-9]+ = |depth keys|  sort|frame|tile |rasterize|pairs|GPU memory|upload|wall|rror|fit"; }
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv
for t in "$@"; do
  for f in compact full; do echo "-- x$t $f"; SECONDS=0; bench --tile $t --gpu-format $f; echo "  wall ${SECONDS} s"; done
done
echo done
