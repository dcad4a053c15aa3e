#!/usr/bin/env bash
# Issue 17, step 10: A (step9.sh) at the shapes its freed workgroup memory allows, to choose the defaults by size:
# pairs and keys only from 0.75M to 2^26 keys.
set -u
mkdir -p /tmp/bin; for b in a; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1"
MID=786432,1048576,1310720,1572864,2097152,3145728,4194304
BIG=8388608,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|histogram  |span|rror" | sed -e 's/onesweep sort, 8 radix bits, [0-9]* key bits ([0-9]* iterations), uniform keys, //' | paste - - - | sed -e 's/: OK, matches a stable CPU sort[[:space:]]*histogram//; s/whole sort (span)//'; }
for shape in 1024x4 512x16 1024x8 768x10 768x14 1024x11; do run /tmp/bin/a $SB --n $MID --onesweep-tile $shape; done
for shape in 768x14 640x17 896x12 1024x11; do run /tmp/bin/a $SB --n $BIG --onesweep-tile $shape; done
for shape in 768x14 640x17 1024x11 1024x8; do run /tmp/bin/a $SB --n 1048576,4194304,$BIG --onesweep-tile $shape --keys-only; done
run /tmp/bin/a $SB --n 16777216 --key-bits 16 --onesweep-tile 768x14
run /tmp/bin/a $SB --n 16777216 --key-type u64 --onesweep-tile 768x14
run /tmp/bin/a $SB --n 16777216 --key-type u64 --onesweep-tile 768x14 --keys-only
echo done
