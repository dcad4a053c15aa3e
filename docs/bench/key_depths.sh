#!/usr/bin/env bash
# Depth keys over the scene's depths (docs/BENCHMARKS.md, fourteenth session) in one call on the GPU machine: a build
# that keys over the camera's near and far (BASE, at 24 bits, the old default) beside one that keys over the
# scene's depths (NEW, at 24 and 16 bits), each view in turn, two rounds, then 100M once each; then images at
# 1920x1080 against BASE at 32 bits (PSNR, docs/bench/psnr.py: Python with numpy and Pillow), and the pixel order's
# images of the two builds byte for byte. Run from the repository root:
#   BASE=path/to/base NEW=path/to/new REAL=dir bash docs/bench/key_depths.sh
# REAL holds semarang_stadium_sh3.ply (../shared/scenes/) and the anchors' cam_demo.json and inside.json.
set -u
B=${BASE:?the base build}
N=${NEW:?the new build}
R=${REAL:-../shared/scenes}
P="$R/semarang_stadium_sh3.ply"
stages() {
  awk '/frame \(span\)/{s=$3} /depth keys/{dk=$3} /^    sort /{so=$2} /tile bin/{tb=$3} /tile emit/{te=$3}
    /tile sort/{ts=$3} /tile ranges/{tr=$3} /rasterize/{ra=$2} /rror/{print}
    END{printf "SPAN %s dk %s sort %s bin %s tsort %s ranges %s rast %s\n", s, dk, so, tb, ts, tr, ra}'
}
run() { local label=$1 bin=$2; shift 2
  echo "$label [$*] $("$bin" render-bench "$@" --algorithm onesweep --width 1920 --height 1080 --draw compute 2>&1 | stages)"; }
views=(
  "demo --frames 200 --warmup-secs 1"
  "demo --frames 200 --warmup-secs 1 --camera assets/cameras/inside.json"
  "demo --frames 100 --warmup-secs 1 --tile 10"
  "$P --frames 200 --warmup-secs 1 --camera $R/cam_demo.json"
  "$P --frames 200 --warmup-secs 1 --camera $R/inside.json"
  "$P --frames 50 --warmup-secs 1 --tile 90"
  "$P --frames 50 --warmup-secs 1 --tile 90 --camera docs/bench/x90_flipped.json"
  "demo --frames 100 --warmup-secs 1 --blend-order pixel"
  "$P --frames 50 --warmup-secs 1 --camera $R/inside.json --blend-order pixel"
)
$N render-bench demo --frames 100 --warmup-secs 2 --algorithm onesweep --width 1920 --height 1080 > /dev/null 2>&1
for r in 1 2; do
  for v in "${views[@]}"; do
    run "r$r base24" $B $v --key-bits 24
    run "r$r new24 " $N $v --key-bits 24
    run "r$r new16 " $N $v --key-bits 16
  done
done
run "100M base24" $B $P --frames 20 --warmup-secs 1 --tile 1800 --gpu-format small --key-bits 24
run "100M new24 " $N $P --frames 20 --warmup-secs 1 --tile 1800 --gpu-format small --key-bits 24
run "100M new16 " $N $P --frames 20 --warmup-secs 1 --tile 1800 --gpu-format small --key-bits 16
echo "== images at 1920x1080 against the base at 32 bits (PSNR)"
$N tile --copies 10 demo /tmp/x10.ply > /dev/null 2>&1
$N tile --copies 90 $P /tmp/x90.ply > /dev/null 2>&1
o=/tmp/img; mkdir -p $o; i=0
for v in "demo --width 1920 --height 1080" "demo --camera assets/cameras/inside.json" "/tmp/x10.ply --width 1920 --height 1080" \
  "$P --camera $R/cam_demo.json" "$P --camera $R/inside.json" "/tmp/x90.ply --width 1920 --height 1080" \
  "/tmp/x90.ply --camera docs/bench/x90_flipped.json"; do
  i=$((i + 1))
  $B render $v --algorithm onesweep --draw compute --key-bits 32 --out $o/v${i}_b32.png > /dev/null 2>&1
  $B render $v --algorithm onesweep --draw compute --key-bits 24 --out $o/v${i}_b24.png > /dev/null 2>&1
  $N render $v --algorithm onesweep --draw compute --key-bits 24 --out $o/v${i}_n24.png > /dev/null 2>&1
  $N render $v --algorithm onesweep --draw compute --key-bits 16 --out $o/v${i}_n16.png > /dev/null 2>&1
  $N render $v --algorithm onesweep --draw compute --key-bits 32 --out $o/v${i}_n32.png > /dev/null 2>&1
  $B render $v --algorithm onesweep --draw compute --key-bits 24 --blend-order pixel --out $o/p${i}_b.png > /dev/null 2>&1
  $N render $v --algorithm onesweep --draw compute --key-bits 16 --blend-order pixel --out $o/p${i}_n.png > /dev/null 2>&1
  cmp -s $o/p${i}_b.png $o/p${i}_n.png && echo "pixel order $i identical" || echo "pixel order $i DIFFER"
  echo "image $i [$v]"; python3 docs/bench/psnr.py $o/v${i}_b32.png $o/v${i}_b24.png $o/v${i}_n24.png $o/v${i}_n16.png $o/v${i}_n32.png
done
