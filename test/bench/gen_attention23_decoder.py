#!/usr/bin/env python3
"""Writes a decoder of real width whose KV cache is ONNX Attention-23's past_key/past_value
(the form of test/onnx/gen_onnx_tests.py's attention23_decoder, at the 0.8B Llama's sizes by
default: hidden 2048, 16 layers, 32 query / 8 KV heads of 64, MLP 5632 with SiLU gating,
vocabulary 32000), random float32 weights (seed 0) in external data beside the .onnx. It times
kiln-compile --kv-cache on a large model without torch (the programs of a --shape range each
import the file). No GPU or torch needed.

Usage: gen_attention23_decoder.py OUT.onnx [--layers N] [--hidden H] [--vocab V]
Then:  kiln-compile OUT.onnx -o out.kiln --kv-cache --max-seq-len 2304 \
           --shape input_ids=1..8x1..2048 --precision fp16      (the summary times every phase)
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--mlp", type=int, default=5632)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--positions", type=int, default=4096)
    a = p.parse_args()
    E, Hq, Hkv, D = a.hidden, a.heads, a.kv_heads, a.hidden // a.heads
    rng = np.random.default_rng(0)
    inits = []

    def weight(name, rows, cols):
        w = rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(rows ** -0.5)
        inits.append(numpy_helper.from_array(w, name))

    def i64(name, *v):
        inits.append(numpy_helper.from_array(np.array(v, np.int64), name))

    node = helper.make_node
    weight("wte", a.vocab, E)
    weight("wpe", a.positions, E)
    weight("lm_head", E, a.vocab)
    i64("qheads", Hq, D)
    i64("kvheads", Hkv, D)
    i64("width", E)
    i64("axes12", 1, 2)
    i64("one", 1)
    nodes = [node("Gather", ["wte", "input_ids"], ["tok"], axis=0),
             node("Gather", ["wpe", "position_ids"], ["pe"], axis=0),
             node("Add", ["tok", "pe"], ["h0"]),
             node("Shape", ["input_ids"], ["bs"]),
             node("Concat", ["bs", "qheads"], ["qshape"], axis=0),
             node("Concat", ["bs", "kvheads"], ["kvshape"], axis=0),
             node("Concat", ["bs", "width"], ["oshape"], axis=0),
             node("Cast", ["attention_mask"], ["keep"], to=TensorProto.BOOL),
             node("Unsqueeze", ["keep", "axes12"], ["keep3"]),
             node("Shape", ["attention_mask"], ["total"], start=1, end=2),
             node("Shape", ["input_ids"], ["seq_len"], start=1, end=2),
             node("Shape", ["input_ids"], ["batch"], start=0, end=1),
             node("Concat", ["batch", "one", "seq_len", "total"], ["mask_shape"], axis=0),
             node("Expand", ["keep3", "mask_shape"], ["keep4"])]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                            ["batch", "total_seq"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "seq"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", a.vocab])]
    for i in range(a.layers):
        x = f"l{i}."
        for proj, cols, shape in (("q", E, "qshape"), ("k", Hkv * D, "kvshape"),
                                  ("v", Hkv * D, "kvshape")):
            weight(x + "w" + proj, E, cols)
            nodes += [node("MatMul", [f"h{i}", x + "w" + proj], [x + proj + "0"]),
                      node("Reshape", [x + proj + "0", shape], [x + proj + "1"]),
                      node("Transpose", [x + proj + "1"], [x + proj], perm=[0, 2, 1, 3])]
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kv}",
                                                        TensorProto.FLOAT,
                                                        ["batch", Hkv, "past_seq", D]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kv}", TensorProto.FLOAT,
                                                         ["batch", Hkv, None, D]))
        weight(x + "wo", E, E)
        weight(x + "wgate", E, a.mlp)
        weight(x + "wup", E, a.mlp)
        weight(x + "wdown", a.mlp, E)
        nodes += [
            node("Attention", [x + "q", x + "k", x + "v", "keep4", f"past_key_values.{i}.key",
                               f"past_key_values.{i}.value"],
                 [x + "y", f"present.{i}.key", f"present.{i}.value"], is_causal=1),
            node("Transpose", [x + "y"], [x + "y1"], perm=[0, 2, 1, 3]),
            node("Reshape", [x + "y1", "oshape"], [x + "y2"]),
            node("MatMul", [x + "y2", x + "wo"], [x + "o"]),
            node("Add", [f"h{i}", x + "o"], [x + "h"]),
            node("MatMul", [x + "h", x + "wgate"], [x + "gate"]),
            node("Sigmoid", [x + "gate"], [x + "sig"]),
            node("Mul", [x + "gate", x + "sig"], [x + "silu"]),
            node("MatMul", [x + "h", x + "wup"], [x + "up"]),
            node("Mul", [x + "silu", x + "up"], [x + "act"]),
            node("MatMul", [x + "act", x + "wdown"], [x + "down"]),
            node("Add", [x + "h", x + "down"], [f"h{i + 1}"])]
    nodes.append(node("MatMul", [f"h{a.layers}", "lm_head"], ["logits"]))
    graph = helper.make_graph(nodes, "attention23_decoder", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    data = os.path.basename(a.out) + ".data"
    onnx.save(model, a.out, save_as_external_data=True, all_tensors_to_one_file=True,
              location=data, size_threshold=1024)
    print("wrote %s and %s" % (a.out, data))


if __name__ == "__main__":
    main()
