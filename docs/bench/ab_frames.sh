#!/usr/bin/env bash
# Two builds' frames side by side in one call on the GPU machine (docs/BENCHMARKS.md, "Fewer one-thread dispatches"
# and later sections): each view in turn for the base and the new build, two rounds, then 100M (ROUNDS_100M rounds,
# 2 by default), then, with SWEEP=1, where the ballot walk's f32 colours stop paying (the new build, its threshold
# at 0 and at 100000), then the two builds' images compared byte for byte. Run from the repository root:
#   BASE=path/to/base NEW=path/to/new REAL=dir [ROUNDS_100M=n] [SWEEP=1] bash docs/bench/ab_frames.sh
# REAL holds semarang_stadium_sh3.ply (../shared/scenes/) and the anchors' cam_demo.json and inside.json.
set -u
B=${BASE:?the base build}
N=${NEW:?the new build}
R=${REAL:-../shared/scenes}
P="$R/semarang_stadium_sh3.ply"
# One line a run: the frame's span and its stages (medians), and its entries.
stages() {
  awk '/frame \(span\)/{s=$3} /depth keys/{dk=$3} /^    sort /{so=$2} /tile bin/{tb=$3} /tile emit/{te=$3}
    /tile sort/{ts=$3} /tile ranges/{tr=$3} /rasterize/{ra=$2} /tile-splat entries/{e=$1} /rror/{print}
    END{printf "SPAN %s dk %s sort %s bin %s emit %s tsort %s ranges %s rast %s E %s\n", s, dk, so, tb, te, ts, tr, ra, e}'
}
run() {
  local label=$1 bin=$2
  shift 2
  echo "$label [$*] $("$bin" render-bench "$@" --algorithm onesweep --width 1920 --height 1080 --draw compute 2>&1 | stages)"
}
views=(
  "demo --frames 200 --warmup-secs 1"
  "demo --frames 200 --warmup-secs 1 --camera assets/cameras/inside.json"
  "demo --frames 100 --warmup-secs 1 --tile 10"
  "$P --frames 200 --warmup-secs 1 --camera $R/cam_demo.json"
  "$P --frames 200 --warmup-secs 1 --camera $R/inside.json"
  "$P --frames 50 --warmup-secs 1 --tile 90"
  "$P --frames 50 --warmup-secs 1 --tile 90 --camera docs/bench/x90_flipped.json"
  "demo --frames 100 --warmup-secs 1 --blend-order pixel"
)
"$N" render-bench demo --frames 100 --warmup-secs 2 --algorithm onesweep --width 1920 --height 1080 > /dev/null 2>&1
for r in 1 2; do
  for v in "${views[@]}"; do
    # shellcheck disable=SC2086
    run "r$r base " "$B" $v
    # shellcheck disable=SC2086
    run "r$r new  " "$N" $v
  done
done
for r in $(seq "${ROUNDS_100M:-2}"); do
  run "100M base" "$B" "$P" --frames 20 --warmup-secs 1 --tile 1800 --gpu-format small
  run "100M new " "$N" "$P" --frames 20 --warmup-secs 1 --tile 1800 --gpu-format small
done
[ "${SWEEP:-0}" = 1 ] && echo "== the ballot walk's f32 colours: f16 (0) against f32 (100000)"
[ "${SWEEP:-0}" = 1 ] && for v in "demo --frames 100 --warmup-secs 1 --tile 15" "demo --frames 100 --warmup-secs 1 --tile 20" \
  "demo --frames 100 --warmup-secs 1 --tile 30" "demo --frames 50 --warmup-secs 1 --tile 48" \
  "$P --frames 100 --warmup-secs 1 --tile 5" "$P --frames 100 --warmup-secs 1 --tile 10" \
  "$P --frames 100 --warmup-secs 1 --tile 15" "$P --frames 100 --warmup-secs 1 --tile 20" \
  "$P --frames 100 --warmup-secs 1 --tile 25" "$P --frames 50 --warmup-secs 1 --tile 30" \
  "$P --frames 50 --warmup-secs 1 --tile 60"; do
  # shellcheck disable=SC2086
  run "f16" "$N" $v --f32-colours-max-entries-per-tile 0
  # shellcheck disable=SC2086
  run "f32" "$N" $v --f32-colours-max-entries-per-tile 100000
done
echo "== images (compute path, onesweep): the base's and the new build's, byte for byte"
out=$(mktemp -d)
i=0
for v in "demo" "demo --camera assets/cameras/inside.json" "$P --camera $R/inside.json" "$P --camera $R/cam_demo.json" \
  "demo --blend-order pixel" "demo --width 1920 --height 1080"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  "$B" render $v --algorithm onesweep --draw compute --out "$out/b$i.png" > /dev/null 2>&1
  # shellcheck disable=SC2086
  "$N" render $v --algorithm onesweep --draw compute --out "$out/n$i.png" > /dev/null 2>&1
  if cmp -s "$out/b$i.png" "$out/n$i.png"; then echo "image $i [$v] identical"; else echo "image $i [$v] DIFFER"; fi
done
