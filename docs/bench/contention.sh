#!/usr/bin/env bash
# OneSweep on a CPU driver beside busy processes (the lavapipe table of docs/BENCHMARKS.md, issue 37): the whole
# `sort-bench` command's seconds at 1M, 4M and 16M keys beside 0, 2, 4 and 6 processes that spin, then a 4-slot
# ring and the forced fallback at 16M. Run from the repository root on a machine without a GPU:
#   SPLATSORT=target/release/splatsort bash docs/bench/contention.sh
set -u
S=${SPLATSORT:-target/release/splatsort}
run() {
  local busy=$1 n=$2; shift 2
  local pids=()
  for _ in $(seq 1 "$busy"); do (while :; do :; done) & pids+=($!); done
  local start end
  start=$(date +%s.%N)
  if timeout 300 "$S" sort-bench --algorithm onesweep --repeat 1 --warmup-secs 0 --n "$n" "$@" > /tmp/contention.out 2>&1; then
    end=$(date +%s.%N)
    echo "busy=$busy n=$n $*: $(echo "$end - $start" | bc) s; $(grep -o 'last sort: .*' /tmp/contention.out)"
  else
    echo "busy=$busy n=$n $*: failed or past 300 s"
  fi
  kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null
}
for n in 1048576 4194304 16777216; do
  for busy in 0 2 4 6; do run $busy $n; done
done
for busy in 0 6; do
  run $busy 16777216 --status-entries 4
  run $busy 16777216 --force-fallback
done
