#!/usr/bin/env bash
# The tile count pass with a check that the u32 scan of the counts cannot wrap (a coarse sum of the pairs in
# units of 1024, per workgroup): H = without it (the hybrid emit build), A = the workgroup sum by a shared atomic,
# T = by a tree in workgroup memory. Compact layout, compute path, onesweep, 1920x1080, two rounds.
set -u
mkdir -p /tmp/bin; for v in H:splatsort A:splatsort-atomic T:splatsort-tree; do xz -dc devbin/${v#*:}.xz > /tmp/bin/${v%%:*}; done; chmod +x /tmp/bin/*
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { "$@" --algorithm onesweep --draw compute --gpu-format compact 2>&1 | grep -E "frame \(span\)|tile count"; }
for round in 1 2; do
  for v in H A T; do
    echo "== round $round: $v"
    echo "-- demo inside"; bench /tmp/bin/$v render-bench $S --frames 50 --camera $C/inside.json
    echo "-- x18 framed"; bench /tmp/bin/$v render-bench $S --frames 50 --tile 18 --camera $C/x18_framed.json
    echo "-- x90 framed"; bench /tmp/bin/$v render-bench $S --frames 50 --tile 90 --camera $C/x90_framed.json
    echo "-- x360 framed"; bench /tmp/bin/$v render-bench $S --frames 20 --tile 360 --camera $C/x360_framed.json
  done
done
echo done
