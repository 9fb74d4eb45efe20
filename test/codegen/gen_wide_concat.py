#!/usr/bin/env python3
"""Writes the wide-Concat models of test/codegen/wide-concat.mlir (generated at test time: the
10,000-node model is 320 KB).

Usage: gen_wide_concat.py KIND N OUT.onnx
  neg     N Neg nodes of one input x [1, 4] feeding one Concat (axis 0)
  inputs  a Concat of N graph inputs x0..x<N-1>, each [1, 4]
  nested  N levels of y = Slice(Concat(y, y)) on x [4, 4]: a value read at 2^N coordinates
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    inits = []
    if kind == "neg":
        nodes = [helper.make_node("Neg", ["x"], [f"n{i}"], name=f"neg{i}") for i in range(n)]
        nodes.append(helper.make_node("Concat", [f"n{i}" for i in range(n)], ["y"], name="cat",
                                      axis=0))
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])]
        last = "y"
    elif kind == "inputs":
        nodes = [helper.make_node("Concat", [f"x{i}" for i in range(n)], ["y"], name="cat", axis=0)]
        inputs = [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [1, 4])
                  for i in range(n)]
        last = "y"
    elif kind == "nested":
        nodes, last = [], "x"
        for d in range(n):
            nodes.append(helper.make_node("Concat", [last, last], [f"c{d}"], name=f"c{d}", axis=0))
            nodes.append(helper.make_node("Slice", [f"c{d}", "s", "e"], [f"s{d}"], name=f"s{d}"))
            last = f"s{d}"
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])]
        inits = [numpy_helper.from_array(np.array([0], np.int64), "s"),
                 numpy_helper.from_array(np.array([4], np.int64), "e")]
    else:
        sys.exit("unknown kind " + kind)
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info(last, TensorProto.FLOAT, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, out)


if __name__ == "__main__":
    main()
