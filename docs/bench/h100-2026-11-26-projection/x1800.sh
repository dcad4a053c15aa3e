#!/usr/bin/env bash
# Issue 20: the 100M-splat frame (the demo tiled x1800, framed by render-bench) at 1920x1080, as
# docs/bench/h100-2026-11-25-issue20/b.sh measured it, F (48-byte projection) against P (32 bytes). Medians of 20.
set -u
mkdir -p /tmp/bin; for b in f p; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply
for b in f p; do echo "-- $b"; /tmp/bin/$b render-bench $S --frames 20 --width 1920 --height 1080 --algorithm onesweep --draw compute --key-bits 24 --warmup-secs 1 --tile 1800 2>&1 | grep -E "^    |^      |pairs|GPU memory|upload| x[0-9]+ = "; done
echo done
