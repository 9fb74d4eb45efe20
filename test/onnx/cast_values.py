"""Values where a Cast from float32 to bfloat16 or float16 is easy to get wrong, and numpy
references for those casts (IEEE 754: round to nearest even, overflow to inf, NaN stays NaN).

Shared by gen_onnx_tests.py (the initializer of cast_rounding.onnx), check_cast_rounding.py (the
constants kiln folds at import, lit cast-rounding.mlir) and test/e2e/small_models_test.py (the
kernels on a GPU). Needs numpy only.
"""
import numpy as np


def special_values():
    """float32: ties (to even) of each type, the largest finite values and just past them (65520
    is fp16 inf, 65519.99 is 65504; bf16 overflows at half an ulp past 0x7F7F0000), subnormals of
    each type, signed zeros, infinities and NaN."""
    bits = lambda u: np.array([u], np.uint32).view(np.float32)[0]
    f32max = np.finfo(np.float32).max
    return np.array([
        0.0, -0.0, 1.0, -1.5,
        1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, -(1 + 2.0 ** -8), 3 + 2.0 ** -6,  # bf16 ties
        1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, -(1 + 3 * 2.0 ** -11), 2049.0,  # fp16 ties
        65504.0, 65519.99, 65520.0, -65520.0, 65519.0, 1.0e5, -1.0e5, 70000.0,  # fp16 limit
        bits(0x7F7F0000), bits(0x7F7F7FFF), bits(0x7F7F8000), -bits(0x7F7F8000),  # bf16 limit
        f32max, -f32max,
        2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, -(2.0 ** -25) * 3, 6.0e-5,  # fp16 subnormals
        1.0e-39, -1.0e-39, bits(0x00008000), bits(0x00018000), 1.0e-45,  # bf16 subnormals
        np.inf, -np.inf, np.nan,
    ], np.float32)


def wide_values(rng, n):
    """special_values() followed by random float32 of every magnitude (2^-150 to 2^128, both
    signs: subnormals, overflow in both 16-bit types), n values in all."""
    special = special_values()
    exponent = rng.uniform(-150.0, 128.0, n - special.size)
    with np.errstate(over="ignore"):
        rest = (rng.choice([-1.0, 1.0], n - special.size) * rng.uniform(1.0, 2.0, n - special.size)
                * np.exp2(exponent)).astype(np.float32)
    return np.concatenate([special, rest])


def round_bf16(x):
    """float32 -> bfloat16 -> float32: round to nearest even on the bits (an overflow carries
    into the exponent and gives inf), NaN stays NaN."""
    x = np.asarray(x, np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), r)


def round_f16(x):
    """float32 -> float16 (numpy: round to nearest even, overflow to inf)."""
    with np.errstate(over="ignore"):
        return np.asarray(x, np.float32).astype(np.float16)


def references(x):
    """The outputs of cast_rounding.onnx for an input x, by output suffix."""
    h = round_f16(x)
    return {"via_bf16": round_bf16(x), "via_f16": h.astype(np.float32), "f16": h,
            "via_f16_bf16": round_bf16(h.astype(np.float32))}


def mismatches(out, ref):
    """Indices where out and ref differ: NaN must meet NaN, anything else the same value and
    sign (so -0.0 is not 0.0)."""
    out, ref = np.asarray(out), np.asarray(ref)
    if out.shape != ref.shape or out.dtype != ref.dtype:
        return np.arange(max(out.size, ref.size))
    nan = np.isnan(out) | np.isnan(ref)
    same = np.where(nan, np.isnan(out) & np.isnan(ref),
                    (out == ref) & (np.signbit(out) == np.signbit(ref)))
    return np.nonzero(~same.reshape(-1))[0]


def int_values(rng, n):
    """int64: ties of bf16 and fp16 that a rounding to float32 first would break (2^25 + 2^17 + 1
    rounds up to bf16, 2^25 + 2^17 would tie to even), both signs, the int64 and int32 limits,
    then random integers of every magnitude, n values in all."""
    special = [0, 1, -1, 2 ** 24 + 1, 2 ** 25 + 2 ** 17 + 1, 2 ** 25 + 2 ** 17, 2 ** 25 + 2 ** 17 - 1,
               -(2 ** 25 + 2 ** 17 + 1), 2 ** 40 + 2 ** 32 + 1, 2 ** 62 + 2 ** 54 + 3,
               -(2 ** 63), 2 ** 63 - 1, 2 ** 31 - 1, -(2 ** 31), 2049, 2051, 65519, 65520, 65535,
               -65520, 4097, 2 ** 24 + 2 ** 13 + 1]
    bits = rng.integers(0, 63, n - len(special))
    rest = [int(rng.integers(-(2 ** int(b)), 2 ** int(b) + 1)) for b in bits]
    return np.array(special + rest, np.int64)


def _round_int(v, significand, max_exp):
    """The float nearest to the integer v with `significand` bits (ties to even), as float64, or
    +-inf past the largest finite value (max_exp: exponent of the largest finite binade)."""
    if v == 0:
        return 0.0
    sign, m = (-1.0 if v < 0 else 1.0), abs(v)
    shift = max(m.bit_length() - significand, 0)
    q, r = divmod(m, 1 << shift)
    half = 1 << shift >> 1
    if shift and (r > half or (r == half and q & 1)):
        q += 1
    value = q << shift
    if value.bit_length() - 1 > max_exp:
        return sign * np.inf
    return sign * float(value)


def int_references(x):
    """Exact int64 -> bf16 / fp16 (one rounding to nearest even) as float32, per element."""
    bf = np.array([_round_int(int(v), 8, 127) for v in x], np.float64).astype(np.float32)
    h = np.array([_round_int(int(v), 11, 15) for v in x], np.float64).astype(np.float32)
    return {"via_bf16": bf, "via_f16": h}
