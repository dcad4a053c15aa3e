#!/usr/bin/env bash
# Issue 19's emit pass, A/B in one call: P = one thread per pair finding its position by binary search in the
# scanned counts (as before), H = the hybrid: the prepare pass picks a thread per position at up to 3 pairs per visible splat, else a thread per pair. Both in the compact
# layout, compute path, onesweep, 1920x1080, medians of 50 frames (x360: 20), two rounds interleaved. "tile scan" is
# the scan of the counts, the one-thread prepare and the emit.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort-pairemit.xz > /tmp/bin/P; xz -dc devbin/splatsort.xz > /tmp/bin/H; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { "$@" --algorithm onesweep --draw compute --gpu-format compact 2>&1 | grep -E "depth keys|  sort|frame|tile |rasterize|pairs"; }
for round in 1 2; do
  for v in P H; do
    echo "== round $round: $v"
    for cam in cam_demo near inside; do echo "-- demo $cam"; bench /tmp/bin/$v render-bench $S --frames 50 --camera $C/$cam.json; done
    echo "-- x18 framed";  bench /tmp/bin/$v render-bench $S --frames 50 --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench /tmp/bin/$v render-bench $S --frames 50 --tile 18 --camera $C/cam_x18.json
    echo "-- x90 framed";  bench /tmp/bin/$v render-bench $S --frames 50 --tile 90 --camera $C/x90_framed.json
    echo "-- x360 framed"; bench /tmp/bin/$v render-bench $S --frames 20 --tile 360 --camera $C/x360_framed.json
  done
done
echo done
