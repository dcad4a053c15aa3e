#!/usr/bin/env bash
# A real 5M-splat scene at 1920x1080, beside gsplat 1.5.3 (issue 40): "KARANGKIDUL KOTA SEMARANG 2" by Samuel Hiero
# (CC BY 4.0), one level of ten SOG v2 chunks (5_0 .. 5_9: 4,972,767 splats, SH degree 3, 88 MB) in
# github.com/CedricGuillemet/dump, whose lod-meta.json is missing. The scene stays out of the repository. Two steps:
#   DUMP=checkout OUT=dir [CHUNKS="0 1 ... 9"] bash docs/bench/karang.sh prepare
# copies the chunks into OUT and writes OUT/lod-meta.json, listing them as one level (splatsort opens it), and
#   SPLATSORT=path SCENE=OUT/lod-meta.json [DEVBIN=dir] bash docs/bench/karang.sh frames
# times the frame from above (framed), from a low aerial view and from a street (docs/bench/karang_*.json; the
# cameras were chosen on the whole level), and with DEVBIN (the anchors' gsplat_time.py and the gsplat 1.5.3 wheel,
# as docs/bench/gsplat_frames.sh takes them) gsplat at the same cameras, and the PSNR between the two images.
# The device carries 64 MiB: the ten chunks do not fit in one call. The chunks are split by height (0-4 above
# y = -0.07, 5-9 below), so a subset is not the scene; carry two halves in two calls back to back (ignored folders
# already on a warm machine stay there), or run on a machine that holds the whole folder.
set -u
case "${1:-}" in
prepare)
  D=${DUMP:?}/KARANGKIDUL_KOTA_SEMARANG_2
  O=${OUT:?}
  mkdir -p "$O"
  for i in ${CHUNKS:-0 1 2 3 4 5 6 7 8 9}; do cp -r "$D/5_$i" "$O/"; done
  python3 - "$O" <<'PY'
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
print(f"{out}/lod-meta.json: {len(chunks)} chunks, {total} splats")
PY
  ;;
frames)
  S=${SPLATSORT:?}
  SCENE=${SCENE:?}
  O=/tmp/karang
  mkdir -p "$O"
  "$S" render-bench "$SCENE" --frames 1 --width 1920 --height 1080 --save-camera "$O/framed.json" >/dev/null 2>&1
  cp docs/bench/karang_aerial.json "$O/aerial.json"
  cp docs/bench/karang_street.json "$O/street.json"
  if [ -n "${DEVBIN:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site "$DEVBIN"/gsplat-*.whl
    export PYTHONPATH=/tmp/site TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16
    "$S" convert "$SCENE" "$O/scene.ply" 2>&1 | tail -1
  fi
  for view in framed aerial street; do
    echo "== $view: splatsort"
    "$S" render-bench "$SCENE" --camera "$O/$view.json" --frames 50 --warmup-secs 2 --algorithm onesweep \
      --draw compute 2>&1 | grep -E "^    |^      |entries|rror"
    if [ -n "${DEVBIN:-}" ]; then
      "$S" render "$SCENE" --camera "$O/$view.json" --draw compute --algorithm onesweep --out "$O/splatsort_$view.png" \
        2>&1 | tail -1
      echo "== $view: gsplat 1.5.3"
      python3 "$DEVBIN/gsplat_time.py" "$O/scene.ply" "$O/$view.json" --out "$O" --iters 50 2>&1 |
        grep -E "gsplat|splats|rror"
      python3 - "$O/splatsort_$view.png" "$O/gsplat_$view.png" <<'PY'
import sys
import numpy as np
from PIL import Image
a, b = (np.asarray(Image.open(p).convert("RGB"), dtype=np.float64) for p in sys.argv[1:3])
mse = np.mean((a - b) ** 2)
print(f"PSNR {10 * np.log10(255 ** 2 / mse):.2f} dB" if mse > 0 else "PSNR inf (identical)")
PY
    fi
  done
  echo done
  ;;
*)
  echo "usage: bash docs/bench/karang.sh prepare|frames (see the comment at the top)" >&2
  exit 2
  ;;
esac
