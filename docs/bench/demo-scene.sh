#!/usr/bin/env bash
# The procedural demo scene beside the Semarang crop it replaced, at 1080p on the GPU (issue 35's figures in
# docs/BENCHMARKS.md). Run from the repository root on the GPU machine:
#   SPLATSORT=path/to/splatsort REAL=dir/with/semarang_stadium_sh3.ply,cam_demo.json,inside.json bash docs/bench/demo-scene.sh
# (the real scene and its cameras: ../shared/scenes/ and ../shared/tools/anchors/cameras/, copied beside the binary).
set -euo pipefail
S=${SPLATSORT:-splatsort}
R=${REAL:-../shared}
bench() { echo "== $*"; "$S" render-bench "$@" --width 1920 --height 1080 --algorithm onesweep --frames 200 --warmup-secs 2; }
"$S" demo
bench demo
bench demo --camera assets/cameras/inside.json
bench demo --camera assets/cameras/glass.json
bench demo --tile 10
bench "$R/semarang_stadium_sh3.ply" --camera "$R/cam_demo.json"
bench "$R/semarang_stadium_sh3.ply" --camera "$R/inside.json"
bench "$R/semarang_stadium_sh3.ply" --tile 18
