#!/usr/bin/env bash
# Final sweep of issue 17: the new OneSweep, the old one (splatsort-base, commit 70555d3), CUB and VRDX in one call.
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
echo "== new f32 descending depth"; $B/splatsort $S --n 16777216 --key-type f32 --order descending --keys depth
echo "== new checked (naga bounds checks and loop counters)"; $B/splatsort $S --n 1048576,16777216 --onesweep-checked
for t in 256x15 512x12 256x8; do echo "== new tile $t"; $B/splatsort $S --n 1048576,4194304,16777216 --onesweep-tile $t; done
echo "== new forced fallback"; $B/splatsort $S --n 16777216 --force-fallback
echo "== new ring 64"; $B/splatsort $S --n 16777216 --status-entries 64
echo "== new ring 1024"; $B/splatsort $S --n 67108864 --status-entries 1024
echo "== new per-tile"; $B/splatsort $S --n 67108864 --status-table per-tile
echo "== new key shapes"; $B/splatsort $S --n 16777216 --keys uniform,depth,sorted,equal,narrow,reversed
echo "== base kv"; $B/splatsort-base $S --n $N
echo "== base keys-only"; $B/splatsort-base $S --n 1048576,16777216 --keys-only
echo "== base 16-bit"; $B/splatsort-base $S --n 16777216 --key-bits 16
} > $O/sorts.txt 2>&1
{ echo "== new render"; $B/splatsort $R; echo "== base render"; $B/splatsort-base $R; } > $O/render.txt 2>&1
wait
/tmp/cub_bench 1048576 4194304 16777216 67108864 > $O/cub.txt 2>&1
$B/vrdx_peer_bench --sizes $N --iters 30 --heat-ms 1500 > $O/vrdx.txt 2>&1
echo done
