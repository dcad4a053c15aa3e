#!/usr/bin/env bash
# Issue 21: load time of the demo tiled x18 (1,000,782 splats) in each format, before (/tmp/sA, ed773b7) and after
# (/tmp/sN), `splatsort info`'s load time, the two builds alternating, five rounds. Files made by the new build:
# tile --copies 18, then convert to each format (SPZ v4 and v3, compressed PLY, .splat).
cd /tmp/fmt
for round in 1 2 3 4 5; do
  for f in x18.ply x18.spz x18v3.spz x18.compressed.ply x18.splat; do
    for b in /tmp/sA /tmp/sN; do
      echo "$round $f $(basename $b) $($b info $f 2>/dev/null | grep 'load time' | awk '{print $3}')"
    done
  done
done
