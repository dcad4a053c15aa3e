#!/usr/bin/env bash
# Issue 20, call C (after the compact decode was made word-wise and the upload parallel): the frame at x18 and x90
# (medians of 50, as call A2) and the big scenes x360, x1440 and x1800 (as call B: medians of 20) in both layouts.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort.xz > /tmp/bin/N; chmod +x /tmp/bin/N
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
small() { /tmp/bin/N render-bench $S --frames 50 --algorithm onesweep --draw compute "$@" 2>&1 | grep -E " x[0-9]+ = |depth keys|  sort|frame|rasterize|GPU memory|upload"; }
for f in full compact; do
  echo "-- x18 framed $f"; small --tile 18 --camera $C/x18_framed.json --gpu-format $f
  echo "-- x90 framed $f"; small --tile 90 --camera $C/x90_framed.json --gpu-format $f
done
bash docs/bench/h100-2026-11-25-issue20/b.sh 360 1440 1800
