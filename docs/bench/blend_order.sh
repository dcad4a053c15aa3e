#!/usr/bin/env bash
# The blend orders on the GPU machine (docs/BENCHMARKS.md, "Three words a held splat", "Each tile's list by its own
# floor", "The pixel order's window in registers" and "Blend orders"; today's table's pixel-order rows): each order's
# frame at 1080p at the four views and the Semarang crop's (the pixel order at windows 8 to 16), and popping
# turning and yawing on the demo and the real captures. Run from the repository root:
#   SPLATSORT=path/to/splatsort REAL=dir bash docs/bench/blend_order.sh
# REAL holds semarang_stadium_sh3.ply, semarang_holdout_sh3.ply (../shared/scenes/ and its more/), cam_demo.json and
# inside.json (../shared/tools/anchors/) and holdout_low.json (docs/bench/holdout_low.json).
set -u
S=${SPLATSORT:-splatsort}
R=${REAL:-../shared/scenes}
keep() { grep -E "^    frame|rasterize|entries|x[0-9]+ = |rror"; }
frame() { echo "== frame: $*"; "$S" render-bench "$@" --algorithm onesweep --width 1920 --height 1080 --draw compute 2>&1 | keep; }
crop="$R/semarang_stadium_sh3.ply"
for view in "demo" "demo --camera assets/cameras/inside.json" "demo --tile 10" "demo --tile 48" \
  "$crop --camera $R/cam_demo.json" "$crop --camera $R/inside.json" "$crop --tile 90"; do
  # shellcheck disable=SC2086
  frame $view --frames 100 --warmup-secs 1 --blend-order splat
  for window in 8 12 16; do
    # shellcheck disable=SC2086
    frame $view --frames 100 --warmup-secs 1 --blend-order pixel --blend-window $window
  done
  # shellcheck disable=SC2086
  frame $view --frames 20 --warmup-secs 1 --blend-order exact
done
pop() { echo "== popping: $*"; "$S" popping "$@" --algorithm onesweep --frames 30 2>&1 | grep -vE "INFO|^\s*$"; }
pop demo --orbit turn --width 1920 --height 1080
pop demo --orbit yaw --camera assets/cameras/low_angle.json
pop "$R/semarang_stadium_sh3.ply" --orbit turn --camera "$R/cam_demo.json"
pop "$R/semarang_holdout_sh3.ply" --orbit yaw --camera "$R/holdout_low.json"
pop "$R/semarang_holdout_sh3.ply" --orbit turn --camera "$R/holdout_low.json"
echo done
