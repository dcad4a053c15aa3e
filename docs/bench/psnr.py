import sys, math
import numpy as np
from PIL import Image
def load(p): return np.asarray(Image.open(p).convert('RGB'), dtype=np.float64)
ref = load(sys.argv[1])
for p in sys.argv[2:]:
    a = load(p)
    mse = ((a - ref) ** 2).mean()
    print(f"  {p.split('/')[-1]}: {'inf' if mse == 0 else '%.1f' % (10 * math.log10(255 ** 2 / mse))} dB")
