#!/usr/bin/env bash
# Issue 20's table with N = 2afad24: the demo tiled x360 (20M), x720 (40M), x1440 (80M) (x1800, 100M: run.sh), framed by
# render-bench, compute path, in the compact and small layouts, and x360 in the full layout. onesweep, 24-bit
# depth keys, 1920x1080, medians of 20. Output in $OUT/sizes.txt.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort-n.xz > /tmp/bin/n; chmod +x /tmp/bin/n
S=assets/semarang_stadium_sh3.ply
{
  for copies in 360 720 1440; do for f in compact small; do
    echo "-- x$copies $f"
    /tmp/bin/n render-bench $S --algorithm onesweep --key-bits 24 --width 1920 --height 1080 --draw compute --gpu-format $f --frames 20 --warmup-secs 1 --tile $copies 2>&1
  done; done
  echo "-- x360 full"
  /tmp/bin/n render-bench $S --algorithm onesweep --key-bits 24 --width 1920 --height 1080 --draw compute --gpu-format full --frames 20 --warmup-secs 1 --tile 360 2>&1
} > $OUT/sizes.txt
grep -E "^--|frame \(span\)|pairs|GPU memory|upload|rror" $OUT/sizes.txt
