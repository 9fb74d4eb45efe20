#!/usr/bin/env python3
"""kiln vs onnxruntime on the small codegen test models (test/codegen/Inputs), on a GPU.

Each model exercises one kernel family: a fused pointwise chain, one kernel per anchor (GEMM,
layer norm, softmax, reduce), epilogues on all three anchors, and outputs that are not kernel
results (an input passed through, a constant). Inputs are fresh random normals (seed printed);
outputs are poisoned by kiln-run before fetching. Pass if max|out-ref|/max|ref| <= 1e-5 for every
output (fp32 throughout, short reductions; the few models compiled --precision fp16 or bf16 have
their own tolerance).

  small_models_test.py --kiln-run BIN (--kiln-compile BIN | --artifacts DIR) [--compile-only DIR]

Exit: 0 pass, 1 failure, 2 usage, 77 no GPU (not in --compile-only mode).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

from e2e_test import has_gpu  # one GPU check for every GPU test script

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "onnx"))
import cast_values  # noqa: E402  (special float32 values and IEEE cast references, numpy only)
import gqa_lengths  # noqa: E402  (inputs and comparison rules of gqa_runtime_lengths.onnx)

INPUTS = os.path.join(HERE, "..", "codegen", "Inputs")
# model -> {input: shape}
MODELS = {
    "chain": {"x": (3, 8)},
    "anchors": {"x": (2, 4, 16)},
    "epilogues": {"x": (3, 8, 16)},
    "passthrough": {"x": (2, 3)},
    "passthrough_same_name": {"x": (2, 3), "y": (2, 3)},  # outputs named like their inputs
    "reductions": {"x": (3, 8, 16)},
    "softmax_axis": {"x": (3, 6, 5)},
    "decomposed_layer_norm": {"x": (3, 8, 16)},
    "max_nan": {"x": (3, 4, 64)},
    "long_row_norms": {"x": (3, 4, 768), "z": (3, 4, 2048)},  # block-per-row norms
    "nan_int_semantics": {"x": (3, 20), "z": (3, 20)},
    "layer_norm_stats": {"x": (3, 4, 16)},  # LayerNormalization's Mean and InvStdDev outputs
    "cumsum_runtime": {"x": (3, 8), "mask": (3, 8)},  # CumSum kernels (float, int64 position ids)
    # Old and new opsets (test/onnx/Inputs): Squeeze/Unsqueeze/Slice/Split/Clip attributes and
    # Softmax's 2-D coercion before opset 13, RMSNormalization-23 and Cast-24 at opset 24.
    "../../onnx/Inputs/opset7_ops": {"x": (2, 3, 4)},
    "../../onnx/Inputs/opset12_ops": {"x": (2, 3, 4)},
    "../../onnx/Inputs/opset24_ops": {"x": (2, 3, 4)},
    # RotaryEmbedding-23: 4-D with position ids, 3-D with num_heads and a partial rotary dim.
    "../../onnx/Inputs/rotary_embedding_4d": {"x": (2, 3, 5, 8), "pos": (2, 5)},
    "../../onnx/Inputs/rotary_embedding_3d": {"x": (2, 5, 24)},
    # CastLike, Abs, Xor, Dropout, ReduceMin/SumSquare/L1/L2/LogSum/LogSumExp, LogSoftmax.
    "../../onnx/Inputs/derived_ops": {"x": (3, 4, 5)},
    # LeakyRelu, Elu, Selu, Celu, HardSigmoid, HardSwish, Softsign, Softplus, ThresholdedRelu,
    # Mish, Sign, PRelu.
    "../../onnx/Inputs/activations": {"x": (3, 4, 5)},
    "../../onnx/Inputs/arg_reduce": {"x": (3, 4, 5)},  # ArgMax, ArgMin, ReduceMin
    # ArgMax / ArgMin over rows of 300 with ties (a block per row): first, last, int64.
    "../../onnx/Inputs/arg_reduce_rows": {"x": (4, 300), "y": (2, 32000)},
    "../../onnx/Inputs/mod": {"x": (3, 5)},  # Mod: integer fmod 0 and 1, float fmod 1
    # onnxruntime contrib ops: com.microsoft SkipLayerNormalization (every optional input and
    # output; a broadcast [S, H] skip; default epsilon 1e-12), SkipSimplifiedLayerNormalization
    # (bias, inv_std_var, the sum), SimplifiedLayerNormalization (last axis and axis 1, with
    # inv_std_var), FastGelu with and without bias, BiasGelu.
    "../../onnx/Inputs/contrib_skip_layer_norm": {"x": (2, 3, 8), "s": (2, 3, 8), "s2": (3, 8)},
    "../../onnx/Inputs/contrib_skip_simplified_layer_norm": {"x": (2, 3, 8), "s": (2, 3, 8)},
    "../../onnx/Inputs/contrib_simplified_layer_norm": {"x": (2, 3, 8)},
    "../../onnx/Inputs/contrib_gelu": {"x": (2, 3, 8)},
    # Opset 28: Mod-28 fmod 0 on floats (numpy's floor mod), Range-27 on float16.
    "../../onnx/Inputs/opset28_ops": {"x": (3, 5)},
    # Zero-size dims: empty past KV, empty Concat operand, reductions over an empty axis, K = 0,
    # empty outputs; Attention-23 with an empty past (numpy references).
    "../../onnx/Inputs/empty_tensors": {"x": (2, 3), "past": (1, 2, 0, 4), "k": (1, 2, 1, 4),
                                        "e": (2, 0)},
    "../../onnx/Inputs/attention_empty_past": {"q": (1, 2, 3, 4), "k": (1, 2, 3, 4),
                                               "v": (1, 2, 3, 4), "pk": (1, 2, 0, 4),
                                               "pv": (1, 2, 0, 4)},
    # uint8/int8/int16/uint32/uint64 in kernels and in the constant folder (numpy reference).
    "int_dtypes": {"a": (3, 16), "b": (3, 16), "c": (3, 16), "d": (3, 16), "e": (3, 16)},
    # Attention-24 qk_matmul_output modes 0-3 with softcap and an additive mask (mode 0: the
    # scaled Q K^T before softcap, as the spec's function body and onnxruntime have it).
    "../../onnx/Inputs/attention_qk_modes": {"q": (1, 2, 3, 8), "k": (1, 2, 5, 8),
                                             "v": (1, 2, 5, 8), "m": (3, 5)},
    # Casts to bf16 and fp16 and back (ties, limits, subnormals, inf, NaN, then random values of
    # every magnitude), in kernels (input x) and folded at import (initializer c): bit-exact.
    "../../onnx/Inputs/cast_rounding": {"x": (4096,)},
    # int64 / int32 to bf16 and fp16 in kernels: one rounding (ties a float32 step would break).
    "../../onnx/Inputs/cast_int_rounding": {"x": (4096,), "y": (4096,)},
    # A node list out of topological order (the importer sorts it).
    "../../onnx/Inputs/unsorted_nodes": {"x": (2, 3)},
    # Attention-23: GQA with past key/value and a bool mask; 3-D causal with head counts.
    "../../onnx/Inputs/attention23": {"q": (2, 4, 3, 8), "k": (2, 2, 3, 8), "v": (2, 2, 3, 8),
                                      "pk": (2, 2, 2, 8), "pv": (2, 2, 2, 8), "q3": (2, 4, 16),
                                      "k3": (2, 4, 16), "v3": (2, 4, 16)},
    # Pad: constant (initializer, default and run-time value), reflect, edge on opset-18 axes,
    # wrap, negative pads that crop; Pad-2 attributes; bool/int64/float16; pads wider than
    # the axis (numpy.pad's reference: onnxruntime refuses them).
    "../../onnx/Inputs/pad": {"x": (2, 3, 4), "v": ()},
    "../../onnx/Inputs/pad_opset7": {"x": (2, 3, 4)},
    "../../onnx/Inputs/pad_opset24": {"x": (2, 3, 4)},
    "../../onnx/Inputs/pad_wide": {"x": (2, 3, 4)},
    # Einsum: batched matmul, transpose, reduction, diagonal, trace, outer product, ellipsis
    # with a size-1 batch dim, implicit outputs, int64, three operands; and in bf16.
    "../../onnx/Inputs/einsum": {"a": (2, 3, 4), "b": (2, 4, 5), "m": (4, 4), "v": (3,),
                                 "e1": (1, 3, 4), "e2": (5, 4, 6), "w": (3, 4)},
    "../../onnx/Inputs/einsum_bf16": {"a": (2, 3, 4), "b": (2, 4, 5), "m": (4, 4)},
    # GEMMs of few rows (decode steps) on kiln::gemmSkinny, compiled --precision fp16: 16 rows
    # with split-K 2, a batch of 3 rows sharing a weight (split-K 8), one row, and a K-major
    # weight that falls back to the Hopper / mma.sync GEMM.
    "skinny_gemms": {"x1": (16, 300), "x2": (3, 1, 2048), "r2": (3, 1, 64), "x3": (1, 1024),
                     "x4": (2, 128), "w4": (96, 128)},
    # RMS norms in the few-row GEMMs' A loader (kiln::gemmSkinnyRms), fp16: 1 row read by two
    # GEMMs (split-K 4), 8 single rows with a residual, 3 rows (atomic row sums), 16 rows.
    "skinny_rms_gemms": {"x1": (1, 64), "x2": (8, 1, 64), "r2": (8, 1, 64), "x3": (3, 64),
                         "x4": (16, 64)},
    # com.microsoft MatMulNBits, dequantized at import into a constant weight: 4-bit with packed
    # zero points, 4-bit with the default zero point and a bias, 8-bit with block_size 16, 2-bit
    # with float zero points on a 1-D A (K = 80, a partial last block); float16 with float16 zero
    # points and a bias on 4 rows (the few-row GEMM).
    "../../onnx/Inputs/matmul_nbits": {"a": (2, 3, 80), "a2": (5, 80), "a3": (80,)},
    "../../onnx/Inputs/matmul_nbits_fp16": {"a": (1, 4, 80)},
    # com.microsoft GroupQueryAttention (4 query, 2 KV heads): a first prompt (S = 3, no past,
    # scale 0.3), a decode step after a past of 4 and a 3-token chunk after a past of 4 (batch
    # 1; causal and not), head size 8; do_rotary (rotate-half on the three forms, interleaved full and partial
    # on a decode step), head size 32; softcap, local windows on the prompt and the chunk,
    # packed QKV on a decode step.
    "../../onnx/Inputs/gqa": {"qp": (2, 3, 32), "kp": (2, 3, 16), "vp": (2, 3, 16),
                              "qd": (2, 1, 32), "kd": (2, 1, 16), "vd": (2, 1, 16),
                              "pkd": (2, 2, 4, 8), "pvd": (2, 2, 4, 8),
                              "qc": (1, 3, 32), "kc": (1, 3, 16), "vc": (1, 3, 16),
                              "pkc": (1, 2, 4, 8), "pvc": (1, 2, 4, 8)},
    "../../onnx/Inputs/gqa_rotary": {"qz": (2, 3, 128), "kz": (2, 3, 64), "vz": (2, 3, 64),
                                     "qw": (2, 1, 128), "kw": (2, 1, 64), "vw": (2, 1, 64),
                                     "pkw": (2, 2, 4, 32), "pvw": (2, 2, 4, 32),
                                     "qx": (1, 3, 128), "kx": (1, 3, 64), "vx": (1, 3, 64),
                                     "pkx": (1, 2, 4, 32), "pvx": (1, 2, 4, 32)},
    "../../onnx/Inputs/gqa_softcap_window_packed": {
        "qp": (2, 3, 32), "kp": (2, 3, 16), "vp": (2, 3, 16),
        "qd": (2, 1, 32), "kd": (2, 1, 16), "vd": (2, 1, 16), "pkd": (2, 2, 4, 8),
        "pvd": (2, 2, 4, 8), "qc": (1, 3, 32), "kc": (1, 3, 16), "vc": (1, 3, 16),
        "pkc": (1, 2, 4, 8), "pvc": (1, 2, 4, 8), "qkv": (2, 1, 64)},
}


def graph_input_shapes(name):
    """{input: shape} of a fixed-shape model in test/onnx/Inputs, read from the file (needs onnx)."""
    import onnx
    graph = onnx.load(os.path.join(HERE, "..", "onnx", "Inputs", name + ".onnx")).graph
    return {i.name: tuple(d.dim_value for d in i.type.tensor_type.shape.dim) for i in graph.input}


# GroupQueryAttention with seqlens_k read at run time from right-padded attention masks (int64
# mask_<form>, gqa_lengths.padded_mask): decode steps after a past and in a longer buffer, first
# prompts with and without a buffer, a batch-1 chunk, rotary, softcap, windows, causal 0.
GQA_RUNTIME = "../../onnx/Inputs/gqa_runtime_lengths"
MODELS[GQA_RUNTIME] = graph_input_shapes("gqa_runtime_lengths")
# onnxruntime-genai model-builder exports (test/models/make_genai_tiny.py): a decode step of a
# right-padded batch of 2 (masks of 6 and 4 tokens) on a random past of 5, int4 (MatMulNBits)
# and fp16.
GENAI = ["../../models/genai_llama_tiny_int4", "../../models/genai_llama_tiny_fp16"]
for _name in GENAI:
    MODELS[_name] = {"input_ids": (2, 1), "attention_mask": (2, 6),
                     **{"past_key_values.%d.%s" % (layer, kind): (2, 2, 5, 16)
                        for layer in range(2) for kind in ("key", "value")}}
# Outputs where onnxruntime's value is undefined (not compared): model -> fn(output, shape, feeds).
UNDEFINED = {GQA_RUNTIME: gqa_lengths.undefined,
             **{name: lambda o, shape, feeds: gqa_lengths.undefined_for_mask(
                 o, shape, feeds["attention_mask"]) for name in GENAI}}
# Rotary tables (cos and sin) from run-time positions up to 4095, compiled --precision fp16: the
# angles must be computed in f32 (an f16 angle near 2048 is off by up to 1 rad).
MODELS["rotary_angles"] = {"pos": (2, 8)}
# kiln-compile --precision per model (default fp32).
PRECISION = {"skinny_gemms": "fp16", "skinny_rms_gemms": "fp16", "rotary_angles": "fp16"}
# Input elements set to NaN before the run: model -> [(input, index)]. Outputs are then
# compared NaN for NaN (each NaN must stay NaN, nothing else may become NaN).
NAN_INPUTS = {"max_nan": [("x", (0, 1, 37)), ("x", (2, 3, 5))],
              "nan_int_semantics": [("x", (0, 3)), ("x", (2, 17))]}
def nan_semantics_mask():
    """The -inf mask of nan_int_semantics.onnx (gen_codegen_tests.py): row 1 entirely, and
    columns 3, 5 of row 0 and 7 of row 2."""
    i = np.arange(60).reshape(3, 20)
    return np.where(np.isin(i, [3, 5, 47]) | (i // 20 == 1), -np.inf, 0).astype(np.float32)


def softmax_ref(s):
    """Softmax over the last axis in float64; a row of -inf gives NaN (0/0), as ONNX defines."""
    s = s.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


# int64 inputs instead of float normals: model -> {input: values drawn from [0, high)}
# (attention masks of 0 and 1, position ids into a 16-row cache).
INT_INPUTS = {"cumsum_runtime": {"mask": 2}, "../../onnx/Inputs/rotary_embedding_4d": {"pos": 16},
              "rotary_angles": {"pos": 4096},
              **{name: {"input_ids": 1000} for name in GENAI}}
# Other integer inputs: model -> {input: (dtype, low, high)}, uniform over [low, high) (the full
# range of each type, so wrapping and the sign bit are exercised).
TYPED_INPUTS = {"int_dtypes": {"a": (np.uint8, 0, 256), "b": (np.int8, -128, 128),
                               "c": (np.int16, -300, 300), "d": (np.uint32, 0, 2**32),
                               "e": (np.uint64, 0, 2**64)}}


def int_dtypes_ref(f):
    """numpy for int_dtypes.onnx (gen_codegen_tests.py): wrapping arithmetic in each type."""
    a, b, c, d, e = f["a"], f["b"], f["c"], f["d"], f["e"]
    u8 = lambda v: np.uint8(v)
    with np.errstate(over="ignore"):
        folded = (np.full(16, 200, np.uint8) + np.arange(100, 116, dtype=np.uint8)) + u8(200)
        return [a + u8(200), np.maximum(a, u8(128)), a // u8(7) + a % u8(5),
                np.sum(a, axis=1, dtype=np.uint8), a < u8(100), a + folded,
                -b + np.abs(b), np.mod(b, np.int8(5)), np.max(b, axis=1), b.astype(np.int32),
                c * c, np.min(c, axis=1), c.astype(np.float32),
                d + np.uint32(4000000000), np.maximum(d, np.uint32(3000000000)),
                np.maximum(e, np.uint64(2**63 + 5)), e - np.uint64(1), np.argmax(e, axis=1)]

# Float inputs drawn otherwise than as standard normals: model -> {input: fn(rng, shape)}.
VALUE_INPUTS = {"../../onnx/Inputs/cast_rounding":
                {"x": lambda rng, shape: cast_values.wide_values(rng, shape[0])},
                "../../onnx/Inputs/cast_int_rounding":
                {"x": lambda rng, shape: cast_values.int_values(rng, shape[0]),
                 "y": lambda rng, shape: cast_values.int_values(rng, shape[0]).astype(np.int32)},
                "../../onnx/Inputs/matmul_nbits_fp16":  # a float16 graph input
                {"a": lambda rng, shape: rng.standard_normal(shape).astype(np.float16)},
                GQA_RUNTIME: {k: lambda rng, shape: gqa_lengths.padded_mask(shape)
                              for k in MODELS[GQA_RUNTIME] if k.startswith("mask_")},
                **{name: {"attention_mask": lambda rng, shape: gqa_lengths.padded_mask(shape)}
                   for name in GENAI}}
# The fp16 export's past is float16.
VALUE_INPUTS[GENAI[1]].update({k: lambda rng, shape: rng.standard_normal(shape).astype(np.float16)
                               for k in MODELS[GENAI[1]] if k.startswith("past_key_values.")})
# Models whose float outputs must equal the reference exactly (NaN where it has NaN, the sign of
# zero included), not within a tolerance.
EXACT = {"../../onnx/Inputs/cast_rounding", "../../onnx/Inputs/cast_int_rounding"}


def cast_rounding_ref(f):
    """cast_rounding.onnx: the casts of x, then those of the initializer c (the special values)."""
    x, c = cast_values.references(f["x"]), cast_values.references(cast_values.special_values())
    order = ["via_bf16", "via_f16", "f16", "via_f16_bf16"]
    return [x[k] for k in order] + [c[k] for k in order]


def einsum_bf16_ref(f):
    """einsum_bf16.onnx: the inputs rounded to bf16, each einsum in float32 (as kiln
    accumulates), rounded to bf16 (onnxruntime has no bf16 Einsum kernel on the CPU)."""
    r = cast_values.round_bf16
    a, b, m = r(f["a"]), r(f["b"]), r(f["m"])
    return [r(np.einsum("bij,bjk->bik", a, b)), np.diagonal(m).copy(),
            r(np.einsum("ij,kl->ijkl", m, m)), r(np.einsum("bij->j", a))]


# Models compared with a wider max_rel_err than 1e-5: bf16 results are rounded to 8 bits of
# mantissa, so a different summation order can move an element by one bf16 ulp (2^-8).
TOLERANCE = {"../../onnx/Inputs/einsum_bf16": 1e-2, "skinny_gemms": 1e-2, "skinny_rms_gemms": 1e-2,
             "../../onnx/Inputs/matmul_nbits_fp16": 1e-2, GENAI[1]: 1e-2,
             "rotary_angles": 1e-3}


# numpy references (onnxruntime's NaN propagation is not specified): model -> feeds -> outputs.
NUMPY_REFS = {
    "max_nan": lambda f: [np.max(f["x"], axis=-1)],
    "../../onnx/Inputs/cast_rounding": cast_rounding_ref,
    "../../onnx/Inputs/cast_int_rounding": lambda f: [
        r[k] for r in (cast_values.int_references(f["x"]), cast_values.int_references(f["y"]))
        for k in ("via_bf16", "via_f16")],
    "int_dtypes": int_dtypes_ref,
    "../../onnx/Inputs/empty_tensors": lambda f: [
        2 * f["k"], np.concatenate([f["x"], f["x"]], axis=1), np.zeros(2, np.float32),
        np.full(2, np.nan, np.float32), np.full(2, -np.inf, np.float32),
        np.full(2, np.inf, np.float32), np.full(2, np.iinfo(np.int32).min, np.int32),
        np.tile(np.arange(5, dtype=np.float32), (2, 1)), np.zeros((2, 0), np.float32),
        np.zeros((2, 0), np.float32)],
    "../../onnx/Inputs/attention_empty_past": lambda f: [
        softmax_ref(0.5 * f["q"] @ np.swapaxes(f["k"], -1, -2)) @ f["v"], f["k"], f["v"]],
    "../../onnx/Inputs/einsum_bf16": einsum_bf16_ref,
    "../../onnx/Inputs/pad_wide": lambda f: [
        np.pad(f["x"], ((0, 0), (5, 4), (0, 0)), mode) for mode in ("reflect", "wrap")],
    "../../onnx/Inputs/opset28_ops": lambda f: [
        np.mod(f["x"], np.array([0.7, -0.3, 1.5, -2.0, 0.25], np.float32)) +
        np.array([1, 1.5, 2, 2.5, 3], np.float32)],
    # Relu, Clip(-1, 1), Max(x, 0.5) keep NaN; Pow(int32 3, k) = 3^k exactly.
    "nan_int_semantics": lambda f: [np.maximum(f["x"], np.float32(0)), np.clip(f["x"], -1, 1),
                                    np.maximum(f["x"], np.float32(0.5)),
                                    np.broadcast_to(3 ** np.arange(20, dtype=np.int64),
                                                    f["z"].shape).astype(np.int32),
                                    softmax_ref(f["z"] + nan_semantics_mask())],
}


def reference_model(path):
    """What onnxruntime runs for the model at `path`: the file, or with MatMulNBits nodes its
    bytes with accuracy_level 0 (at 4, onnxruntime-genai's default, onnxruntime quantizes A to
    int8 per block; kiln multiplies in float)."""
    import onnx
    proto = onnx.load(path)
    nbits = [nd for nd in proto.graph.node if nd.op_type == "MatMulNBits"]
    for nd in nbits:
        for a in nd.attribute:
            if a.name == "accuracy_level":
                a.i = 0
    return proto.SerializeToString() if nbits else path


def shape_spec(inputs):
    return ",".join(f"{k}={'x'.join(map(str, v))}" for k, v in inputs.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln-run")
    ap.add_argument("--kiln-compile")
    ap.add_argument("--artifacts")
    ap.add_argument("--compile-only")
    ap.add_argument("--models-dir", default=INPUTS)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args()

    if args.compile_only:
        os.makedirs(args.compile_only, exist_ok=True)
        for name, inputs in MODELS.items():
            out = os.path.join(args.compile_only, os.path.basename(name) + ".kiln")
            subprocess.run([args.kiln_compile, os.path.join(args.models_dir, name + ".onnx"),
                            "--shape", shape_spec(inputs), "-o", out,
                            "--precision", PRECISION.get(name, "fp32")], check=True, stdout=subprocess.DEVNULL)
        print(f"compiled {len(MODELS)} small models into {args.compile_only}")
        return 0
    if not args.kiln_run or not (args.kiln_compile or args.artifacts):
        ap.error("need --kiln-run and --kiln-compile or --artifacts")
    if not has_gpu():
        print("SKIP: no GPU")
        return 77

    import onnxruntime as ort
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, inputs in MODELS.items():
            model = os.path.join(args.models_dir, name + ".onnx")
            base = os.path.basename(name)  # files in tmp / --artifacts: the model's base name
            art = os.path.join(args.artifacts or tmp, base + ".kiln")
            if not args.artifacts:
                subprocess.run([args.kiln_compile, model, "--shape", shape_spec(inputs), "-o", art,
                                "--precision", PRECISION.get(name, "fp32")],
                               check=True, stdout=subprocess.DEVNULL)
            feeds = {k: rng.standard_normal(v).astype(np.float32) for k, v in inputs.items()}
            for k, high in INT_INPUTS.get(name, {}).items():
                feeds[k] = rng.integers(0, high, size=inputs[k], dtype=np.int64)
            for k, (dtype, low, high) in TYPED_INPUTS.get(name, {}).items():
                feeds[k] = rng.integers(low, high, size=inputs[k], dtype=dtype)
            for k, draw in VALUE_INPUTS.get(name, {}).items():
                feeds[k] = draw(rng, inputs[k])
            if name in TYPED_INPUTS:
                feeds["e"][0, :3] = [0, 2**63 + 5, 2**64 - 1]  # the wrap and the sign bit
            for k, index in NAN_INPUTS.get(name, []):
                feeds[k][index] = np.nan
            if name in NUMPY_REFS:  # onnxruntime may lack a kernel (uint8 Add, ...)
                import onnx
                names = [o.name for o in onnx.load(model).graph.output]
                refs = None
            else:
                sess = ort.InferenceSession(reference_model(model), providers=["CPUExecutionProvider"])
                names = [o.name for o in sess.get_outputs()]
                refs = sess.run(None, feeds)
            cmd = [args.kiln_run, art]
            for k, v in feeds.items():
                p = os.path.join(tmp, f"{base}_{k}.npy")
                np.save(p, v)
                cmd += ["--input", f"{k}={p}"]
            for o in names:
                cmd += ["--output", f"{o}={os.path.join(tmp, f'{base}_{o}_out.npy')}"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{base:12s} FAIL kiln-run exit {r.returncode}: {r.stderr.strip()}")
                failures += 1
                continue
            if name in NUMPY_REFS:
                refs = NUMPY_REFS[name](feeds)
            for o, ref in zip(names, refs):
                out = np.load(os.path.join(tmp, f"{base}_{o}_out.npy"))
                skip = UNDEFINED[name](o, ref.shape, feeds) if name in UNDEFINED else None
                if skip is not None and out.shape == ref.shape:
                    out, ref = np.where(skip, 0, out), np.where(skip, 0, ref)
                nan_ok = out.shape == ref.shape and np.array_equal(np.isnan(out), np.isnan(ref))
                if nan_ok and np.issubdtype(ref.dtype, np.floating):  # +-inf must match exactly
                    nan_ok = np.array_equal(out[np.isinf(ref)], ref[np.isinf(ref)])
                fin = np.isfinite(ref) if nan_ok else np.ones(ref.shape, bool)
                diff = np.abs(out.astype(np.float64) - ref)[fin] if nan_ok else np.array([np.inf])
                err = float(np.max(diff, initial=0.0) / max(np.max(np.abs(ref[fin]), initial=0.0), 1e-30))
                ok = nan_ok and np.isfinite(out[fin]).all() and err <= TOLERANCE.get(name, 1e-5)
                if name in NAN_INPUTS and np.issubdtype(ref.dtype, np.floating) and not np.isnan(ref).any():
                    ok = False  # the planted NaNs must reach the output
                if np.issubdtype(ref.dtype, np.integer):
                    ok = out.dtype == ref.dtype and np.array_equal(out, ref)  # integers: exact
                if name in EXACT:
                    bad = cast_values.mismatches(out, ref)
                    ok = bad.size == 0
                    if bad.size:
                        print(f"{base:12s} {o:10s} {bad.size} elements differ, e.g. " + ", ".join(
                            f"[{i}] {out.reshape(-1)[i]!r} (want {ref.reshape(-1)[i]!r})"
                            for i in bad[:4]))
                failures += not ok
                print(f"{base:12s} {o:10s} max_rel_err={err:.3e} {'ok' if ok else 'FAIL'}")
    print("PASS" if failures == 0 else f"FAIL ({failures})")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
