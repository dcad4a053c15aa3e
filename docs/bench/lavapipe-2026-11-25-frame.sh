#!/usr/bin/env bash
# Issue 19 on lavapipe (this machine): the compute path at 960x540 before (/tmp/sA, ed773b7) and after (/tmp/sF),
# the demo scene framed, 5 frames, alternating twice; and the quad path after, for the default's sake.
S=assets/semarang_stadium_sh3.ply
for round in 1 2; do
  for b in /tmp/sA /tmp/sF; do
    echo "== round $round: $b compute"
    $b render-bench $S --width 960 --height 540 --frames 5 --warmup-secs 1 --draw compute 2>&1 | grep -E "  frame|rasterize|tile |pairs|depth|  sort"
  done
done
echo "== after, quads"
/tmp/sF render-bench $S --width 960 --height 540 --frames 5 --warmup-secs 1 --draw raster 2>&1 | grep -E "  frame|draw|depth|  sort"
