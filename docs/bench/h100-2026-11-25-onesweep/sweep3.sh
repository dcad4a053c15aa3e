#!/usr/bin/env bash
set -u
B=devbin; O=$OUT
S="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
N=65536,262144,1048576,4194304,16777216
{
echo "== default"; $B/splatsort $S --n $N
echo "== single pass"; SPLATSORT_SINGLE_PASS=1 $B/splatsort $S --n $N
echo "== no look-back"; SPLATSORT_OVERRIDES=EXPERIMENT=1 $B/splatsort $S --n $N
echo "== no look-back single"; SPLATSORT_SINGLE_PASS=1 SPLATSORT_OVERRIDES=EXPERIMENT=1 $B/splatsort $S --n $N
echo "== single keys-only"; SPLATSORT_SINGLE_PASS=1 $B/splatsort $S --n $N --keys-only
echo "== base single"; SPLATSORT_SINGLE_PASS=1 $B/splatsort-base $S --n 1048576
} > $O/sorts.txt 2>&1
$B/vrdx_peer_bench --sizes 65536,262144,1048576,4194304 --iters 30 --heat-ms 1500 > $O/vrdx.txt 2>&1
echo done
