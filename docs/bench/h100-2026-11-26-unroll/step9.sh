#!/usr/bin/env bash
# Issue 17, step 9: K = 9b3cd99 (unrolled loops, keys-only pipeline); A = K with the per-subgroup counts and the tile
# in one workgroup array (the counts are read into each key's position before the keys overwrite them), which
# frees 8 KiB on the H100 for bigger tiles. A at several tile shapes.
set -u
mkdir -p /tmp/bin; for b in k a; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|histogram  |span|rror" | sed -e 's/onesweep sort, 8 radix bits, [0-9]* key bits ([0-9]* iterations), uniform keys, //' | paste - - - | sed -e 's/: OK, matches a stable CPU sort[[:space:]]*histogram//; s/whole sort (span)//'; }
run /tmp/bin/k $SB --n $SIZES
run /tmp/bin/k $SB --n $SIZES --keys-only
for shape in 512x16 512x18 512x20 512x22; do run /tmp/bin/a $SB --n $SIZES --onesweep-tile $shape; done
for shape in 512x18 512x20 512x22; do run /tmp/bin/a $SB --n $SIZES --onesweep-tile $shape --keys-only; done
for shape in 1024x8 1024x11 768x14 384x24; do run /tmp/bin/a $SB --n $SIZES --onesweep-tile $shape; done
run /tmp/bin/a $SB --n 16777216 --key-bits 16 --onesweep-tile 512x20
run /tmp/bin/a $SB --n 16777216 --key-type u64 --onesweep-tile 512x20
run /tmp/bin/k $SB --n $SIZES --onesweep-tile 512x18
echo done
