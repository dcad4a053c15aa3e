#!/usr/bin/env bash
# Issue 19, final call 3: A = before issue 19 (ed773b7); F = this work (U4) with render-bench's frame span;
# F2 = F + the emit's positions found in workgroup memory. Compute path, onesweep, 1920x1080, medians of 50 frames,
# two rounds. "frame" = first pass start to last pass end with a timestamp pair around every pass; "frame (span)"
# (F and F2 only) = the frame recorded as the viewer records it, timed by two timestamps around it.
set -u
mkdir -p /tmp/bin; for v in A F F2; do xz -dc devbin/s$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { "$@" --frames 50 --algorithm onesweep --draw compute 2>&1 | grep -E " x[0-9]+ = |depth keys|  sort|  draw|frame|tile |rasterize|pairs"; }
for round in 1 2; do
  for v in A F F2; do
    echo "== round $round: $v"
    for cam in cam_demo near inside; do echo "-- demo $cam"; bench /tmp/bin/$v render-bench $S --camera $C/$cam.json; done
    echo "-- x18 framed";  bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/cam_x18.json
    echo "-- x90 framed";  bench /tmp/bin/$v render-bench $S --tile 90 --camera $C/x90_framed.json
  done
done
echo done
