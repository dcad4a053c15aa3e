#!/usr/bin/env bash
# Depth-key bits for the renderer (issue 19, item 6), this session's final build (compact layout, hybrid emit):
# 32 (the default), 24 (three OneSweep digit passes instead of four) and 16, at issue 19's cameras. Frame (span),
# compute path, onesweep, 1920x1080, medians of 50, two rounds; then each image at 24 and 16 bits against 32 (PSNR).
set -u
mkdir -p /tmp/bin /tmp/png; xz -dc devbin/splatsort.xz > /tmp/bin/N; chmod +x /tmp/bin/N
S=assets/semarang_stadium_sh3.ply; C=devbin/cams
bench() { /tmp/bin/N render-bench "$@" --frames 50 --algorithm onesweep --draw compute 2>&1 | grep -E "  sort|frame \(span\)"; }
for round in 1 2; do
  for bits in 32 24 16; do
    echo "== round $round: $bits bits"
    for cam in cam_demo near inside; do echo "-- demo $cam"; bench $S --camera $C/$cam.json --key-bits $bits; done
    echo "-- x18 framed"; bench $S --tile 18 --camera $C/x18_framed.json --key-bits $bits
    echo "-- x90 framed"; bench $S --tile 90 --camera $C/x90_framed.json --key-bits $bits
  done
done
echo "== PSNR against 32 bits"
/tmp/bin/N tile $S /tmp/x18.ply --copies 18 > /dev/null 2>&1
for bits in 32 24 16; do
  for cam in cam_demo near inside; do /tmp/bin/N render $S --camera $C/$cam.json --key-bits $bits --draw compute --algorithm onesweep --out /tmp/png/$cam-$bits.png > /dev/null 2>&1; done
  /tmp/bin/N render /tmp/x18.ply --camera $C/x18_framed.json --key-bits $bits --draw compute --algorithm onesweep --out /tmp/png/x18-$bits.png > /dev/null 2>&1
done
for cam in cam_demo near inside x18; do for bits in 24 16; do python3 devbin/psnr.py /tmp/png/$cam-32.png /tmp/png/$cam-$bits.png; done; done
echo done
