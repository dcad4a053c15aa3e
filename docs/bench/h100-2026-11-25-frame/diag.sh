#!/usr/bin/env bash
# Issue 19, call 3: where the rasterizer's time goes. B = the committed rasterizer; V2 = B without the block masks
# (every pixel tests every splat of its tile); V9 = B without the per-pixel loop (only the batch loads; a wrong image,
# for timing only). Compute path, onesweep, 1920x1080, medians of 50 frames, two rounds.
set -u
mkdir -p /tmp/bin; for v in B V2 V9; do xz -dc devbin/s$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { "$@" --frames 50 --algorithm onesweep --draw compute 2>&1 | grep -E "  frame|rasterize|pairs"; }
for round in 1 2; do
  for v in B V2 V9; do
    echo "== round $round: $v"
    echo "-- demo 3/4";    bench /tmp/bin/$v render-bench $S --camera $C/cam_demo.json
    echo "-- inside";      bench /tmp/bin/$v render-bench $S --camera $C/inside.json
    echo "-- x18 framed";  bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/x18_framed.json
    echo "-- x90 framed";  bench /tmp/bin/$v render-bench $S --tile 90 --camera $C/x90_framed.json
  done
done
echo done
