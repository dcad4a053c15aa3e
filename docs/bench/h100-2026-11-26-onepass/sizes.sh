#!/usr/bin/env bash
# Issue 17: 512 x 16 against today's choice (1024 x 4 up to 1.5M keys, 512 x 15 above) over sizes from 2^18 to
# 2^26, pairs and keys only, span medians of 30.
set -u
mkdir -p /tmp/bin; xz -dc devbin/splatsort-n3.xz > /tmp/bin/N; chmod +x /tmp/bin/N
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1"
SIZES=262144,524288,786432,1000782,1048576,1310720,1572864,2097152,3145728,4194304,6291456,16777216,67108864
for shape in 512x16 1024x4 512x15; do
  for ko in "" --keys-only; do
    echo "### $shape $ko"; /tmp/bin/N $SB --n $SIZES --onesweep-tile $shape $ko 2>&1 | grep -E "onesweep sort|span|rror" | sed -e 's/onesweep sort, 8 radix bits, 32 key bits (4 iterations), uniform keys, //' | paste - - | sed -e 's/: OK, matches a stable CPU sort[[:space:]]*whole sort (span)//'
  done
done
echo done
