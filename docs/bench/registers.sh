#!/usr/bin/env bash
# Registers and workgroup memory of the GPU passes, as the driver compiled them (the vkstats layer prints each
# compute pipeline's VK_KHR_pipeline_executable_properties statistics; wgpu does not expose them). Build the layer
# here (cd docs/bench/vkstats && cargo build --release), put libvkstats.so beside VkLayer_splatsort_stats.json in a
# folder that travels (LAYER), and run on the GPU machine from the repository root:
#   SPLATSORT=path/to/splatsort LAYER=dir REAL=dir bash docs/bench/registers.sh
# REAL holds semarang_stadium_sh3.ply (../shared/scenes/). Pipelines are numbered in the order the program makes
# them; naga names most entry points `main`, so the renderer's are told apart by that order (docs/BENCHMARKS.md).
# Each OneSweep tile shape is also timed (sort-bench span medians, every output checked). With VKSTATS_IR=dir set,
# the layer also writes each pipeline's internal representations (the driver's compiled code, where it gives them).
set -u
S=${SPLATSORT:-splatsort}
R=${REAL:-../shared/scenes}
export VK_LAYER_PATH=${LAYER:-docs/bench/vkstats} VK_INSTANCE_LAYERS=VK_LAYER_SPLATSORT_stats
short() { sed 's/vkstats: //; s/\[Binary Size=[0-9]*\] //; s/\[Stack Size=[0-9]*\] //; s/\[Local Memory Size=[0-9]*\] //; s/ exe 0 .CS. subgroup 32://'; }
echo "== the renderer's pipelines (demo scene, compute path, splat and pixel orders)"
"$S" render-bench demo --frames 5 --warmup-secs 0 --algorithm onesweep --width 1920 --height 1080 --draw compute 2>&1 | grep vkstats | short
echo "== OneSweep digit pass per tile shape: registers, workgroup memory, the sort's span"
run() { echo "-- $*"; "$S" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 "$@" 2>&1 | grep -E "entry digit_pass|whole sort|rror|FAIL" | short; }
for s in 768x14 896x12 512x10 512x9 512x11 512x8 384x14 384x16 384x18 384x20 256x14 256x16 1024x4 1024x6; do
  run --n 16777216 --onesweep-tile $s
done
for s in 1024x11 768x10 512x11 512x14 384x20; do run --n 16777216 --keys-only --onesweep-tile $s; done
for s in 768x14 512x10; do
  run --n 4194304 --onesweep-tile $s
  run --n 67108864 --onesweep-tile $s
  run --n 16777216 --key-type u64 --onesweep-tile $s
done
run --n 4194304 --onesweep-tile 1024x4
echo "== the renderer's depth sort at 5M splats, each shape"
for s in 768x14 512x10; do
  echo "-- $s"
  "$S" render-bench "$R/semarang_stadium_sh3.ply" --tile 90 --frames 40 --warmup-secs 1 --onesweep-tile $s \
    --algorithm onesweep --width 1920 --height 1080 --draw compute 2>&1 | grep -E "frame \(span\)|  sort |tile sort|rror"
done
