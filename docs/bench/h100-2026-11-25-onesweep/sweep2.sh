#!/usr/bin/env bash
set -u
B=devbin; O=$OUT
S="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
{
echo "== new kv"; $B/splatsort $S --n 1048576,4194304,16777216,67108864
echo "== new keys-only"; $B/splatsort $S --n 1048576,4194304,16777216 --keys-only
for o in LOOKBACK_WINDOW=1 LOOKBACK_WINDOW=4 LOOKBACK_WINDOW=16 EARLY_VALUES=0; do echo "== $o"; SPLATSORT_OVERRIDES=$o $B/splatsort $S --n 1048576,4194304,16777216; done
for t in 256x15 512x12 256x8 512x8 256x12; do echo "== tile $t"; $B/splatsort $S --n 1048576,4194304,16777216 --onesweep-tile $t; done
for t in 256x8 512x8; do echo "== tile $t EARLY_VALUES=0"; SPLATSORT_OVERRIDES=EARLY_VALUES=0 $B/splatsort $S --n 1048576,4194304,16777216 --onesweep-tile $t; done
} > $O/sorts.txt 2>&1
$B/vrdx_peer_bench --sizes 1048576,4194304,16777216 --iters 30 --heat-ms 1500 > $O/vrdx.txt 2>&1
echo done
