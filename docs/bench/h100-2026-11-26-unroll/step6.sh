#!/usr/bin/env bash
# Issue 17, steps 6-8 against U (unroll.sh): K = U with a keys-only digit pipeline (WITH_VALUES off);
# L = K with the values loaded after the keys are written (not with the keys); H = K with 32768-key histogram tiles.
set -u
mkdir -p /tmp/bin; for b in u k l h; do xz -dc devbin/splatsort-$b.xz > /tmp/bin/$b; done; chmod +x /tmp/bin/*
SB="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1"
SIZES=1048576,4194304,16777216,67108864
run() { echo "### $*"; "$@" 2>&1 | grep -E "onesweep sort|histogram  |span|rror" | sed -e 's/onesweep sort, 8 radix bits, [0-9]* key bits ([0-9]* iterations), uniform keys, //' | paste - - - | sed -e 's/: OK, matches a stable CPU sort[[:space:]]*histogram//; s/whole sort (span)//'; }
for round in 1 2; do
  for b in u k l h; do
    run /tmp/bin/$b $SB --n $SIZES
    run /tmp/bin/$b $SB --n $SIZES --keys-only
  done
done
for b in k l; do run /tmp/bin/$b $SB --n $SIZES --onesweep-tile 512x18; done
run /tmp/bin/k $SB --n $SIZES --onesweep-tile 512x18 --keys-only
for b in k l; do run /tmp/bin/$b $SB --n 16777216 --key-bits 16; run /tmp/bin/$b $SB --n 16777216 --key-type u64; run /tmp/bin/$b $SB --n 16777216 --key-type u64 --keys-only; done
echo done
