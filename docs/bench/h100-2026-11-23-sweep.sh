#!/usr/bin/env bash
# The H100 sweep for issues 7 and 8: sorts (both algorithms), the 2D-grid size, renders with each algorithm.
B=devbin/splatsort
S=assets/semarang_stadium_sh3.ply
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt 2>&1
$B sort-bench --algorithm subgroup --key-bits 32,16 --n 1000000,4000000,16000000,67108864 --repeat 20 > $OUT/subgroup.txt 2>&1
$B sort-bench --algorithm tutorial --radix-bits 2,4 --key-bits 32,16 --n 1000000,4000000,16000000,67108864 --repeat 20 > $OUT/tutorial.txt 2>&1
$B sort-bench --algorithm subgroup --n 16000000 --keys uniform,depth,sorted,equal,narrow,reversed --repeat 20 > $OUT/subgroup-shapes.txt 2>&1
$B sort-bench --algorithm subgroup --n 134217729 --keys depth --repeat 5 > $OUT/subgroup-2d.txt 2>&1
for a in "--algorithm tutorial" "--algorithm tutorial --radix-bits 4 --key-bits 16" "--algorithm subgroup" "--algorithm subgroup --key-bits 16"; do
  $B render-bench $S --width 1920 --height 1080 --frames 50 $a
  $B render-bench $S --width 1920 --height 1080 --frames 50 --tile 18 $a
done > $OUT/render.txt 2>&1
echo sweep done
