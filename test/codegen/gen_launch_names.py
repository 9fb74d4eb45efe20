#!/usr/bin/env python3
"""Generates the ONNX inputs of launch-names.mlir: two tiny two-block models whose nodes show
their module path the way the two torch.onnx exporters do.

  launch_names_legacy.onnx  node names "/h.0/attn/MatMul" (TorchScript exporter)
  launch_names_dynamo.onnx  node names "node_MatMul_3" with metadata_props
                            "pkg.torch.onnx.name_scopes" (dynamo exporter)
  launch_names_ranges.onnx  value ranges: int32 ids through a Cast into a 50-row table and
                            directly into a 30-row one; an int64 mask that indexes nothing

Both: token ids (int64 [1, 4]) index an embedding table of 50 rows, then per block a MatMul +
Add (attention stand-in, "attn") and a MatMul + Tanh (MLP stand-in, "mlp"); a final
LayerNormalization ("ln_f").

Run: .venv/bin/python3 test/codegen/gen_launch_names.py (writes into test/codegen/Inputs/).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs")
HIDDEN = 8
ROWS = 50


def nodes_and_inits(style):
    rng = np.random.default_rng(3)
    inits, nodes = [], []

    def init(name, shape):
        inits.append(numpy_helper.from_array(
            rng.standard_normal(shape).astype(np.float32) * 0.1, name))
        return name

    counter = [0]

    def node(op, ins, outs, scope, **attrs):
        """scope: the module path as a list, e.g. ['m', 'm.h.0', 'm.h.0.attn']."""
        counter[0] += 1
        if style == "legacy":
            # "/m/h.0/attn/MatMul": each module level relative to its parent, '/'-joined.
            path = [level[len(parent) + 1:] if parent else level
                    for parent, level in zip([""] + scope[:-1], scope)]
            name = "/" + "/".join(path + [f"{op}_{counter[0]}"])
            n = helper.make_node(op, ins, outs, name=name, **attrs)
        else:
            n = helper.make_node(op, ins, outs, name=f"node_{op}_{counter[0]}", **attrs)
            scopes = [""] + scope + [f"{op.lower()}_{counter[0]}"]
            entry = n.metadata_props.add()
            entry.key = "pkg.torch.onnx.name_scopes"
            entry.value = repr(scopes)
        nodes.append(n)

    node("Gather", [init("wte", [ROWS, HIDDEN]), "input_ids"], ["h0"], ["m", "m.wte"], axis=0)
    x = "h0"
    for b in range(2):
        blk = f"m.h.{b}"
        node("MatMul", [x, init(f"wq{b}", [HIDDEN, HIDDEN])], [f"q{b}"],
             ["m", blk, blk + ".attn", blk + ".attn.c_attn"])
        node("Add", [f"q{b}", x], [f"a{b}"], ["m", blk])
        node("MatMul", [f"a{b}", init(f"wf{b}", [HIDDEN, HIDDEN])], [f"f{b}"],
             ["m", blk, blk + ".mlp", blk + ".mlp.c_fc"])
        node("Tanh", [f"f{b}"], [f"t{b}"], ["m", blk, blk + ".mlp", blk + ".mlp.act"])
        x = f"t{b}"
    node("LayerNormalization", [x, init("g", [HIDDEN]), init("beta", [HIDDEN])], ["out"],
         ["m", "m.ln_f"], axis=-1)
    return nodes, inits


def save(style):
    nodes, inits = nodes_and_inits(style)
    graph = helper.make_graph(
        nodes, f"launch_names_{style}",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4, HIDDEN])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, f"launch_names_{style}.onnx"))


def save_ranges():
    """launch_names_ranges.onnx: int32 ids index a 50-row table through a Cast and a 30-row table
    directly (range [0, 29], the smaller); an int64 mask only multiplies (no range)."""
    rng = np.random.default_rng(4)
    big = numpy_helper.from_array(rng.standard_normal([50, HIDDEN]).astype(np.float32), "big")
    small = numpy_helper.from_array(rng.standard_normal([30, HIDDEN]).astype(np.float32), "small")
    nodes = [
        helper.make_node("Cast", ["ids"], ["ids64"], to=TensorProto.INT64),
        helper.make_node("Gather", ["big", "ids64"], ["e1"], axis=0),
        helper.make_node("Gather", ["small", "ids"], ["e2"], axis=0),
        helper.make_node("Add", ["e1", "e2"], ["e"]),
        helper.make_node("Cast", ["mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", "axes"], ["mask3"]),
        helper.make_node("Mul", ["e", "mask3"], ["out"]),
    ]
    axes = numpy_helper.from_array(np.array([2], dtype=np.int64), "axes")
    graph = helper.make_graph(
        nodes, "launch_names_ranges",
        [helper.make_tensor_value_info("ids", TensorProto.INT32, [1, 4]),
         helper.make_tensor_value_info("mask", TensorProto.INT64, [1, 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4, HIDDEN])],
        [big, small, axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "launch_names_ranges.onnx"))


if __name__ == "__main__":
    save("legacy")
    save("dynamo")
    save_ranges()
