#!/usr/bin/env bash
# Issue 19, call 2: the rasterizer's tile order. B = the ellipse binning and the new rasterizer with coverage
# alpha >= 1/255 (commit "Coverage is alpha >= 1/255 exactly"); C = B + heaviest tiles first (`tile_order`).
# A = the build before issue 19 (ed773b7). Compute path, onesweep, 1920x1080, medians of 50 frames, two rounds.
set -u
mkdir -p /tmp/bin; for v in A B C; do xz -dc devbin/s$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { "$@" --frames 50 --algorithm onesweep --draw compute 2>&1 | grep -E "  frame|tile |rasterize|pairs"; }
/tmp/bin/C render-bench $S --tile 90 --width 1920 --height 1080 --frames 1 --save-camera $C/x90_framed.json > /dev/null 2>&1
for round in 1 2; do
  for v in A B C; do
    echo "== round $round: $v"
    echo "-- demo 3/4";    bench /tmp/bin/$v render-bench $S --camera $C/cam_demo.json
    echo "-- inside";      bench /tmp/bin/$v render-bench $S --camera $C/inside.json
    echo "-- x18 framed";  bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/cam_x18.json
    echo "-- x90 framed";  bench /tmp/bin/$v render-bench $S --tile 90 --camera $C/x90_framed.json
  done
done
cp $C/x90_framed.json $OUT/
echo done
