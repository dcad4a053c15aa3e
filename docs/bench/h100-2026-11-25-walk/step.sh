#!/usr/bin/env bash
# Issue 19: the ballot walk stepping by min(subgroup size, 32) splats (so that it stays exact for wider subgroups)
# (N5) against N3 (final2.sh) and B (ec40c7a); two rounds, the cameras of final.sh but x360.
set -u
mkdir -p /tmp/bin
xz -dc devbin/splatsort.xz > /tmp/bin/N5; xz -dc devbin/splatsort-n3.xz > /tmp/bin/N3; xz -dc devbin/splatsort-base.xz > /tmp/bin/B; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "^    |^      |pairs"; }
for round in 1 2; do
  for b in B N3 N5; do
    echo "== round $round: $b"
    for cam in cam_demo near inside; do echo "-- demo $cam"; bench $b --frames 50 --camera $C/$cam.json; done
    echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench $b --frames 50 --tile 18 --camera $C/cam_x18.json
    echo "-- x90 framed"; bench $b --frames 50 --tile 90 --camera $C/x90_framed.json
  done
done
echo done
