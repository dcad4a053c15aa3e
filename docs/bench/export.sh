#!/usr/bin/env bash
# Camera-path export on the GPU machine (docs/BENCHMARKS.md, "Camera paths"): `render --orbit 4 --fps 30` at 1920x1080
# (120 frames), as PNG frames and as an MP4, for the demo scene and the demo x10 (1.03M splats), with the time a frame
# takes on each side (the command's own second line), the wall and CPU time, and the output's size. Run from the
# repository root:   SPLATSORT=path/to/splatsort bash docs/bench/export.sh
set -u
S=${SPLATSORT:-splatsort}
OUT=${OUT:-/tmp/splatsort-export}
mkdir -p "$OUT"
echo "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
"$S" tile --copies 10 demo "$OUT/d10.ply" >/dev/null 2>&1
timed() { if [ -x /usr/bin/time ]; then /usr/bin/time -f "  %e s wall, %P CPU" "$@"; else "$@"; fi; }
for scene in demo "$OUT/d10.ply"; do
  for out in "$OUT/fly.mp4" "$OUT/frames"; do
    rm -rf "$out"
    echo "== $scene -> $(basename "$out")"
    timed "$S" render "$scene" --orbit 4 --fps 30 --width 1920 --height 1080 --algorithm onesweep --out "$out" 2>&1 \
      | grep -vE "^\[OpenH264\]|INFO"
    du -sh "$out" | sed 's/^/  /'
  done
done
echo done
