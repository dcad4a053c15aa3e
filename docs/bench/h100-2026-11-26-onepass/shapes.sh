#!/usr/bin/env bash
# Issue 17: tile shapes again with this session's digit pass (the ranking atomic without a branch): 2^20 and 2^24,
# pairs and keys only, span medians of 30.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort-n3.xz > /tmp/bin/N; chmod +x /tmp/bin/N
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1"
for shape in default 512x15 512x16 512x12 768x10 1024x8 1024x6 1024x4 256x15 384x16; do
  t=""; [ $shape != default ] && t="--onesweep-tile $shape"
  for ko in "" --keys-only; do
    echo "### $shape $ko"; /tmp/bin/N $SB --n 1048576,16777216 $t $ko 2>&1 | grep -E "onesweep sort|span|rror" | sed -e 's/onesweep sort, 8 radix bits, 32 key bits (4 iterations), uniform keys, //'
  done
done
echo done
