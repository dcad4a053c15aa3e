#!/usr/bin/env bash
# splatsort's frame beside gsplat 1.5.3 in one call (issues 40 and 39; docs/BENCHMARKS.md, "Beside gsplat"): the
# Semarang crop at the anchors' two cameras and tiled x18 / x90 at their framed views, each timed by both renderers
# at 1920x1080, and the PSNR between their images. Run from the repository root on the GPU machine:
#   SPLATSORT=path DEVBIN=dir OUT=dir [KARANG=dir] bash docs/bench/gsplat_frames.sh
# DEVBIN holds semarang_stadium_sh3.ply (../shared/scenes/), the anchors' cam_demo.json, inside.json and
# gsplat_time.py (../shared/tools/anchors/), and the gsplat 1.5.3 wheel (`pip download --no-deps gsplat==1.5.3`).
set -u
S=${SPLATSORT:?}
D=${DEVBIN:?}
O=${OUT:-/tmp/gsplat_frames}
T=/tmp/gsplat_scenes
mkdir -p "$O" "$T"
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$D"/gsplat-*.whl
export PYTHONPATH=/tmp/site TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16
cp "$D/semarang_stadium_sh3.ply" "$T/crop.ply"
cp "$D/cam_demo.json" "$O/crop_demo.json"
cp "$D/inside.json" "$O/crop_inside.json"
for n in 18 90; do
  "$S" tile --copies $n "$T/crop.ply" "$T/x$n.ply" 2>&1 | tail -1
  "$S" render-bench "$T/x$n.ply" --frames 1 --width 1920 --height 1080 --save-camera "$O/x${n}_framed.json" >/dev/null 2>&1
done
psnr() {
  python3 - "$1" "$2" <<'PY'
import sys
import numpy as np
from PIL import Image
a, b = (np.asarray(Image.open(p).convert("RGB"), dtype=np.float64) for p in sys.argv[1:3])
mse = np.mean((a - b) ** 2)
print(f"PSNR {10 * np.log10(255 ** 2 / mse):.2f} dB" if mse > 0 else "PSNR inf (identical)")
PY
}
for view in "crop crop_demo 200" "crop crop_inside 200" "x18 x18_framed 100" "x90 x90_framed 50"; do
  set -- $view
  scene="$T/$1.ply" cam="$O/$2.json" frames=$3
  echo "== $2: splatsort"
  "$S" render-bench "$scene" --camera "$cam" --frames "$frames" --warmup-secs 2 --algorithm onesweep --draw compute 2>&1 |
    grep -E "frame \(span\)|rasterize|entries|rror"
  "$S" render "$scene" --camera "$cam" --draw compute --algorithm onesweep --out "$O/splatsort_$2.png" 2>&1 | tail -1
  echo "== $2: gsplat 1.5.3"
  python3 "$D/gsplat_time.py" "$scene" "$cam" --out "$O" --iters 50 2>&1 | grep -E "gsplat|splats|rror"
  psnr "$O/splatsort_$2.png" "$O/gsplat_$2.png"
done
# The real 5M-splat scene (issue 40), where KARANG names the folder of its ten SOG chunks with the lod-meta.json
# that `docs/bench/today.sh` writes: framed, and at today.sh's two cameras (aerial, street). gsplat reads PLY only,
# so splatsort writes the level as a 3DGS PLY first (1.2 GB, in $T).
if [ -n "${KARANG:-}" ]; then
  L="$KARANG/lod-meta.json"
  "$S" convert "$L" "$T/karang.ply" 2>&1 | tail -1
  "$S" render-bench "$L" --frames 1 --width 1920 --height 1080 --save-camera "$O/karang_framed.json" >/dev/null 2>&1
  cp docs/bench/karang_aerial.json docs/bench/karang_street.json "$O/"
  for view in karang_framed karang_aerial karang_street; do
    echo "== $view: splatsort"
    "$S" render-bench "$L" --camera "$O/$view.json" --frames 50 --warmup-secs 2 --algorithm onesweep --draw compute 2>&1 |
      grep -E "frame \(span\)|rasterize|entries|rror"
    "$S" render "$L" --camera "$O/$view.json" --draw compute --algorithm onesweep --out "$O/splatsort_$view.png" 2>&1 |
      tail -1
    echo "== $view: gsplat 1.5.3"
    python3 "$D/gsplat_time.py" "$T/karang.ply" "$O/$view.json" --out "$O" --iters 50 2>&1 | grep -E "gsplat|splats|rror"
    psnr "$O/splatsort_$view.png" "$O/gsplat_$view.png"
  done
fi
echo done
