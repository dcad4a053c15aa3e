#!/usr/bin/env bash
# Issue 19, call 5: two pixels per invocation written out (Q2: two named pixels, no per-thread arrays) against B.
set -u
mkdir -p /tmp/bin; for v in B Q2; do xz -dc devbin/s$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { "$@" --frames 50 --algorithm onesweep --draw compute 2>&1 | grep -E "  frame|rasterize|pairs"; }
for round in 1 2; do
  for v in B Q2; do
    echo "== round $round: $v"
    echo "-- demo 3/4";    bench /tmp/bin/$v render-bench $S --camera $C/cam_demo.json
    echo "-- inside";      bench /tmp/bin/$v render-bench $S --camera $C/inside.json
    echo "-- x18 framed";  bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/cam_x18.json
    echo "-- x90 framed";  bench /tmp/bin/$v render-bench $S --tile 90 --camera $C/x90_framed.json
  done
done
echo done
