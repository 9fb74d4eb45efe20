#!/usr/bin/env python3
"""max|a - b| / max|b| of two logits arrays (.npy, e.g. `kiln-run --output logits=X.npy` of two
artifacts on the same generated inputs), the rows whose arg-max differs, and b's top-2 margin
(relative to max|b|) on those rows.

    compare_logits.py a.npy b.npy
"""
import sys

import numpy as np


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    a = np.load(argv[0]).astype(np.float64)
    b = np.load(argv[1]).astype(np.float64)
    a2, b2 = a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])
    am, bm = a2.argmax(-1), b2.argmax(-1)
    top = np.sort(b2, -1)
    margin = (top[:, -1] - top[:, -2]) / np.abs(b2).max()
    print("shape %s, max|a-b|/max|b| = %.3e, argmax equal %d of %d, finite %s; rows that differ: %s"
          % (a.shape, np.abs(a - b).max() / np.abs(b).max(), int((am == bm).sum()), len(am),
             bool(np.isfinite(a).all()),
             [(int(i), "margin %.2e" % margin[i]) for i in np.nonzero(am != bm)[0]]))


if __name__ == "__main__":
    main(sys.argv[1:])
