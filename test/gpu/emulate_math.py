#!/usr/bin/env python3
"""Host fp32 emulation of kiln::onePlusErf and kiln::onePlusTanh (compiler/codegen/cuda/common.cuh):
the same operations rounded to float32 with numpy (z*z exact, as the fma makes it; ex2 and the
divisions correctly rounded, where the GPU's ex2.approx / div.approx add about 2 ulp), against
math.erf / math.exp in float64 over x in [-12, 12]. It is where the bounds in common.cuh and
test/gpu/math_test.cu (which checks the real functions on a GPU) come from. Needs numpy.

  python3 test/gpu/emulate_math.py
"""
import math

import numpy as np

f = np.float32
# Numerical Recipes in C, 2nd ed., section 6.2 (erfcc), highest degree first; the constant term last.
P = [0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
     0.37409196, 1.00002368]
C0 = f(-1.26551223)


def one_plus_erf(x):
    z = np.abs(x)
    t = (f(1) / (f(1) + f(0.5) * z)).astype(f)
    p = f(P[0])
    for c in P[1:]:
        p = (p * t + f(c)).astype(f)
    inner = (t * p + C0).astype(f)
    arg = (-(z.astype(np.float64) ** 2) + inner).astype(f)  # fmaf(-z, z, inner)
    e = (t * np.exp2((arg * f(1.4426950408889634)).astype(f)).astype(f)).astype(f)
    return np.where(x >= 0, f(2) - e, e)


def one_plus_tanh(x):
    return (f(2) / (f(1) + np.exp2((x * f(-2.88539008177792681472)).astype(f)).astype(f))).astype(f)


def main():
    xs = np.linspace(-12, 12, 240001).astype(f)
    for name, fn, ref in (
            ("onePlusErf", one_plus_erf, lambda v: 1 + math.erf(v) if v >= 0 else math.erfc(-v)),
            ("onePlusTanh", one_plus_tanh, lambda v: 2 / (1 + math.exp(-2 * v)))):
        got = fn(xs).astype(np.float64)
        want = np.array([ref(float(v)) for v in xs])
        err = np.abs(got - want)
        ok = want >= 1e-30
        rel = err[ok] / want[ok]
        near = np.abs(xs[ok]) <= 6
        print("%-12s max abs err %.2e, max rel err %.2e (|x| <= 6: %.2e) where the value >= 1e-30"
              % (name, err.max(), rel.max(), rel[near].max()))


if __name__ == "__main__":
    main()
