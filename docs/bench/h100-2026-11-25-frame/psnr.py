#!/usr/bin/env python3
"""PSNR (dB) between two 8-bit RGB(A) PNGs of one size: psnr.py A.png B.png"""
import sys
import numpy as np
from PIL import Image

a, b = (np.asarray(Image.open(p).convert('RGB'), dtype=np.float64) for p in sys.argv[1:3])
mse = np.mean((a - b) ** 2)
print(f'{sys.argv[1]} vs {sys.argv[2]}: psnr_db={10 * np.log10(255.0 ** 2 / mse) if mse > 0 else float("inf"):.2f}')
