#!/usr/bin/env bash
# The H100 sweep for issue 12: the sort laboratory on the frame's own depth keys (render-bench --compare), every
# sort and radix width, the demo scene and the 1M and 5M grids at 1920x1080, 32- and 16-bit keys; one Chrome trace.
B=devbin/splatsort
S=assets/semarang_stadium_sh3.ply
C=tutorial:2,tutorial:4,tutorial:8,subgroup,onesweep
{
  $B render-bench $S --width 1920 --height 1080 --frames 100 --algorithm onesweep --compare $C --trace $OUT/trace-demo.json
  $B render-bench $S --width 1920 --height 1080 --frames 100 --algorithm onesweep --compare $C --tile 18
  $B render-bench $S --width 1920 --height 1080 --frames 100 --algorithm onesweep --compare $C --tile 18 --key-bits 16
  $B render-bench $S --width 1920 --height 1080 --frames 50 --algorithm onesweep --compare $C --tile 90
  $B render-bench $S --width 1920 --height 1080 --frames 100 --algorithm onesweep --compare $C --tile 18 --json > $OUT/compare-1m.json
} > $OUT/compare.txt 2>&1
echo sweep done
