#!/usr/bin/env python3
"""Rewrite an fp32 ONNX model as an fp16 export: what torch.onnx gives for `model.half()`.

Every float32 initializer, Constant (value, value_float, value_floats) / ConstantOfShape value,
Cast target, graph input/output and value_info becomes float16 (values beyond fp16's range saturate to +-65504, as exporters clamp
masks). Integer tensors are untouched; control-flow subgraphs are refused, and the result must pass
onnx.checker. kiln must compile the result as it is (no --precision):
the e2e test checks it against onnxruntime on the original fp32 model with the fp16 tolerance.

    to_fp16.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

F16_MAX = float(np.finfo(np.float16).max)


def half_tensor(t):
    if t.data_type != TensorProto.FLOAT:
        return t
    a = numpy_helper.to_array(t)
    finite = np.isfinite(a)
    a = np.where(finite, np.clip(a, -F16_MAX, F16_MAX), a).astype(np.float16)
    out = numpy_helper.from_array(a, t.name)
    return out


def half_type(vi):
    tt = vi.type.tensor_type
    if tt.elem_type == TensorProto.FLOAT:
        tt.elem_type = TensorProto.FLOAT16


def convert(model):
    g = model.graph
    inits = [half_tensor(t) for t in g.initializer]
    del g.initializer[:]
    g.initializer.extend(inits)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        half_type(vi)
    for node in g.node:
        if node.op_type == "Constant":
            # value_float / value_floats become an fp16 `value` tensor.
            for attr in list(node.attribute):
                if attr.name in ("value_float", "value_floats"):
                    vals = [attr.f] if attr.name == "value_float" else list(attr.floats)
                    arr = np.array(vals if attr.name == "value_floats" else vals[0], np.float32)
                    t = half_tensor(numpy_helper.from_array(arr, node.output[0]))
                    node.attribute.remove(attr)
                    node.attribute.append(onnx.helper.make_attribute("value", t))
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
            raise SystemExit("to_fp16: node '%s' (%s) has subgraphs, which are not converted" %
                             (node.name, node.op_type))
        for attr in node.attribute:
            if node.op_type == "Cast" and attr.name == "to" and attr.i == TensorProto.FLOAT:
                attr.i = TensorProto.FLOAT16
            if attr.type == onnx.AttributeProto.TENSOR:
                attr.t.CopyFrom(half_tensor(attr.t))
            if node.op_type == "CastLike":
                raise SystemExit("to_fp16: CastLike is not handled")
    return model


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    model = convert(onnx.load(argv[1]))
    onnx.checker.check_model(model)  # a model this script cannot convert fully fails here
    onnx.save(model, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
