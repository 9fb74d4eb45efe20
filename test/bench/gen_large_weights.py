#!/usr/bin/env python3
"""Writes an ONNX model with 2 GiB of float32 weights (external data) to time kiln-compile's
artifact writing: 8 pairs of MatMuls [1, 4096] x [4096, 8192] x [8192, 4096], random weights
(seed 0). No GPU or torch needed.

Usage: gen_large_weights.py OUT.onnx       (writes OUT.onnx and OUT.data beside it)
Then:  kiln-compile OUT.onnx -o out.kiln --progress=lines    (the summary times every phase)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for i in range(8):
        inits.append(numpy_helper.from_array(rng.standard_normal((4096, 8192), dtype=np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"y{i}"]))
        inits.append(numpy_helper.from_array(rng.standard_normal((8192, 4096), dtype=np.float32), f"v{i}"))
        nodes.append(helper.make_node("MatMul", [f"y{i}", f"v{i}"], [f"z{i}"]))
        x = f"z{i}"
    graph = helper.make_graph(nodes, "large_weights",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4096])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 4096])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, out, save_as_external_data=True,
              location=os.path.splitext(os.path.basename(out))[0] + ".data")


if __name__ == "__main__":
    sys.exit(main())
