#!/usr/bin/env bash
# Issue 18: the workspace and the pipelines made once per device (splatsort) against the build before them
# (splatsort-before, commit 26595be): sort-bench at 2^24 for each algorithm (and OneSweep at 2^20), render-bench on
# the demo and the demo x18 at 1080p, interleaved twice so clock drift shows.
set -u
B=devbin/splatsort-before
N=devbin/splatsort
run() { echo "### $*"; "$@" 2>&1 | grep -E " sort|span|^    total|error|differ|MISMATCH"; }
for round in 1 2; do
  for b in $B $N; do
    run $b sort-bench --algorithm tutorial --n 16777216 --repeat 30 --warmup-secs 1.5
    run $b sort-bench --algorithm subgroup --n 16777216 --repeat 30 --warmup-secs 1.5
    run $b sort-bench --algorithm onesweep --n 1048576,16777216 --repeat 30 --warmup-secs 1.5
  done
done
for round in 1 2; do
  for b in $B $N; do
    echo "### $b render-bench demo"
    $b render-bench assets/semarang_stadium_sh3.ply --width 1920 --height 1080 --frames 50 --algorithm onesweep 2>&1 | tail -22
    echo "### $b render-bench x18"
    $b render-bench assets/semarang_stadium_sh3.ply --width 1920 --height 1080 --frames 50 --tile 18 --algorithm onesweep 2>&1 | tail -22
  done
done
