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
    # Graphs that import but that codegen does not support yet: each must stop
    # kiln-compile with an `unsupported:` error naming the kernel or op.
    save("error_cumsum_runtime", [
        helper.make_node("CumSum", ["x", "axis"], ["y"]),
    ], [f32("x", [4, 8])], [f32("y", [4, 8])], [
        numpy_helper.from_array(np.array(1, np.int64), "axis"),
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


if __name__ == "__main__":
    main()
