#!/usr/bin/env python3
"""What storing the rotary angles in 16 bits did (kiln-assign-precision before session 28).

1. numpy: the largest error of a Llama cos table (head_dim 64, theta 10000) when the positions,
   the inverse frequencies and the angles are rounded to f16 / bf16, as the old pass stored them,
   against the f32 angles rounded only once after cos (what kiln computes now).
2. onnxruntime (CPU): the tiny plain Llama export (test/models/llama_tiny_causal_dynamo.onnx)
   with its angles rounded to f16 before cos and sin, against the export itself, over random
   prompts: max|err| / max|ref| of the last 9 rows of logits. Random weights make the model
   insensitive; this is why the GPU kv-cache checks did not see the rounding.

    .venv/bin/python test/bench/rotary_rounding.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "models", "llama_tiny_causal_dynamo.onnx")


def bf16(x):
    """Round-to-nearest-even to bf16, returned as float32."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)


def f16(x):
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


def cos_table_errors():
    inv = (1.0 / 10000.0 ** (np.arange(0, 64, 2).astype(np.float32) / 64)).astype(np.float32)
    print("cos table, max |error| (16-bit angles as stored before, against f32 angles):")
    for pos in [16, 128, 512, 1024, 2048, 4000]:
        p = np.float32(pos)
        row = []
        for name, r in (("f16", f16), ("bf16", bf16)):
            ref = r(np.cos(inv * p))
            old = r(np.cos(r(r(inv) * r(p))))
            row.append("%s %.4f" % (name, np.abs(ref - old).max()))
        print("  position %4d: %s" % (pos, ", ".join(row)))


def tiny_model_logits():
    try:
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError as e:
        print("onnxruntime part skipped: %s" % e)
        return
    m = onnx.load(MODEL)
    nodes = m.graph.node
    first = [i for i, n in enumerate(nodes) if n.op_type == "Cos"][0]
    for n in nodes:
        if n.op_type in ("Cos", "Sin"):
            angle = n.input[0]
            n.input[0] = angle + "_rounded"
    nodes.insert(first, helper.make_node("Cast", [angle + "_f16"], [angle + "_rounded"],
                                         to=TensorProto.FLOAT))
    nodes.insert(first, helper.make_node("Cast", [angle], [angle + "_f16"],
                                         to=TensorProto.FLOAT16))
    exact = ort.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
    rounded = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    print("tiny Llama logits with the angles rounded to f16 (onnxruntime, last 9 rows):")
    for n in [13, 256, 1024, 1544]:
        ids = rng.integers(0, 1000, size=(1, n), dtype=np.int64)
        a = exact.run(None, {"input_ids": ids})[0][0, -9:]
        b = rounded.run(None, {"input_ids": ids})[0][0, -9:]
        print("  %4d tokens: max|err|/max|ref| %.1e, arg-max differs in %d rows" % (
            n, np.abs(a - b).max() / np.abs(a).max(), int((a.argmax(-1) != b.argmax(-1)).sum())))


if __name__ == "__main__":
    cos_table_errors()
    tiny_model_logits()
