#!/usr/bin/env bash
# The H100 sweep for issue 10: the quad (raster) and tile (compute) draw paths side by side, 1920x1080, onesweep
# depth sort: the demo scene, 1M (x18), 5M (x90), and a view from inside the demo scene near the ground.
B=devbin/splatsort
S=assets/semarang_stadium_sh3.ply
for d in raster compute; do
  $B render-bench $S --width 1920 --height 1080 --frames 50 --algorithm onesweep --draw $d
  $B render-bench $S --width 1920 --height 1080 --frames 50 --algorithm onesweep --draw $d --tile 18
  $B render-bench $S --width 1920 --height 1080 --frames 30 --algorithm onesweep --draw $d --tile 90
  $B render-bench $S --camera devbin/inside.json --frames 50 --algorithm onesweep --draw $d
done > $OUT/render-paths.txt 2>&1
for d in raster compute; do
  $B render-bench $S --width 1920 --height 1080 --frames 50 --algorithm subgroup --draw $d --tile 18
done >> $OUT/render-paths.txt 2>&1
echo sweep done
