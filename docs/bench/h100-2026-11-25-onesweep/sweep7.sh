#!/usr/bin/env bash
# Values staged beside the keys (new) against the previous build (prev), with VRDX, in one call.
set -u
B=devbin; O=$OUT
N=1048576,4194304,16777216,67108864
S="sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1.5"
{
for b in splatsort splatsort-prev splatsort splatsort-prev; do
  echo "== $b kv"; $B/$b $S --n $N
  echo "== $b keys-only"; $B/$b $S --n 1048576,4194304 --keys-only
done
} > $O/sorts.txt 2>&1
$B/vrdx_peer_bench --sizes 1048576,4194304 --iters 30 --heat-ms 1500 > $O/vrdx.txt 2>&1
echo done
