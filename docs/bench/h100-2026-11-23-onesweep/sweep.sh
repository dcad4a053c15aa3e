#!/usr/bin/env bash
# The H100 sweep for issue 9: OneSweep at every size, keys-only, both status tables, forced fallback, key types,
# beside the subgroup sort, and the renderer's sort with each algorithm. Four output files.
B=devbin/splatsort
S=assets/semarang_stadium_sh3.ply
N=1000000,4000000,16000000,67108864
O=$OUT/onesweep.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt 2>&1
{
$B sort-bench --algorithm onesweep --n $N --repeat 30 --warmup-secs 1.5
$B sort-bench --algorithm onesweep --n $N --repeat 30 --keys-only
$B sort-bench --algorithm onesweep --n $N --repeat 30 --status-table per-tile
$B sort-bench --algorithm onesweep --n 1000000,16000000 --repeat 10 --force-fallback
$B sort-bench --algorithm onesweep --n 16000000 --repeat 10 --status-entries 64
$B sort-bench --algorithm onesweep --n 16000000 --repeat 30 --key-type f32 --order descending --keys depth
$B sort-bench --algorithm onesweep --n 16000000 --repeat 30 --key-bits 16
$B sort-bench --algorithm onesweep --n 16000000 --repeat 20 --keys uniform,depth,sorted,equal,narrow,reversed
$B sort-bench --algorithm subgroup --n 1000000,16000000 --repeat 30
} > $O 2>&1
$B sort-bench --algorithm onesweep --n 100000,67108864 --repeat 10 --json > $OUT/onesweep.json 2>/dev/null
for a in "--algorithm tutorial" "--algorithm subgroup" "--algorithm onesweep" "--algorithm onesweep --key-bits 16"; do
  $B render-bench $S --width 1920 --height 1080 --frames 50 --tile 18 $a
done > $OUT/render.txt 2>&1
echo sweep done
