#!/usr/bin/env bash
# Today's figures (the table at the top of docs/BENCHMARKS.md) in one call on the GPU machine: the OneSweep sort
# beside CUB, and frames of the demo scene and of the Semarang crop up to 100M splats. Run from the repository root:
#   SPLATSORT=path/to/splatsort REAL=dir ANCHORS=dir [KARANG=dir] bash docs/bench/today.sh
# REAL holds semarang_stadium_sh3.ply (../shared/scenes/) and the anchors' cam_demo.json and inside.json; ANCHORS
# holds cub_bench.cu (../shared/tools/anchors/; nvcc builds it there). x90_flipped.json is the Semarang crop x90's
# framed camera (`render-bench --save-camera`) turned upside down: the same splats, its densest tiles last.
set -u
S=${SPLATSORT:-splatsort}
R=${REAL:-../shared/scenes}
A=${ANCHORS:-../shared/tools/anchors}
SIZES=1048576,4194304,16777216,67108864
echo "== sorts: onesweep, u32 keys + u32 values, then keys only"
"$S" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 --n $SIZES 2>&1 | grep -E "onesweep sort|span|rror"
"$S" sort-bench --algorithm onesweep --repeat 30 --warmup-secs 1 --n $SIZES --keys-only 2>&1 | grep -E "onesweep sort|span|rror"
echo "== CUB"
nvcc -O3 -arch=sm_90 -o /tmp/cub_bench "$A/cub_bench.cu" && /tmp/cub_bench 1048576 4194304 16777216 67108864
keep() { grep -E "^    |^      |pairs|entries|GPU memory|upload| x[0-9]+ = |rror"; }
frame() { echo "== frame: $*"; "$S" render-bench "$@" --algorithm onesweep --width 1920 --height 1080 2>&1 | keep; }
frame demo --frames 200 --warmup-secs 2
frame demo --frames 200 --warmup-secs 2 --camera assets/cameras/inside.json
frame demo --frames 200 --warmup-secs 2 --tile 10
frame "$R/semarang_stadium_sh3.ply" --frames 200 --warmup-secs 2 --camera "$R/cam_demo.json"
frame "$R/semarang_stadium_sh3.ply" --frames 200 --warmup-secs 2 --camera "$R/inside.json"
frame "$R/semarang_stadium_sh3.ply" --frames 50 --warmup-secs 2 --tile 90
frame "$R/semarang_stadium_sh3.ply" --frames 50 --warmup-secs 2 --tile 90 --camera docs/bench/x90_flipped.json
frame "$R/semarang_stadium_sh3.ply" --frames 20 --warmup-secs 1 --tile 1800 --gpu-format small
# The per-pixel blend order (issue 39) against the splat order's frames above.
frame demo --frames 100 --warmup-secs 1 --blend-order pixel
frame "$R/semarang_stadium_sh3.ply" --frames 100 --warmup-secs 1 --camera "$R/cam_demo.json" --blend-order pixel
# The real 5M-splat scene (issue 40), where KARANG names a folder of its SOG chunks: "KARANGKIDUL KOTA SEMARANG 2"
# by Samuel Hiero (CC BY 4.0), the ten chunks 5_0 .. 5_9 of github.com/CedricGuillemet/dump's
# KARANGKIDUL_KOTA_SEMARANG_2 (4,972,767 splats, SH degree 3, 88 MB; never in the repository). That folder lacks the
# lod-meta.json that makes them one level: it is written here. The chunks are split by height, so all ten are needed
# (88 MB is past the 64 MiB a device call carries: two halves in two calls back to back on a warm machine).
if [ -n "${KARANG:-}" ]; then
  [ -f "$KARANG/lod-meta.json" ] || python3 - "$KARANG" <<'PY'
import json, os, sys
out = sys.argv[1]
chunks = sorted(d for d in os.listdir(out) if os.path.isfile(os.path.join(out, d, "meta.json")))
leaves = []
for i, name in enumerate(chunks):
    meta = json.load(open(os.path.join(out, name, "meta.json")))
    bound = {"min": meta["means"]["mins"], "max": meta["means"]["maxs"]}
    leaves.append({"bound": bound, "lods": {"0": {"file": i, "offset": 0, "count": meta["count"]}}})
def tree(nodes):
    if len(nodes) == 1:
        return nodes[0]
    a, b = tree(nodes[: len(nodes) // 2]), tree(nodes[len(nodes) // 2 :])
    lo = [min(x, y) for x, y in zip(a["bound"]["min"], b["bound"]["min"])]
    hi = [max(x, y) for x, y in zip(a["bound"]["max"], b["bound"]["max"])]
    return {"bound": {"min": lo, "max": hi}, "children": [a, b]}
total = sum(leaf["lods"]["0"]["count"] for leaf in leaves)
meta = {"version": 1, "lodLevels": 1, "counts": [total], "filenames": [c + "/meta.json" for c in chunks],
        "tree": tree(leaves)}
json.dump(meta, open(os.path.join(out, "lod-meta.json"), "w"))
PY
  frame "$KARANG/lod-meta.json" --frames 50 --warmup-secs 2
  frame "$KARANG/lod-meta.json" --frames 50 --warmup-secs 2 --camera docs/bench/karang_aerial.json
  frame "$KARANG/lod-meta.json" --frames 50 --warmup-secs 2 --camera docs/bench/karang_street.json
fi
echo done
