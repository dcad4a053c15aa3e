#!/usr/bin/env bash
# The sort crate's README table in one call on the GPU machine: splatsort's OneSweep (`sort-bench`, pairs and keys
# only, 16-bit keys, u64 keys), CUB (cub_bench.cu, nvcc builds it there) and lampshade 0.13 (docs/bench/lampshade/,
# a bench binary built here), each the median of 30 whole-sort spans after a second of untimed sorts, every output checked. Run from the
# repository root:   SPLATSORT=path/to/splatsort LAMPSHADE=path/to/lampshade-bench ANCHORS=dir bash docs/bench/sort_anchors.sh
# (ANCHORS holds cub_bench.cu from ../shared/tools/anchors/.) The Vulkan peers (VRDX 0.5, Fuchsia) enter through
# their ratio to CUB from ../shared/tools/anchors/README.md.
set -u
S=${SPLATSORT:-splatsort}
L=${LAMPSHADE:-lampshade-bench}
A=${ANCHORS:-../shared/tools/anchors}
SIZES=1048576,4194304,16777216,67108864
echo "== splatsort onesweep: u32 keys + u32 values, then keys only"
"$S" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 --n $SIZES 2>&1 | grep -E "onesweep sort|span|rror"
"$S" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 --n $SIZES --keys-only 2>&1 | grep -E "onesweep sort|span|rror"
echo "== splatsort onesweep: 16-bit keys + values, u64 keys + values, u64 keys only"
"$S" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 --n $SIZES --key-bits 16 2>&1 | grep -E "onesweep sort|span|rror"
"$S" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 --n $SIZES --key-type u64 2>&1 | grep -E "onesweep sort|span|rror"
"$S" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 --n $SIZES --key-type u64 --keys-only 2>&1 | grep -E "onesweep sort|span|rror"
echo "== CUB"
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench "$A/cub_bench.cu" && /tmp/cub_bench 1048576 4194304 16777216 67108864
echo "== lampshade"
"$L" 20 22 24 26
echo done
