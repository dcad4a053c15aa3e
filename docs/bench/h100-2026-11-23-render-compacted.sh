#!/usr/bin/env bash
# Renders with visible-splat compaction (issue 8): the framed scene (all visible) and a corner view (most culled).
B=devbin/splatsort
S=assets/semarang_stadium_sh3.ply
for a in "--algorithm tutorial" "--algorithm tutorial --radix-bits 4 --key-bits 16" "--algorithm subgroup" "--algorithm subgroup --key-bits 16"; do
  $B render-bench $S --width 1920 --height 1080 --frames 50 $a
  $B render-bench $S --width 1920 --height 1080 --frames 50 --tile 18 $a
  $B render-bench $S --camera docs/bench/h100-2026-11-23-corner-camera.json --frames 50 --tile 18 $a
done > $OUT/render-compacted.txt 2>&1
$B sort-bench --algorithm subgroup --key-bits 32 --n 1000000,16000000 --repeat 20 > $OUT/subgroup-recheck.txt 2>&1
grep -E "splats \(|sort  |depth keys|frame  " $OUT/render-compacted.txt
grep -E "OK|MISMATCH|total" $OUT/subgroup-recheck.txt
