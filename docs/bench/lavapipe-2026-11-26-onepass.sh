#!/usr/bin/env bash
# lavapipe (this machine, 2 cores): B = f2d1644 against N6 (this session's final build), alternating twice: the
# compute path's frame at 960x540 (demo, framed), and OneSweep on 1M keys. B and N6 are release builds stripped
# into /tmp/b and /tmp/n6.
set -u
S=assets/semarang_stadium_sh3.ply
for round in 1 2; do
  for b in b n6; do
    echo "== round $round: $b"
    /tmp/$b render-bench $S --algorithm onesweep --draw compute --key-bits 24 --width 960 --height 540 --frames 5 --warmup-secs 0 2>&1 | grep -E "frame \(span\)|^    frame "
    /tmp/$b sort-bench --algorithm onesweep --n 1000000 --repeat 7 --warmup-secs 1 2>&1 | grep -E "onesweep sort|span"
  done
done
# Then the sort alone, three more alternations (the spread above is wide).
for round in 3 4 5; do
  for b in b n6; do
    echo "== sort round $round: $b"
    /tmp/$b sort-bench --algorithm onesweep --n 1000000 --repeat 7 --warmup-secs 1 2>&1 | grep -E "span"
  done
done
