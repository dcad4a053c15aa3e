#!/usr/bin/env bash
# Sweep 1: new OneSweep (tile shapes, trusted vs checked), the old one, CUB and VRDX, in one call.
set -u
B=devbin
O=$OUT
N=1048576,4194304,16777216,67108864
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench $B/cub_bench.cu > $O/cub_build.txt 2>&1 &
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
S="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
{
echo "== base kv"; $B/splatsort-base $S --n $N
echo "== new kv"; $B/splatsort $S --n $N
echo "== new keys-only"; $B/splatsort $S --n $N --keys-only
echo "== base keys-only"; $B/splatsort-base $S --n 16777216 --keys-only
echo "== new 16-bit"; $B/splatsort $S --n 16777216 --key-bits 16
echo "== new checked"; $B/splatsort $S --n 1048576,16777216 --onesweep-checked
for t in 512x12 256x15 256x12 256x8 512x8; do echo "== new tile $t"; $B/splatsort $S --n 1048576,16777216 --onesweep-tile $t; done
echo "== new force-fallback"; $B/splatsort $S --n 16777216 --force-fallback
echo "== new entries 64"; $B/splatsort $S --n 16777216 --status-entries 64
echo "== new per-tile"; $B/splatsort $S --n 67108864 --status-table per-tile
} > $O/sorts.txt 2>&1
wait
{ /tmp/cub_bench 1048576 4194304 16777216 67108864; } > $O/cub.txt 2>&1
$B/vrdx_peer_bench --sizes 1048576,4194304,16777216,67108864 --iters 30 --heat-ms 1500 > $O/vrdx.txt 2>&1
echo done
