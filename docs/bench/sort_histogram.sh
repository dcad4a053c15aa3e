#!/usr/bin/env bash
# OneSweep's histogram tile (issue 42; docs/BENCHMARKS.md): builds that differ only in HISTOGRAM_TILE, each sorting
# u32 pairs and keys only at 2^20 to 2^26, two rounds. Run from the repository root on the GPU machine:
#   BASE=path H16384=path H32768=path bash docs/bench/sort_histogram.sh
set -u
declare -A BIN=([base]=${BASE:?} [h16384]=${H16384:?} [h32768]=${H32768:?})
SIZES=1048576,4194304,16777216,67108864
for round in 1 2; do
  for b in base h16384 h32768; do
    for mode in "" "--keys-only"; do
      echo "== $b $mode"
      # shellcheck disable=SC2086
      "${BIN[$b]}" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 --n $SIZES $mode 2>&1 |
        grep -E "OK|MISMATCH|rror|span|histogram"
    done
  done
done
