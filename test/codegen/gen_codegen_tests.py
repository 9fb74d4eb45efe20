#!/usr/bin/env python3
"""Writes the small ONNX models of the codegen lit tests into Inputs/.

Run with a Python that has the onnx package (the repo's .venv):
    .venv/bin/python test/codegen/gen_codegen_tests.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs")


def save(name, nodes, inputs, outputs, inits=(), opset=18):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name + ".onnx"))


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def head_views():
    """q2 [B, S, Hq*D], k2 / v2 [B, S, Hkv*D] -> q, k, v [B, H, S, D] (Reshape + head Transpose)."""
    nodes = []
    for x, shape in (("q", "q_shape"), ("k", "kv_shape"), ("v", "kv_shape")):
        nodes += [helper.make_node("Reshape", [x + "2", shape], [x + "3"]),
                  helper.make_node("Transpose", [x + "3"], [x], perm=[0, 2, 1, 3])]
    return nodes


def repeat_kv(k, v, k_out, v_out):
    """HF repeat_kv on K and V: Unsqueeze at 2, Expand to rep_shape, Reshape to heads_shape."""
    nodes = []
    for x, p, out in ((k, "k", k_out), (v, "v", v_out)):
        nodes += [helper.make_node("Unsqueeze", [x, "axis2"], [p + "5"]),
                  helper.make_node("Expand", [p + "5", "rep_shape"], [p + "e"]),
                  helper.make_node("Reshape", [p + "e", "heads_shape"], [out])]
    return nodes


def main():
    os.makedirs(HERE, exist_ok=True)
    rng = np.random.default_rng(0)
    # A pointwise chain: one fused kernel.
    save("chain", [
        helper.make_node("Add", ["x", "b"], ["s"]),
        helper.make_node("Tanh", ["s"], ["t"]),
        helper.make_node("Mul", ["t", "half"], ["y"]),
    ], [f32("x", ["batch", 8])], [f32("y", ["batch", 8])], [
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ])
    # One of each anchor kernel: GEMM, layer norm, softmax, reduce.
    save("anchors", [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("LayerNormalization", ["m", "g", "beta"], ["n"], axis=-1, epsilon=1e-5),
        helper.make_node("Softmax", ["n"], ["p"], axis=-1),
        helper.make_node("ReduceMean", ["p", "axes"], ["y"], keepdims=1),
    ], [f32("x", ["batch", 4, 16])], [f32("y", ["batch", 4, 1])], [
        numpy_helper.from_array(rng.standard_normal((16, 32)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "g"),
        numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "beta"),
        numpy_helper.from_array(np.array([-1], np.int64), "axes"),
    ])
    # Epilogues: GEMM + bias + GELU(tanh) + residual; softmax + NaN guard;
    # layer norm + scale. Checked against onnxruntime on a GPU.
    save("epilogues", [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["mb"]),
        helper.make_node("Tanh", ["mb"], ["t"]),
        helper.make_node("Add", ["t", "x"], ["r"]),
        helper.make_node("Softmax", ["r"], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["isnan"]),
        helper.make_node("Where", ["isnan", "zero", "p"], ["q"]),
        helper.make_node("LayerNormalization", ["q", "g", "beta"], ["n"], axis=-1, epsilon=1e-5),
        helper.make_node("Mul", ["n", "half"], ["y"]),
    ], [f32("x", ["batch", 8, 16])], [f32("y", ["batch", 8, 16])], [
        numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b"),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
        numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "g"),
        numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "beta"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ])
    # Reductions with fused producers: RMSNorm-style mean of squares over the
    # last axis (warp per row) and a max over a leading axis (thread per
    # output), both on a computed input.
    save("reductions", [
        helper.make_node("Mul", ["x", "x"], ["sq"]),
        helper.make_node("ReduceMean", ["sq", "last"], ["ms"], keepdims=1),
        helper.make_node("Exp", ["x"], ["ex"]),
        helper.make_node("ReduceMax", ["ex", "first"], ["mx"], keepdims=0),
    ], [f32("x", ["batch", 8, 16])], [f32("ms", ["batch", 8, 1]), f32("mx", [8, 16])], [
        numpy_helper.from_array(np.array([-1], np.int64), "last"),
        numpy_helper.from_array(np.array([0], np.int64), "first"),
    ])
    # ReduceMax over the last axis (one warp per row): a NaN anywhere in a row
    # must give NaN for that row (the GPU test plants NaNs in the input).
    save("max_nan", [
        helper.make_node("ReduceMax", ["x", "last"], ["y"], keepdims=0),
    ], [f32("x", ["batch", 4, 64])], [f32("y", ["batch", 4])], [
        numpy_helper.from_array(np.array([-1], np.int64), "last"),
    ])
    # Softmax over a middle axis (strided rows) with an epilogue.
    save("softmax_axis", [
        helper.make_node("Softmax", ["x"], ["p"], axis=1),
        helper.make_node("Mul", ["p", "x"], ["y"]),
    ], [f32("x", ["batch", 6, 5])], [f32("y", ["batch", 6, 5])])
    # Layer norm as exported before opset 17 (torch.nn.LayerNorm's decomposition,
    # ReduceMean with an axes attribute), with gamma, beta and a ReLU after it:
    # kiln-raise-layer-norm makes it one layer-norm kernel with a ReLU epilogue.
    save("decomposed_layer_norm", [
        helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1], keepdims=1),
        helper.make_node("Sub", ["x", "m"], ["d"]),
        helper.make_node("Pow", ["d", "two"], ["p"]),
        helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1], keepdims=1),
        helper.make_node("Add", ["v", "eps"], ["ve"]),
        helper.make_node("Sqrt", ["ve"], ["s"]),
        helper.make_node("Div", ["d", "s"], ["n"]),
        helper.make_node("Mul", ["n", "g"], ["ng"]),
        helper.make_node("Add", ["ng", "beta"], ["nb"]),
        helper.make_node("Relu", ["nb"], ["y"]),
    ], [f32("x", ["batch", 8, 16])], [f32("y", ["batch", 8, 16])], [
        numpy_helper.from_array(np.array(2.0, np.float32), "two"),
        numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
        numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "g"),
        numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "beta"),
    ], opset=13)
    # Outputs that are not kernel results: an input passed through and a constant.
    save("passthrough", [
        helper.make_node("Identity", ["x"], ["same"]),
        helper.make_node("Identity", ["c"], ["const"]),
        helper.make_node("Relu", ["x"], ["relu"]),
    ], [f32("x", [2, 3])], [f32("same", [2, 3]), f32("const", [3]), f32("relu", [2, 3])], [
        numpy_helper.from_array(np.array([1, 2, 3], np.float32), "c"),
    ])
    # Graph outputs that are graph inputs under their own names (onnxruntime accepts them):
    # located at the inputs, like the Identity pass-through above.
    save("passthrough_same_name", [
        helper.make_node("Relu", ["x"], ["relu"]),
    ], [f32("x", [2, 3]), f32("y", [2, 3])], [f32("y", [2, 3]), f32("relu", [2, 3]),
                                              f32("x", [2, 3])])
    # Graphs that import but that codegen does not support yet: each must stop
    # kiln-compile with an `unsupported:` error naming the kernel or op.
    # CumSum on run-time values: floats (inclusive; exclusive and reversed) and OPT/RoBERTa's
    # position ids, CumSum(attention_mask) * attention_mask - 1 in int64.
    i64t = TensorProto.INT64
    save("cumsum_runtime", [
        helper.make_node("CumSum", ["x", "axis1"], ["y"]),
        helper.make_node("CumSum", ["x", "axis0"], ["y_rev_excl"], exclusive=1, reverse=1),
        helper.make_node("CumSum", ["mask", "axis1"], ["c"]),
        helper.make_node("Mul", ["c", "mask"], ["cm"]),
        helper.make_node("Sub", ["cm", "one"], ["pos"]),
    ], [f32("x", ["batch", 8]), helper.make_tensor_value_info("mask", i64t, ["batch", 8])],
        [f32("y", ["batch", 8]), f32("y_rev_excl", ["batch", 8]),
         helper.make_tensor_value_info("pos", i64t, ["batch", 8])], [
        numpy_helper.from_array(np.array(1, np.int64), "axis1"),
        numpy_helper.from_array(np.array(0, np.int64), "axis0"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
    ])
    save("f16_cast_relu", [
        helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
        helper.make_node("Relu", ["h"], ["y"]),
    ], [f32("x", [4, 8])], [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [4, 8])])
    # A Range over constants that is too large to fold (8M elements > 4M).
    save("error_range_too_large", [
        helper.make_node("Range", ["zero", "limit", "one"], ["r"]),
        helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT),
    ], [], [f32("y", [1 << 23])], [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(1 << 23, np.int64), "limit"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
    ])
    # A batched GEMM with more batches than the grid's z dimension allows.
    save("error_gemm_batch", [
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ], [f32("x", ["batch", 2, 2])], [f32("y", ["batch", 2, 2])], [
        numpy_helper.from_array(np.eye(2, dtype=np.float32), "w"),
    ])
    # Graphs kiln-compile must reject before writing an artifact.
    # A Slice whose range is empty (step -1 from 0 to 4): a zero-element kernel result.
    save("error_empty_slice", [
        helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"]),
    ], [f32("x", [2, 9])], [f32("y", [2, 0])], [
        numpy_helper.from_array(np.array([0], np.int64), "s"),
        numpy_helper.from_array(np.array([4], np.int64), "e"),
        numpy_helper.from_array(np.array([1], np.int64), "a"),
        numpy_helper.from_array(np.array([-1], np.int64), "st"),
    ])
    save("error_no_outputs", [helper.make_node("Relu", ["x"], ["y"])],
         [f32("x", [2, 4])], [])
    save("error_duplicate_output", [helper.make_node("Relu", ["x"], ["y"])],
         [f32("x", [2, 4])], [f32("y", [2, 4]), f32("y", [2, 4])])
    save("error_huge_constant", [
        helper.make_node("ConstantOfShape", ["shape"], ["y"],
                         value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
    ], [], [f32("y", [1 << 20, 1 << 20])], [
        numpy_helper.from_array(np.array([1 << 20, 1 << 20], np.int64), "shape"),
    ])
    # Two inputs sharing the symbolic dims 'batch' and 'seq'.
    save("two_inputs", [helper.make_node("Add", ["a", "b"], ["y"])],
         [f32("a", ["batch", "seq"]), f32("b", ["batch", "seq"])], [f32("y", ["batch", "seq"])])
    # RMSNorm as torch's exporter spells LlamaRMSNorm (Pow, ReduceMean, Add,
    # Sqrt, Reciprocal, Mul by x, Mul by the weight on the left), with a ReLU
    # after it: kiln-raise-rms-norm makes it one RMS-norm kernel with a ReLU
    # epilogue.
    save("decomposed_rms_norm", [
        helper.make_node("Pow", ["x", "two"], ["p"]),
        helper.make_node("ReduceMean", ["p", "axes"], ["m"], keepdims=1),
        helper.make_node("Add", ["m", "eps"], ["me"]),
        helper.make_node("Sqrt", ["me"], ["s"]),
        helper.make_node("Reciprocal", ["s"], ["r"]),
        helper.make_node("Mul", ["x", "r"], ["n"]),
        helper.make_node("Mul", ["w", "n"], ["nw"]),
        helper.make_node("Relu", ["nw"], ["y"]),
    ], [f32("x", ["batch", 8, 64])], [f32("y", ["batch", 8, 64])], [
        numpy_helper.from_array(np.array(2.0, np.float32), "two"),
        numpy_helper.from_array(np.array([-1], np.int64), "axes"),
        numpy_helper.from_array(np.array(1e-6, np.float32), "eps"),
        numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "w"),
    ])
    # The same in an fp16 export (LlamaRMSNorm on a half model): x is cast to
    # fp32 for the statistics and the normalized value cast back before the
    # fp16 weight; the raised op reads and writes fp16 directly.
    f16 = TensorProto.FLOAT16
    save("decomposed_rms_norm_f16", [
        helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT),
        helper.make_node("Pow", ["xf", "two"], ["p"]),
        helper.make_node("ReduceMean", ["p", "axes"], ["m"], keepdims=1),
        helper.make_node("Add", ["m", "eps"], ["me"]),
        helper.make_node("Sqrt", ["me"], ["s"]),
        helper.make_node("Reciprocal", ["s"], ["r"]),
        helper.make_node("Mul", ["xf", "r"], ["n"]),
        helper.make_node("Cast", ["n"], ["h"], to=f16),
        helper.make_node("Mul", ["w", "h"], ["y"]),
    ], [helper.make_tensor_value_info("x", f16, ["batch", 8, 64])],
        [helper.make_tensor_value_info("y", f16, ["batch", 8, 64])], [
        numpy_helper.from_array(np.array(2.0, np.float32), "two"),
        numpy_helper.from_array(np.array([-1], np.int64), "axes"),
        numpy_helper.from_array(np.array(1e-6, np.float32), "eps"),
        numpy_helper.from_array(rng.standard_normal(64).astype(np.float16), "w"),
    ])
    save_attention_models(np.random.default_rng(1))
    save_glu_rope_models(np.random.default_rng(2))
    save_long_row_norms(np.random.default_rng(3))
    save_odd_row_norms(np.random.default_rng(4))
    save_nan_int_semantics()
    save_report_names()
    save_int_dtypes()
    save_gelu_erf(np.random.default_rng(5))
    save_skinny_gemms(np.random.default_rng(6))
    save_skinny_rms_gemms(np.random.default_rng(7))
    save_rotary_angles()
    save("layer_norm_stats", [
        helper.make_node("LayerNormalization", ["x", "g", "beta"], ["y", "mean", "inv_std"], axis=-2,
                         epsilon=1e-5),
    ], [f32("x", ["batch", 4, 16])],
        [f32("y", ["batch", 4, 16]), f32("mean", ["batch", 1, 1]), f32("inv_std", ["batch", 1, 1])], [
        numpy_helper.from_array(np.linspace(0.5, 1.5, 64, dtype=np.float32).reshape(4, 16), "g"),
        numpy_helper.from_array(np.linspace(-1, 1, 64, dtype=np.float32).reshape(4, 16), "beta"),
    ])


def save_attention_models(rng):
    """Attention as the torch exporters spell it, for kiln-raise-attention and the attention
    kernels (attention.mlir). Static shapes: the causal mask is a constant, as it is after
    kiln-fold-shape-subgraphs in an exported model."""
    i64 = lambda name, values: numpy_helper.from_array(np.array(values, np.int64), name)
    f32c = lambda name, values: numpy_helper.from_array(np.asarray(values, np.float32), name)
    minf = np.finfo(np.float32).min
    # Llama-style grouped-query attention: one QKV projection [16 -> 4*64 + 2*64 + 2*64], Q, K
    # and V as slices of it, heads split and transposed, K and V repeated to 4 heads by HF's
    # repeat_kv (Unsqueeze, Expand, Reshape), K^T = Transpose(K, [0, 1, 3, 2]), the scores
    # scaled after the matmul, a constant causal mask of 0 / f32 minimum, Softmax, the NaN
    # guard, MatMul with V, the transpose back to [B, S, H, D] and an output projection.
    # B = 2, S = 16, Hq = 4, Hkv = 2, D = 64.
    B, S, E, Hq, Hkv, D = 2, 16, 16, 4, 2, 64
    causal = np.where(np.tril(np.ones((S, S), bool)), 0.0, minf).reshape(1, 1, S, S)
    save("attention_gqa", [
        helper.make_node("MatMul", ["x", "w_qkv"], ["qkv"]),
        helper.make_node("Split", ["qkv", "split"], ["q2", "k2", "v2"], axis=2),
    ] + head_views() + repeat_kv("k", "v", "kr", "vr") + [
        helper.make_node("Transpose", ["kr"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("Add", ["ss", "causal"], ["sm"]),
        helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Where", ["nan", "zero", "p"], ["pz"]),
        helper.make_node("MatMul", ["pz", "vr"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ob"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ob", "out_shape"], ["o2"]),
        helper.make_node("MatMul", ["o2", "w_o"], ["y"]),
    ], [f32("x", [B, S, E])], [f32("y", [B, S, E])], [
        f32c("w_qkv", rng.standard_normal((E, (Hq + 2 * Hkv) * D)) * 0.2),
        i64("split", [Hq * D, Hkv * D, Hkv * D]),
        i64("q_shape", [B, S, Hq, D]),
        i64("kv_shape", [B, S, Hkv, D]),
        i64("axis2", [2]),
        i64("rep_shape", [B, Hkv, Hq // Hkv, S, D]),
        i64("heads_shape", [B, Hq, S, D]),
        f32c("scale", D ** -0.5),
        f32c("causal", causal),
        f32c("zero", 0.0),
        i64("out_shape", [B, S, Hq * D]),
        f32c("w_o", rng.standard_normal((Hq * D, E)) * 0.1),
    ])
    # BERT-style attention with a padding mask: int64 attention_mask [B, S] -> Unsqueeze to
    # [B, 1, 1, S] -> Cast -> (1 - m) * f32 minimum, added to the scores divided by sqrt(D)
    # (TorchScript exporter: K^T = Transpose(Kbshd, [0, 2, 3, 1])). B = 2, S = 16, H = 2, D = 16.
    B, S, E, H, D = 2, 16, 32, 2, 16
    save("attention_mask", [
        helper.make_node("MatMul", ["x", "w_q"], ["q2"]),
        helper.make_node("MatMul", ["x", "w_k"], ["k2"]),
        helper.make_node("MatMul", ["x", "w_v"], ["v2"]),
        helper.make_node("Reshape", ["q2", "bshd"], ["q3"]),
        helper.make_node("Transpose", ["q3"], ["q"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["k2", "bshd"], ["k3"]),
        helper.make_node("Transpose", ["k3"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["v2", "bshd"], ["v3"]),
        helper.make_node("Transpose", ["v3"], ["v"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Div", ["s", "sqrt_d"], ["sd"]),
        helper.make_node("Unsqueeze", ["attention_mask", "axes12"], ["m4"]),
        helper.make_node("Cast", ["m4"], ["mf"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["one", "mf"], ["inv"]),
        helper.make_node("Mul", ["inv", "fmin"], ["madd"]),
        helper.make_node("Add", ["sd", "madd"], ["sm"]),
        helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ob"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ob", "out_shape"], ["o2"]),
        helper.make_node("MatMul", ["o2", "w_o"], ["y"]),
    ], [f32("x", [B, S, E]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [B, S])],
        [f32("y", [B, S, E])], [
        f32c("w_q", rng.standard_normal((E, H * D)) * 0.2),
        f32c("w_k", rng.standard_normal((E, H * D)) * 0.2),
        f32c("w_v", rng.standard_normal((E, H * D)) * 0.2),
        i64("bshd", [B, S, H, D]),
        f32c("sqrt_d", np.sqrt(D)),
        i64("axes12", [1, 2]),
        f32c("one", 1.0),
        f32c("fmin", minf),
        i64("out_shape", [B, S, H * D]),
        f32c("w_o", rng.standard_normal((H * D, E)) * 0.1),
    ])


def save_glu_rope_models(rng):
    """A Llama MLP and Llama attention with rotary embeddings, for kiln-interleave-glu's pair
    epilogue and the rotary prologue of the attention kernel (glu-epilogue.mlir). Static
    shapes; the cos/sin tables are constants, as after kiln-fold-shape-subgraphs in an export."""
    i64 = lambda name, values: numpy_helper.from_array(np.array(values, np.int64), name)
    f32c = lambda name, values: numpy_helper.from_array(np.asarray(values, np.float32), name)
    # SwiGLU MLP: gate and up projections of x (kiln-fuse-sibling-gemms makes them one GEMM,
    # kiln-interleave-glu interleaves its columns), silu(g) * u, the down projection.
    # B = 2, S = 16, E = 32, F = 64.
    B, S, E, F = 2, 16, 32, 64
    save("swiglu_mlp", [
        helper.make_node("MatMul", ["x", "w_gate"], ["g"]),
        helper.make_node("MatMul", ["x", "w_up"], ["u"]),
        helper.make_node("Sigmoid", ["g"], ["sg"]),
        helper.make_node("Mul", ["g", "sg"], ["silu"]),
        helper.make_node("Mul", ["silu", "u"], ["h"]),
        helper.make_node("MatMul", ["h", "w_down"], ["y"]),
    ], [f32("x", [B, S, E])], [f32("y", [B, S, E])], [
        f32c("w_gate", rng.standard_normal((E, F)) * 0.2),
        f32c("w_up", rng.standard_normal((E, F)) * 0.2),
        f32c("w_down", rng.standard_normal((F, E)) * 0.1),
    ])
    # Llama attention with rotate-half RoPE on Q and K and grouped-query attention: separate
    # q/k/v projections, heads split and transposed, q * cos + concat(-q[..., D/2:],
    # q[..., :D/2]) * sin (likewise k) with [1, 1, S, D] tables, repeat_kv on K and V,
    # K^T = Transpose(K, [0, 1, 3, 2]), scaled scores, a constant causal mask, Softmax,
    # MatMul with V, the transpose back and the output projection.
    # B = 2, S = 16, E = 32, Hq = 4, Hkv = 2, D = 64.
    B, S, E, Hq, Hkv, D = 2, 16, 32, 4, 2, 64
    minf = np.finfo(np.float32).min
    causal = np.where(np.tril(np.ones((S, S), bool)), 0.0, minf).reshape(1, 1, S, S)
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, D, 2) / D))
    angles = np.outer(np.arange(S), inv_freq)
    angles = np.concatenate([angles, angles], axis=-1).reshape(1, 1, S, D)

    def rope(x, out):
        return [
            helper.make_node("Slice", [x, "half", "full", "axis3"], [x + "_hi"]),
            helper.make_node("Slice", [x, "zero_i", "half", "axis3"], [x + "_lo"]),
            helper.make_node("Neg", [x + "_hi"], [x + "_nhi"]),
            helper.make_node("Concat", [x + "_nhi", x + "_lo"], [x + "_rot"], axis=-1),
            helper.make_node("Mul", [x, "cos"], [x + "_c"]),
            helper.make_node("Mul", [x + "_rot", "sin"], [x + "_s"]),
            helper.make_node("Add", [x + "_c", x + "_s"], [out]),
        ]

    save("attention_rope", [
        helper.make_node("MatMul", ["x", "w_q"], ["q2"]),
        helper.make_node("MatMul", ["x", "w_k"], ["k2"]),
        helper.make_node("MatMul", ["x", "w_v"], ["v2"]),
    ] + head_views() + rope("q", "qr") + rope("k", "kr") + repeat_kv("kr", "v", "krep", "vrep") + [
        helper.make_node("Transpose", ["krep"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["qr", "kt"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("Add", ["ss", "causal"], ["sm"]),
        helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vrep"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ob"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ob", "out_shape"], ["o2"]),
        helper.make_node("MatMul", ["o2", "w_o"], ["y"]),
    ], [f32("x", [B, S, E])], [f32("y", [B, S, E])], [
        f32c("w_q", rng.standard_normal((E, Hq * D)) * 0.2),
        f32c("w_k", rng.standard_normal((E, Hkv * D)) * 0.2),
        f32c("w_v", rng.standard_normal((E, Hkv * D)) * 0.2),
        i64("q_shape", [B, S, Hq, D]),
        i64("kv_shape", [B, S, Hkv, D]),
        i64("zero_i", [0]),
        i64("half", [D // 2]),
        i64("full", [D]),
        i64("axis3", [3]),
        f32c("cos", np.cos(angles)),
        f32c("sin", np.sin(angles)),
        i64("axis2", [2]),
        i64("rep_shape", [B, Hkv, Hq // Hkv, S, D]),
        i64("heads_shape", [B, Hq, S, D]),
        f32c("scale", D ** -0.5),
        f32c("causal", causal),
        i64("out_shape", [B, S, Hq * D]),
        f32c("w_o", rng.standard_normal((Hq * D, E)) * 0.1),
    ])


def save_long_row_norms(rng):
    """Normalized rows as long as real models have (GPT-2/BERT LayerNorm over 768, Llama RMSNorm
    over 2048): kiln takes a thread block per row for them (test/codegen/long-row-norms.mlir)."""
    save("long_row_norms", [
        helper.make_node("LayerNormalization", ["x", "g", "beta"], ["y"], axis=-1, epsilon=1e-5),
        helper.make_node("Pow", ["z", "two"], ["p"]),
        helper.make_node("ReduceMean", ["p", "axes"], ["m"], keepdims=1),
        helper.make_node("Add", ["m", "eps"], ["me"]),
        helper.make_node("Sqrt", ["me"], ["s"]),
        helper.make_node("Reciprocal", ["s"], ["r"]),
        helper.make_node("Mul", ["z", "r"], ["n"]),
        helper.make_node("Mul", ["w", "n"], ["v"]),
    ], [f32("x", ["batch", 4, 768]), f32("z", ["batch", 4, 2048])],
        [f32("y", ["batch", 4, 768]), f32("v", ["batch", 4, 2048])], [
        numpy_helper.from_array(rng.standard_normal(768).astype(np.float32), "g"),
        numpy_helper.from_array(rng.standard_normal(768).astype(np.float32), "beta"),
        numpy_helper.from_array(np.array(2.0, np.float32), "two"),
        numpy_helper.from_array(np.array([-1], np.int64), "axes"),
        numpy_helper.from_array(np.array(1e-6, np.float32), "eps"),
        numpy_helper.from_array(rng.standard_normal(2048).astype(np.float32), "w"),
    ])


def save_odd_row_norms(rng):
    """Normalized rows that are not a whole number of 16-byte vectors: a LayerNorm over 770 (a
    thread block per row) and an RMSNorm over 30 (a warp per row, element loads)
    (test/codegen/long-row-norms.mlir)."""
    save("odd_row_norms", [
        helper.make_node("LayerNormalization", ["x", "g", "beta"], ["y"], axis=-1, epsilon=1e-5),
        helper.make_node("RMSNormalization", ["z", "w"], ["v"], axis=-1, epsilon=1e-6),
    ], [f32("x", ["batch", 4, 770]), f32("z", ["batch", 4, 30])],
        [f32("y", ["batch", 4, 770]), f32("v", ["batch", 4, 30])], [
        numpy_helper.from_array(rng.standard_normal(770).astype(np.float32), "g"),
        numpy_helper.from_array(rng.standard_normal(770).astype(np.float32), "beta"),
        numpy_helper.from_array(rng.standard_normal(30).astype(np.float32), "w"),
    ], opset=23)


def save_gelu_erf(rng):
    """BERT's MLP up: MatMul + bias + exact GELU spelled as exporters write it,
    0.5 x (1 + Erf(x / sqrt 2)) (gelu-erf.mlir)."""
    w = numpy_helper.from_array((rng.standard_normal((64, 128)) / 8).astype(np.float32), "w")
    bias = numpy_helper.from_array(rng.standard_normal(128).astype(np.float32), "bias")
    c = lambda n, v: numpy_helper.from_array(np.array(v, dtype=np.float32), n)
    save("gelu_erf", [
        helper.make_node("MatMul", ["x", "w"], ["mm"]),
        helper.make_node("Add", ["mm", "bias"], ["h"]),
        helper.make_node("Div", ["h", "sqrt2"], ["u"]),
        helper.make_node("Erf", ["u"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["e1"]),
        helper.make_node("Mul", ["h", "e1"], ["g"]),
        helper.make_node("Mul", ["g", "half"], ["y"]),
    ], [f32("x", [2, 16, 64])], [f32("y", [2, 16, 128])],
        [w, bias, c("sqrt2", 1.4142135381698608), c("one", 1.0), c("half", 0.5)])


def save_int_dtypes():
    """Every integer element type in kernels and in the constant folder: uint8, int8, int16,
    uint32 and uint64 inputs through wrapping arithmetic, unsigned comparison (a uint8 200 or a
    uint64 2^63 + 5 is large, not negative), Div/Mod, Cast, Neg/Abs, reductions and ArgMax, and
    a uint8 constant subgraph the folder computes (200 + 100 wraps to 44; max(200, 100) is 200).
    test/codegen/int-dtypes.mlir (types and literals), test/e2e/small_models_test.py (values)."""
    U8, I8, I16, U32, U64 = (TensorProto.UINT8, TensorProto.INT8, TensorProto.INT16,
                             TensorProto.UINT32, TensorProto.UINT64)
    vi = lambda name, t, shape=("batch", 16): helper.make_tensor_value_info(name, t, list(shape))
    c = lambda name, values, dt: numpy_helper.from_array(np.array(values, dtype=dt), name)
    n = helper.make_node
    save("int_dtypes", [
        n("Add", ["a", "u200"], ["u8_add"]),
        n("Max", ["a", "u128"], ["u8_max"]),
        n("Div", ["a", "u7"], ["a_div"]),
        n("Mod", ["a", "u5"], ["a_mod"]),
        n("Add", ["a_div", "a_mod"], ["u8_divmod"]),
        n("ReduceSum", ["a", "axis1"], ["u8_sum"], keepdims=0),
        n("Less", ["a", "u100"], ["u8_less"]),
        n("Add", ["cu200", "cu100"], ["folded_add"]),  # constants: 200 + 100 = 44 (uint8)
        n("Max", ["cu200", "cu100"], ["folded_max"]),  # 200, not 100
        n("Add", ["folded_add", "folded_max"], ["folded"]),
        n("Add", ["a", "folded"], ["u8_folded"]),
        n("Neg", ["b"], ["b_neg"]),
        n("Abs", ["b"], ["b_abs"]),
        n("Add", ["b_neg", "b_abs"], ["i8_neg_abs"]),
        n("Mod", ["b", "i5"], ["i8_mod"]),
        n("ReduceMax", ["b", "axis1"], ["i8_max"], keepdims=0),
        n("Cast", ["b"], ["i8_to_i32"], to=TensorProto.INT32),
        n("Mul", ["c", "c"], ["i16_sq"]),
        n("ReduceMin", ["c", "axis1"], ["i16_min"], keepdims=0),
        n("Cast", ["c"], ["i16_to_f32"], to=TensorProto.FLOAT),
        n("Add", ["d", "u4e9"], ["u32_add"]),
        n("Max", ["d", "u3e9"], ["u32_max"]),
        n("Max", ["e", "big"], ["u64_max"]),
        n("Sub", ["e", "one"], ["u64_sub"]),
        n("ArgMax", ["e"], ["u64_argmax"], axis=1, keepdims=0),
    ], [vi("a", U8), vi("b", I8), vi("c", I16), vi("d", U32), vi("e", U64)],
        [vi("u8_add", U8), vi("u8_max", U8), vi("u8_divmod", U8), vi("u8_sum", U8, ["batch"]),
         vi("u8_less", TensorProto.BOOL), vi("u8_folded", U8), vi("i8_neg_abs", I8),
         vi("i8_mod", I8), vi("i8_max", I8, ["batch"]), vi("i8_to_i32", TensorProto.INT32),
         vi("i16_sq", I16), vi("i16_min", I16, ["batch"]), vi("i16_to_f32", TensorProto.FLOAT),
         vi("u32_add", U32), vi("u32_max", U32), vi("u64_max", U64), vi("u64_sub", U64),
         vi("u64_argmax", TensorProto.INT64, ["batch"])], [
        c("u200", 200, np.uint8), c("u128", 128, np.uint8), c("u7", 7, np.uint8),
        c("u5", 5, np.uint8), c("u100", 100, np.uint8), c("axis1", [1], np.int64),
        c("cu200", [200] * 16, np.uint8), c("cu100", [100 + k for k in range(16)], np.uint8),
        c("i5", 5, np.int8), c("u4e9", 4000000000, np.uint32), c("u3e9", 3000000000, np.uint32),
        c("big", 2**63 + 5, np.uint64), c("one", 1, np.uint64),
    ])


def save_nan_int_semantics():
    """NaN through Relu, Clip and Max stays NaN (numpy / ONNX semantics), an int32 Pow computed
    in a kernel is exact: 3^k for k = 0..19 (3^19 = 1162261467; through pow(double) some come out
    one less), and Softmax of a fully masked (-inf) row is NaN. test/codegen/nan-int-semantics.mlir, test/e2e/small_models_test.py."""
    i32 = TensorProto.INT32
    save("nan_int_semantics", [
        helper.make_node("Relu", ["x"], ["relu"]),
        helper.make_node("Clip", ["x", "lo", "hi"], ["clip"]),
        helper.make_node("Max", ["x", "half"], ["max"]),
        helper.make_node("Mul", ["z", "zero"], ["z0"]),
        helper.make_node("Add", ["z0", "three"], ["z3"]),
        helper.make_node("Cast", ["z3"], ["base"], to=i32),
        helper.make_node("Pow", ["base", "k"], ["pow"]),
        helper.make_node("Add", ["z", "mask"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["softmax"], axis=-1),
    ], [f32("x", ["batch", 20]), f32("z", ["batch", 20])],
        [f32("relu", ["batch", 20]), f32("clip", ["batch", 20]), f32("max", ["batch", 20]),
         helper.make_tensor_value_info("pow", i32, ["batch", 20]), f32("softmax", [3, 20])], [
        numpy_helper.from_array(np.array(-1.0, np.float32), "lo"),
        numpy_helper.from_array(np.array(1.0, np.float32), "hi"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
        numpy_helper.from_array(np.array(3.0, np.float32), "three"),
        numpy_helper.from_array(np.arange(20, dtype=np.int32), "k"),
        # Softmax over masked scores: row 1 is masked everywhere (-inf: NaN, as in ONNX), rows 0
        # and 2 in a few columns (0 there).
        numpy_helper.from_array(np.where(np.isin(np.arange(60).reshape(3, 20), [3, 5, 47]) |
                                         (np.arange(60).reshape(3, 20) // 20 == 1),
                                         -np.inf, 0).astype(np.float32), "mask"),
    ])


def save_report_names():
    """Node and output names that need HTML escaping (kiln-compile --report, report.test)."""
    w = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    save("report_names", [
        helper.make_node("MatMul", ["x", "w"], ["m"], name='<b>MatMul & "co"</b>'),
        helper.make_node("Tanh", ["m"], ["t"], name="'tanh'<i>"),
        helper.make_node("Softmax", ["t"], ["out<&>"], name="<script>alert(1)</script>", axis=-1),
    ], [f32("x", [2, 8])], [f32("out<&>", [2, 8])],
        [numpy_helper.from_array(w, "w")])


def save_rotary_angles():
    """Rotary tables from run-time positions as Hugging Face's LlamaRotaryEmbedding exports them
    (head_dim 64, theta 10000): inv_freq [1, 32, 1] x float(position_ids) [B, 1, S] -> [B, 32, S],
    Transpose, Concat with itself, Cos and Sin. small_models_test.py compiles it --precision fp16
    with positions up to 4095: the angles must stay f32 (kiln-assign-precision), since in f16 an
    angle near 2048 is off by up to 1 rad."""
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, 64, 2, dtype=np.int64).astype(np.float32) / 64))
    save("rotary_angles", [
        helper.make_node("Cast", ["pos"], ["pf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["pf", "axis1"], ["pe"]),
        helper.make_node("MatMul", ["inv_freq", "pe"], ["freqs"]),
        helper.make_node("Transpose", ["freqs"], ["ft"], perm=[0, 2, 1]),
        helper.make_node("Concat", ["ft", "ft"], ["emb"], axis=-1),
        helper.make_node("Cos", ["emb"], ["cos"]),
        helper.make_node("Sin", ["emb"], ["sin"]),
    ], [helper.make_tensor_value_info("pos", TensorProto.INT64, [2, 8])],
        [f32("cos", [2, 8, 64]), f32("sin", [2, 8, 64])], [
        numpy_helper.from_array(inv_freq.astype(np.float32).reshape(1, 32, 1), "inv_freq"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
    ])


def save_skinny_gemms(rng):
    """GEMMs of few rows (decode steps) for kiln::gemmSkinny (skinny-gemm.mlir, and on a GPU
    small_models_test.py at fp16): 16 rows, K = 300 (not a multiple of 16: the last block's
    share is short), N = 200 (a partial column tile), bias + Relu; a batch of 3 single rows
    against a weight shared by the batch (rows fold to 3) with a residual, K = 2048 and N = 64
    (one column tile: split-K 8); one row, K = 1024, scaled by 0.5; and a weight that is a graph
    input read transposed (K-major), which the few-row kernel does not take (codegen falls back
    to the Hopper GEMM)."""
    f32c = lambda name, values: numpy_helper.from_array(np.asarray(values, np.float32), name)
    save("skinny_gemms", [
        helper.make_node("MatMul", ["x1", "w1"], ["m1"]),
        helper.make_node("Add", ["m1", "b1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["y1"]),
        helper.make_node("MatMul", ["x2", "w2"], ["m2"]),
        helper.make_node("Add", ["m2", "r2"], ["y2"]),
        helper.make_node("MatMul", ["x3", "w3"], ["m3"]),
        helper.make_node("Mul", ["m3", "half"], ["y3"]),
        helper.make_node("Transpose", ["w4"], ["w4t"], perm=[1, 0]),
        helper.make_node("MatMul", ["x4", "w4t"], ["y4"]),
    ], [f32("x1", [16, 300]), f32("x2", [3, 1, 2048]), f32("r2", [3, 1, 64]), f32("x3", [1, 1024]),
        f32("x4", [2, 128]), f32("w4", [96, 128])],
        [f32("y1", [16, 200]), f32("y2", [3, 1, 64]), f32("y3", [1, 128]), f32("y4", [2, 96])], [
        f32c("w1", rng.standard_normal((300, 200)) * 0.06),
        f32c("b1", rng.standard_normal(200) * 0.1),
        f32c("w2", rng.standard_normal((2048, 64)) * 0.02),
        f32c("w3", rng.standard_normal((1024, 128)) * 0.03),
        f32c("half", 0.5),
    ])


def save_skinny_rms_gemms(rng):
    """RMS norms read only by few-row GEMMs, which kiln-fuse-norm-into-gemm folds into the GEMMs'
    A loader (kiln::gemmSkinnyRms; skinny-rms-gemm.mlir, and on a GPU small_models_test.py at
    fp16). Each norm reads a GEMM's output (as in a decoder layer, where the residual stream comes
    from the previous GEMM's epilogue): 1 row, K = 512, read by two GEMMs (split-K 4 and 8);
    a batch of 8 single rows against a shared weight with a residual (R = 8); 3 rows (R does not
    divide the block's 256 threads) with a Relu; 16 rows."""
    f32c = lambda name, values: numpy_helper.from_array(np.asarray(values, np.float32), name)
    nodes, inits = [], []
    cases = [("1", (1, 64), 512, [("a", 64), ("b", 32)], 1e-6),
             ("2", (8, 1, 64), 256, [("c", 64)], 1e-5),
             ("3", (3, 64), 128, [("d", 64)], 1e-6),
             ("4", (16, 64), 128, [("e", 96)], 1e-6)]
    inputs, outputs = [], []
    for tag, shape, k, gemms, eps in cases:
        x, h, n = "x" + tag, "h" + tag, "n" + tag
        inputs.append(f32(x, list(shape)))
        nodes += [helper.make_node("MatMul", [x, "w0_" + tag], [h]),
                  helper.make_node("RMSNormalization", [h, "g" + tag], [n], axis=-1, epsilon=eps)]
        inits += [f32c("w0_" + tag, rng.standard_normal((64, k)) * 0.2),
                  f32c("g" + tag, 1.0 + 0.5 * rng.standard_normal(k))]
        for name, width in gemms:
            y = "y" + name
            out_shape = list(shape[:-1]) + [width]
            inits.append(f32c("w" + name, rng.standard_normal((k, width)) / np.sqrt(k)))
            if tag == "2":
                nodes += [helper.make_node("MatMul", [n, "w" + name], ["m" + name]),
                          helper.make_node("Add", ["m" + name, "r2"], [y])]
                inputs.append(f32("r2", out_shape))
            elif tag == "3":
                nodes += [helper.make_node("MatMul", [n, "w" + name], ["m" + name]),
                          helper.make_node("Relu", ["m" + name], [y])]
            else:
                nodes.append(helper.make_node("MatMul", [n, "w" + name], [y]))
            outputs.append(f32(y, out_shape))
    save("skinny_rms_gemms", nodes, inputs, outputs, inits, opset=23)


if __name__ == "__main__":
    main()
