#!/usr/bin/env bash
# Issue 19, call 10: F = the committed rasterizer (block masks, a uniform branch per splat); L = F with a list per
# pixel block built for each batch (a workgroup scan of per-block counts), so that a subgroup walks only the splats
# that touch its block. Compute path, onesweep, 1920x1080, medians of 50 frames, two rounds.
set -u
mkdir -p /tmp/bin; for v in F L; do xz -dc devbin/s$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { "$@" --frames 50 --algorithm onesweep --draw compute 2>&1 | grep -E "frame|tile |rasterize|pairs"; }
for round in 1 2; do
  for v in F L; do
    echo "== round $round: $v"
    for cam in cam_demo near inside; do echo "-- demo $cam"; bench /tmp/bin/$v render-bench $S --camera $C/$cam.json; done
    echo "-- x18 framed";  bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench /tmp/bin/$v render-bench $S --tile 18 --camera $C/cam_x18.json
    echo "-- x90 framed";  bench /tmp/bin/$v render-bench $S --tile 90 --camera $C/x90_framed.json
  done
done
echo done
