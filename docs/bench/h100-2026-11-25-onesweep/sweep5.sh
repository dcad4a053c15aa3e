#!/usr/bin/env bash
# Issue 17, after the untimed sort became one compute pass: the new OneSweep, CUB and VRDX in one call.
set -u
B=devbin; O=$OUT
N=1048576,4194304,16777216,67108864
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench $B/cub_bench.cu > $O/cub_build.txt 2>&1 &
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
S="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
R="render-bench assets/semarang_stadium_sh3.ply --width 1920 --height 1080 --frames 50 --tile 18 --algorithm onesweep"
{
echo "== new kv"; $B/splatsort $S --n $N
echo "== new keys-only"; $B/splatsort $S --n $N --keys-only
echo "== new 16-bit"; $B/splatsort $S --n $N --key-bits 16
echo "== new tile 256x15"; $B/splatsort $S --n $N --onesweep-tile 256x15
echo "== new tile 256x15 keys-only"; $B/splatsort $S --n $N --onesweep-tile 256x15 --keys-only
echo "== new checked"; $B/splatsort $S --n 1048576,16777216 --onesweep-checked
} > $O/sorts.txt 2>&1
{ echo "== new render"; $B/splatsort $R; } > $O/render.txt 2>&1
wait
/tmp/cub_bench 1048576 4194304 16777216 67108864 > $O/cub.txt 2>&1
$B/vrdx_peer_bench --sizes $N --iters 30 --heat-ms 1500 > $O/vrdx.txt 2>&1
echo done
