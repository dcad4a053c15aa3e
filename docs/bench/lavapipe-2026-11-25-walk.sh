#!/usr/bin/env bash
# Issue 19 on lavapipe (this machine, 2 cores): the compute path at 960x540 before (/tmp/sB, ec40c7a) and after
# (/tmp/sN3: the ballot walk, one emit kernel, no transfers between passes), the demo scene framed (4.3 pairs per
# visible splat: the ballot walk), 5 frames, alternating twice.
S=assets/semarang_stadium_sh3.ply
for round in 1 2; do
  for b in /tmp/sB /tmp/sN3; do
    echo "== round $round: $b compute"
    $b render-bench $S --width 960 --height 540 --frames 5 --warmup-secs 1 --draw compute 2>&1 | grep -E "  frame|rasterize|tile |pairs|depth|  sort"
  done
done
