#!/usr/bin/env bash
# Issue 19: the rasterizer's batch walked by subgroup ballots (N) against the walk over every splat (B, the build
# before: ec40c7a), at issue 19's cameras; two rounds interleaved. Compute path, onesweep, 24-bit depth keys,
# 1920x1080, medians of 50 frames (20 at x360).
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort.xz > /tmp/bin/N; xz -dc devbin/splatsort-base.xz > /tmp/bin/B; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { b=$1; shift; /tmp/bin/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 "$@" 2>&1 | grep -E "frame \(span\)|rasterize|tile sort|pairs"; }
for round in 1 2; do
  for b in B N; do
    echo "== round $round build $b"
    for cam in cam_demo near inside; do echo "-- demo $cam"; bench $b --frames 50 --camera $C/$cam.json; done
    echo "-- x18 framed"; bench $b --frames 50 --tile 18 --camera $C/x18_framed.json
    echo "-- x18 oblique"; bench $b --frames 50 --tile 18 --camera $C/cam_x18.json
    echo "-- x90 framed"; bench $b --frames 50 --tile 90 --camera $C/x90_framed.json
    echo "-- x360 framed"; bench $b --frames 20 --tile 360 --camera $C/x360_framed.json
  done
done
echo done
