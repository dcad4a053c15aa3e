#!/usr/bin/env bash
# Issue 17, step 3: N4 = b18fa93 (512 x 16 past 640K keys); N5a = N4 with up to 24 keys per thread (tiles of up to
# 48 KiB: 512 x 17, 512 x 18, 384 x 23, 384 x 24 tried by --onesweep-tile); N5b = N5a with no branch when a key is
# placed in the tile and its values staged (a key past a partial tile's end goes to its own position).
set -u
mkdir -p /tmp/bin; for b in n4 n5a n5b; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|span|rror" | sed -e 's/onesweep sort, 8 radix bits, 32 key bits (4 iterations), uniform keys, //' | paste - - | sed -e 's/: OK, matches a stable CPU sort[[:space:]]*whole sort (span)//'; }
for round in 1 2; do
  for b in n4 n5a n5b; do
    run /tmp/bin/$b $SB --n $SIZES
    run /tmp/bin/$b $SB --n $SIZES --keys-only
  done
done
for b in n5a n5b; do
  for shape in 512x17 512x18 384x23 384x24 384x20; do
    run /tmp/bin/$b $SB --n $SIZES --onesweep-tile $shape
    run /tmp/bin/$b $SB --n 16777216 --onesweep-tile $shape --keys-only
  done
done
echo done
