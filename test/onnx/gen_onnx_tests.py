#!/usr/bin/env python3
"""Generates the tiny ONNX models under test/onnx/Inputs/ used by the importer lit tests.

Usage: python3 test/onnx/gen_onnx_tests.py   (needs the `onnx` and `numpy` packages)

Each model exercises one op family or one importer error. The outputs are committed; rerun
this script after changing it and commit the regenerated files. Models are written without
running the ONNX checker (some are deliberately invalid).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import cast_values

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs")
F, I64, I32, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL
INT64_MAX = np.iinfo(np.int64).max


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, inits=(), opset=18, extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="kiln-gen")
    m.ir_version = 8
    return m


def save(name, m):
    onnx.save(m, os.path.join(OUT, name + ".onnx"))


def node(op, ins, outs, name=None, **attrs):
    return helper.make_node(op, ins, outs, name=name or outs[0], **attrs)


# --- Plain causal-LM exports under --kv-cache (OnnxPositions.cpp) -----------------------------

def plain_decoders():
    """A one-layer causal decoder shaped like a plain causal-LM export (input_ids -> logits, no
    cache I/O): token and learned position embeddings, one attention of 2 heads of 16 with the
    causal mask LessOrEqual(key positions, query positions) of the positions Range, an lm_head.
    plain_decoder reads the positions as Hugging Face does (Gather(wpe, Unsqueeze(arange, 0)));
    the error_positions_* variants read them in ways kiln-compile --kv-cache cannot make the
    position_ids input, and plain_decoder_position_buffer takes them from a constant buffer
    (no Range: nothing to rewrite)."""
    rng = np.random.default_rng(7)
    V, E, H, D, P = 11, 32, 2, 16, 16
    w = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    i64 = lambda *v: np.array(v, np.int64)
    wpe = w(P, E)
    inits = [const("wte", w(V, E)), const("wpe", wpe), const("wq", w(E, E)),
             const("wk", w(E, E)), const("wv", w(E, E)), const("wo", w(E, V)),
             const("zero", np.array(0, np.int64)), const("one", np.array(1, np.int64)),
             const("axis0", i64(0)), const("axis1", i64(1)), const("heads", i64(H, D)),
             const("width", i64(E)), const("scale", np.array(0.5, np.float32)),
             const("keep", np.array(0.0, np.float32)),
             const("fill", np.array(-np.inf, np.float32))]

    def decoder(name, positions, extra=(), attention_mask=False, more_inputs=(), output="logits",
                ids_type=I64):
        nodes = [
            node("Shape", ["input_ids"], ["bs"], name="shape"),
            node("Shape", ["input_ids"], ["seq1"], name="shape_seq", start=1, end=2),
            node("Squeeze", ["seq1"], ["seq"], name="seq"),
            node("Range", ["zero", "seq", "one"], ["arange"], name="arange"),
            node("Gather", ["wte", "input_ids"], ["tok"], name="embed", axis=0),
        ] + positions + [
            node("Add", ["tok", "pe"], ["h0"], name="add_pe")] + list(extra) + [
            node("Concat", ["bs", "heads"], ["qshape"], name="qshape", axis=0),
            node("Concat", ["bs", "width"], ["oshape"], name="oshape", axis=0)]
        for x in "qkv":
            nodes += [node("MatMul", ["h", "w" + x], [x + "0"], name=x + "_proj"),
                      node("Reshape", [x + "0", "qshape"], [x + "1"], name=x + "_heads"),
                      node("Transpose", [x + "1"], [x], name=x + "_bhsd", perm=[0, 2, 1, 3])]
        nodes += [
            node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 1, 3, 2]),
            node("MatMul", ["q", "kt"], ["s0"], name="scores"),
            node("Mul", ["s0", "scale"], ["s1"], name="scaled"),
            node("Unsqueeze", ["arange", "axis0"], ["kv_pos"], name="kv_pos"),
            node("Unsqueeze", ["arange", "axis1"], ["q_pos"], name="q_pos"),
            node("LessOrEqual", ["kv_pos", "q_pos"], ["visible"], name="causal"),
            node("Where", ["visible_padded" if attention_mask else "visible", "keep", "fill"],
                 ["mask"], name="mask"),
            node("Add", ["s1", "mask"], ["s2"], name="masked"),
            node("Softmax", ["s2"], ["p"], name="softmax", axis=-1),
            node("MatMul", ["p", "v"], ["o0"], name="pv"),
            node("Transpose", ["o0"], ["o1"], name="o_bshd", perm=[0, 2, 1, 3]),
            node("Reshape", ["o1", "oshape"], ["o"], name="o_merge"),
            node("MatMul", ["o", "wo"], [output], name="lm_head")]
        inputs = [vi("input_ids", ids_type, ["batch", "seq"])] + list(more_inputs)
        if attention_mask:  # keys where the mask is 0 are hidden: [B, 1, 1, S] and'ed in
            inputs.append(vi("attention_mask", I64, ["batch", "seq"]))
            at = next(i for i, n in enumerate(nodes) if n.name == "mask")
            nodes[at:at] = [
                node("Cast", ["attention_mask"], ["key_kept"], name="key_kept", to=B),
                node("Unsqueeze", ["key_kept", "axes12"], ["key_kept4"], name="key_kept4"),
                node("And", ["visible", "key_kept4"], ["visible_padded"], name="padding")]
        save(name, model(nodes, inputs,
                         [vi(output, F, ["batch", "seq", V])], inits))

    hf = [node("Unsqueeze", ["arange", "axis0"], ["pos"], name="position_ids"),
          node("Gather", ["wpe", "pos"], ["pe"], name="position_embed", axis=0)]
    h = [node("Identity", ["h0"], ["h"], name="h")]
    decoder("plain_decoder", hf, h)
    # With an attention_mask input [B, S] (kiln-bind-generation-inputs makes it ones).
    inits.append(const("axes12", i64(1, 2)))
    decoder("plain_decoder_attention_mask", hf, h, attention_mask=True)
    # Positions plus one: the lookup reads them through an Add.
    decoder("error_positions_through_add", [
        node("Add", ["arange", "one"], ["shifted"], name="shift"),
        node("Unsqueeze", ["shifted", "axis0"], ["pos"], name="position_ids"),
        node("Gather", ["wpe", "pos"], ["pe"], name="position_embed", axis=0)], h)
    # Positions [S] with no batch dim (Gather(wpe, arange) broadcast over the batch).
    decoder("error_positions_no_batch_dim", [
        node("Gather", ["wpe", "arange"], ["pe"], name="position_embed", axis=0)], h)
    # A second float value computed from the positions that is no lookup (GatherND).
    decoder("error_positions_other_use", hf, [
        node("Unsqueeze", ["arange", "axis1"], ["nd_index"], name="nd_index"),
        node("GatherND", ["wpe", "nd_index"], ["pe2"], name="position_gather_nd"),
        node("Add", ["h0", "pe2"], ["h"], name="add_pe2")])
    # The position table transposed, looked up along axis 1.
    inits.append(const("wpe_t", np.ascontiguousarray(wpe.T)))
    decoder("error_positions_gather_axis", [
        node("Unsqueeze", ["arange", "axis0"], ["pos"], name="position_ids"),
        node("Gather", ["wpe_t", "pos"], ["pe_t"], name="position_embed", axis=1),
        node("Transpose", ["pe_t"], ["pe"], name="position_embed_bse", perm=[1, 2, 0])], h)
    # What the generation runtime cannot drive (kiln-paged-kv-cache's errors): a position_ids
    # input the graph never reads (its positions come from the Range), no `logits` output, and
    # int32 token ids (the runtime writes int64).
    decoder("error_unused_position_ids", hf, h,
            more_inputs=[vi("position_ids", I64, ["batch", "seq"])])
    decoder("error_no_logits", hf, h, output="hidden")
    decoder("error_input_ids_int32", hf, h, ids_type=I32)
    # Positions sliced from a constant buffer (older GPT-2 exports): no positions Range.
    inits.append(const("position_buffer", np.arange(P, dtype=np.int64)[None, :]))
    decoder("plain_decoder_position_buffer", [
        node("Slice", ["position_buffer", "axis0", "seq1", "axis1"], ["pos"], name="position_ids"),
        node("Gather", ["wpe", "pos"], ["pe"], name="position_embed", axis=0)], h)


# --- Decoders whose KV cache is an ONNX Attention's or TensorScatter's (--kv-cache) ----------

def cache_op_decoders():
    """Two-layer decoders (4 query heads, 2 KV heads of 16, learned positions read through a
    position_ids input, GQA) whose KV cache is ONNX ops, with the Hugging Face cache I/O names
    (past_key_values.{i}.key/.value in, present.{i}.key/.value out); kiln-compile --kv-cache maps
    them onto its paged cache (docs/generation.md, form a):
    - attention23_decoder (opset 23): Attention with past_key/past_value [B, 2, past, 16] and
      present_key/present_value outputs, is_causal = 1 (offset: the past length) and the boolean
      attn_mask of attention_mask [B, past + S] (1 = attend);
    - tensor_scatter_decoder (opset 24): a static cache [B, 2, max_seq, 16] per layer written in
      place by TensorScatter at write_indices [B] (the past lengths), read by Attention with
      nonpad_kv_seqlen = write_indices + S and is_causal = 1 (offset: nonpad_kv_seqlen - S), as
      the ONNX spec describes the in-place KV cache."""
    rng = np.random.default_rng(23)
    V, E, Hq, Hkv, D, P, layers = 11, 64, 4, 2, 16, 32, 2
    w = lambda *shape: (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    i64 = lambda *v: np.array(v, np.int64)
    inits = [const("wte", w(V, E)), const("wpe", w(P, E)), const("wlm", w(E, V)),
             const("qheads", i64(Hq, D)), const("kvheads", i64(Hkv, D)), const("width", i64(E))]
    for i in range(layers):
        inits += [const(f"wq{i}", w(E, E)), const(f"wk{i}", w(E, Hkv * D)),
                  const(f"wv{i}", w(E, Hkv * D)), const(f"wo{i}", w(E, E))]

    def decoder(name, opset, cache_dim, attend, extra_inputs, extra_nodes, extra_inits,
                bshd=False, present_dim=None):
        nodes = [node("Gather", ["wte", "input_ids"], ["tok"], name="embed", axis=0),
                 node("Gather", ["wpe", "position_ids"], ["pe"], name="position_embed", axis=0),
                 node("Add", ["tok", "pe"], ["h0"], name="add_pe"),
                 node("Shape", ["input_ids"], ["bs"], name="shape"),
                 node("Concat", ["bs", "qheads"], ["qshape"], name="qshape", axis=0),
                 node("Concat", ["bs", "kvheads"], ["kvshape"], name="kvshape", axis=0),
                 node("Concat", ["bs", "width"], ["oshape"], name="oshape", axis=0)] + extra_nodes
        inputs = [vi("input_ids", I64, ["batch", "seq"])] + extra_inputs
        outputs = [vi("logits", F, ["batch", "seq", V])]
        for i in range(layers):
            x = f"l{i}."
            for proj, shape in (("q", "qshape"), ("k", "kvshape"), ("v", "kvshape")):
                nodes += [node("MatMul", [f"h{i}", f"w{proj}{i}"], [x + proj + "0"],
                               name=x + proj + "_proj"),
                          node("Reshape", [x + proj + "0", shape], [x + proj + "1"],
                               name=x + proj + "_heads"),
                          node("Transpose", [x + proj + "1"], [x + proj], name=x + proj + "_bhsd",
                               perm=[0, 2, 1, 3])]
            for kv in ("key", "value"):
                dims = ["batch", cache_dim, Hkv, D] if bshd else ["batch", Hkv, cache_dim, D]
                inputs.append(vi(f"past_key_values.{i}.{kv}", F, dims))
                dims = ["batch", present_dim, Hkv, D] if bshd else ["batch", Hkv, present_dim, D]
                outputs.append(vi(f"present.{i}.{kv}", F, dims))
            nodes += attend(i, x) + [
                node("Transpose", [x + "y"], [x + "y1"], name=x + "y_bshd", perm=[0, 2, 1, 3]),
                node("Reshape", [x + "y1", "oshape"], [x + "y2"], name=x + "y_merge"),
                node("MatMul", [x + "y2", f"wo{i}"], [x + "o"], name=x + "o_proj"),
                node("Add", [f"h{i}", x + "o"], [f"h{i + 1}"], name=x + "residual")]
        nodes.append(node("MatMul", [f"h{layers}", "wlm"], ["logits"], name="lm_head"))
        save(name, model(nodes, inputs, outputs, inits + extra_inits, opset=opset))

    def attention23(i, x):
        return [node("Attention", [x + "q", x + "k", x + "v", "keep4", f"past_key_values.{i}.key",
                                   f"past_key_values.{i}.value"],
                     [x + "y", f"present.{i}.key", f"present.{i}.value"], name=x + "attention",
                     is_causal=1)]

    a23_inputs = [vi("attention_mask", I64, ["batch", "total_seq"]),
                  vi("position_ids", I64, ["batch", "seq"])]
    # [B, 1, S, past + S]: onnxruntime wants the mask's query dim to be S.
    a23_mask = [node("Cast", ["attention_mask"], ["keep"], name="keep", to=B),
                node("Unsqueeze", ["keep", "axes12"], ["keep3"], name="keep3"),
                node("Shape", ["attention_mask"], ["total"], name="total", start=1, end=2),
                node("Shape", ["input_ids"], ["seq_len"], name="seq_len", start=1, end=2),
                node("Shape", ["input_ids"], ["batch"], name="batch", start=0, end=1),
                node("Concat", ["batch", "one", "seq_len", "total"], ["mask_shape"],
                     name="mask_shape", axis=0),
                node("Expand", ["keep3", "mask_shape"], ["keep4"], name="keep4")]
    a23_inits = [const("axes12", i64(1, 2)), const("one", i64(1))]
    decoder("attention23_decoder", 23, "past_seq", attention23, a23_inputs, a23_mask, a23_inits)

    def tensor_scatter(mode="linear", mask="", **attention_attrs):
        """The cache writes of layer i and the Attention over them (attn_mask `mask`, more
        attributes in `attention_attrs`)."""
        def attend(i, x):
            return [node("TensorScatter", [f"past_key_values.{i}.{kv}", x + kv[0], "write_indices"],
                         [f"present.{i}.{kv}"], name=f"{x}{kv}_cache_write", mode=mode)
                    for kv in ("key", "value")] + [
                node("Attention", [x + "q", f"present.{i}.key", f"present.{i}.value", mask, "",
                                   "", "nonpad"], [x + "y"], name=x + "attention", is_causal=1,
                     **attention_attrs)]
        return attend

    nonpad = [node("Shape", ["input_ids"], ["seq_len"], name="seq_len", start=1, end=2),
              node("Add", ["write_indices", "seq_len"], ["nonpad"], name="nonpad")]
    scatter_inputs = [vi("position_ids", I64, ["batch", "seq"]), vi("write_indices", I64, ["batch"])]
    decoder("tensor_scatter_decoder", 24, "max_seq", tensor_scatter(), scatter_inputs, nonpad, [])
    # A static export declares its present caches with their fixed length.
    decoder("tensor_scatter_decoder_static", 24, P, tensor_scatter(), scatter_inputs, nonpad, [],
            present_dim=P)
    # The cache in [B, M, Hkv, D] (TensorScatter axis 1), transposed to heads for the Attention.
    def bshd_cache(i, x):
        return [node("TensorScatter", [f"past_key_values.{i}.{kv}", x + kv[0] + "1",
                                       "write_indices"], [f"present.{i}.{kv}"],
                     name=f"{x}{kv}_cache_write", axis=1) for kv in ("key", "value")] + [
            node("Transpose", [f"present.{i}.{kv}"], [x + kv + "_bhsd"], name=x + kv + "_bhsd",
                 perm=[0, 2, 1, 3]) for kv in ("key", "value")] + [
            node("Attention", [x + "q", x + "key_bhsd", x + "value_bhsd", "", "", "", "nonpad"],
                 [x + "y"], name=x + "attention", is_causal=1)]

    decoder("tensor_scatter_decoder_bshd", 24, "max_seq", bshd_cache, scatter_inputs, nonpad, [],
            bshd=True)
    # What the paged attention does not compute, on a cache: a sliding window (Attention-25) and
    # softcap (errors naming the node).
    decoder("error_tensor_scatter_decoder_window", 25, "max_seq",
            tensor_scatter(left_window_size=3), scatter_inputs, nonpad, [])
    # A window that holds every position of a sequence of up to 16 tokens (the query and the 15
    # before it): with --max-seq-len 16 or less it is the paged attention's causal attention.
    decoder("tensor_scatter_decoder_window_wide", 25, "max_seq",
            tensor_scatter(left_window_size=15), scatter_inputs, nonpad, [])

    def softcapped(i, x):
        node_ = attention23(i, x)[0]
        node_.attribute.append(helper.make_attribute("softcap", 5.0))
        return [node_]

    decoder("error_attention23_decoder_softcap", 23, "past_seq", softcapped, a23_inputs, a23_mask,
            a23_inits)
    # write_indices of the wrong type (int32): the TensorScatter's error, with --kv-cache too.
    decoder("error_tensor_scatter_decoder_widx_i32", 24, "max_seq", tensor_scatter(),
            [vi("position_ids", I64, ["batch", "seq"]), vi("write_indices", I32, ["batch"])],
            [node("Shape", ["input_ids"], ["seq_len64"], name="seq_len", start=1, end=2),
             node("Cast", ["seq_len64"], ["seq_len"], name="seq_len32", to=I32),
             node("Add", ["write_indices", "seq_len"], ["nonpad32"], name="nonpad32"),
             node("Cast", ["nonpad32"], ["nonpad"], name="nonpad", to=I64)], [])
    # An attention_mask over a static cache's 32 positions: kiln masks by its own lengths and
    # cannot bind it (an error naming the input).
    decoder("error_tensor_scatter_decoder_static_mask", 24, P, tensor_scatter(mask="keep4"),
            scatter_inputs + [vi("attention_mask", I64, ["batch", P])], nonpad + [
                node("Cast", ["attention_mask"], ["keep"], name="keep", to=B),
                node("Unsqueeze", ["keep", "axes12"], ["keep4"], name="keep4")],
            [const("axes12", i64(1, 2))])
    # A ring buffer (mode circular): kiln's paged cache keeps every position (an error).
    decoder("error_tensor_scatter_decoder_circular", 24, "max_seq", tensor_scatter("circular"),
            scatter_inputs, nonpad, [])
    # An attention mask computed from the write indices over the cache's positions: under
    # --kv-cache the runtime owns both (an error naming the op that reads write_indices).
    decoder("error_tensor_scatter_decoder_mask", 24, "max_seq", tensor_scatter(mask="visible"), scatter_inputs, nonpad + [
        node("Shape", ["past_key_values.0.key"], ["cache_len1"], name="cache_len", start=2, end=3),
        node("Squeeze", ["cache_len1"], ["cache_len"], name="cache_len_scalar"),
        node("Range", ["zero", "cache_len", "one_step"], ["slots"], name="slots"),
        node("Unsqueeze", ["nonpad", "axis1"], ["nonpad2"], name="nonpad2"),
        node("Less", ["slots", "nonpad2"], ["written"], name="written"),
        node("Unsqueeze", ["written", "axes12"], ["visible"], name="visible")],
        [const("zero", np.array(0, np.int64)), const("one_step", np.array(1, np.int64)),
         const("axis1", i64(1)), const("axes12", i64(1, 2))])


# --- Pad and Einsum -------------------------------------------------------------------------

def pads():
    """Pad in every mode: pads and constant_value as initializers, a run-time constant_value,
    opset-18 axes, negative pads that crop, opset 19's wrap; Pad-2's attributes (opset 7)."""
    x = [vi("x", F, [2, 3, 4]), vi("v", F, [])]
    P = lambda name, v: const(name, np.array(v, np.int64))
    nodes = [
        # constant 1.5; pads [begin0, begin1, begin2, end0, end1, end2], -1 crops dim 2's end.
        node("Pad", ["x", "p_const", "one_half"], ["constant"]),
        # no constant_value: 0.
        node("Pad", ["x", "p_zero"], ["zero"]),
        # run-time constant_value (a graph input).
        node("Pad", ["x", "p_zero", "v"], ["runtime_value"]),
        node("Pad", ["x", "p_reflect"], ["reflect"], mode="reflect"),
        node("Pad", ["x", "p_edge", "", "axes_last"], ["edge_axes"], mode="edge"),
        node("Pad", ["x", "p_wrap"], ["wrap"], mode="wrap"),
        # edge with crops on both sides of dim 1 and a pad on dim 2.
        node("Pad", ["x", "p_crop"], ["edge_crop"], mode="edge"),
    ]
    inits = [P("p_const", [0, 1, 2, 1, 0, -1]), const("one_half", np.float32(1.5)),
             P("p_zero", [1, 0, 0, 0, 0, 2]), P("p_reflect", [1, 2, 0, 0, 1, 3]),
             P("p_edge", [2, 3]), const("axes_last", np.array([-1], np.int64)),
             P("p_wrap", [0, 1, 3, 1, 2, 4]), P("p_crop", [0, -1, 1, 0, -1, 0])]
    outs = [vi(o.output[0], F, None) for o in nodes]
    save("pad", model(nodes, x, outs, inits, opset=19))
    # Pads wider than the axis: numpy.pad's (the ONNX reference's) repeated reflection and
    # wrap; onnxruntime refuses the reflect ones and gives zeros for the wrap ones.
    save("pad_wide", model([
        node("Pad", ["x", "p_wide", "", "axes_1"], ["reflect_wide"], mode="reflect"),
        node("Pad", ["x", "p_wide", "", "axes_1"], ["wrap_wide"], mode="wrap"),
    ], x[:1], [vi("reflect_wide", F, None), vi("wrap_wide", F, None)],
        [P("p_wide", [5, 4]), const("axes_1", np.array([1], np.int64))], opset=19))
    # Pad-2: pads and value as attributes.
    save("pad_opset7", model([
        node("Pad", ["x"], ["reflect"], mode="reflect", pads=[0, 1, 1, 1, 2, 0]),
        node("Pad", ["x"], ["constant"], pads=[1, 0, 0, 0, 0, 1], value=7.0),
    ], x[:1], [vi("reflect", F, None), vi("constant", F, None)], opset=7))
    # Pad-24 in a model of opset 24: a bool tensor (edge), float16 and int64 constants.
    save("pad_opset24", model([
        node("Cast", ["x"], ["xi"], to=I64),
        node("Pad", ["xi", "p", "i_value"], ["constant_int"]),
        node("Greater", ["x", "zero"], ["b"]),
        node("Pad", ["b", "p"], ["edge_bool"], mode="edge"),
        node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
        node("Pad", ["h", "p", "h_value"], ["constant_f16"]),
    ], x[:1], [vi("constant_int", I64, None), vi("edge_bool", B, None),
               vi("constant_f16", TensorProto.FLOAT16, None)],
        [const("zero", np.float32(0)), P("p", [1, 0, 1, 0, 2, 1]), const("i_value", np.int64(-7)),
         const("h_value", np.float16(-2.5))], opset=24))

    # Errors, each naming the node.
    y = [vi("y", F, None)]
    xi = x[:1]
    pad = lambda ins, opset=19, inits=(), inputs=xi, **a: model(
        [node("Pad", ins, ["y"], name="pad", **a)], inputs, y, inits, opset=opset)
    save("error_pad_runtime_pads", pad(["x", "p"], inputs=xi + [vi("p", I64, [6])]))
    save("error_pad_mode", pad(["x", "p"], inits=[P("p", [0] * 6)], mode="symmetric"))
    save("error_pad_wrap18", pad(["x", "p"], opset=18, inits=[P("p", [0] * 6)], mode="wrap"))
    save("error_pad_attribute", pad(["x", "p"], inits=[P("p", [0] * 6)], pads=[0] * 6))
    save("error_pad_no_pads", pad(["x"], opset=7))
    save("error_pad_count", pad(["x", "p"], inits=[P("p", [1, 1, 1, 1])]))
    save("error_pad_rank", pad(["x", "p"], inits=[P("p", [[0] * 6])]))
    save("error_pad_crop", pad(["x", "p"], inits=[P("p", [0, -2, 0, 0, -2, 0])]))
    save("error_pad_axes", pad(["x", "p", "", "a"], inits=[P("p", [1, 1, 1, 1]),
                                                            P("a", [0, -3])]))
    save("error_pad_axis_range", pad(["x", "p", "", "a"], inits=[P("p", [1, 1]), P("a", [3])]))
    save("error_pad_value_type", pad(["x", "p", "c"], inits=[P("p", [0] * 6),
                                                              const("c", np.int64(1))]))
    save("error_pad_empty_edge", pad(["x", "p"], inputs=[vi("x", F, [2, 0])],
                                     inits=[P("p", [0, 1, 0, 1])], mode="edge"))
    save("error_pad_table", pad(["x", "p"], inits=[P("p", [0, 0, 2 ** 24, 0, 0, 0])],
                                mode="reflect"))
    save("error_pad_pads_int32", pad(["x", "p"], inits=[const("p", np.zeros(6, np.int32))]))
    save("error_pad_huge", pad(["x", "p"], inits=[P("p", [0, 0, 2 ** 62, 0, 0, 0])]))


def tensor_scatters():
    """TensorScatter-24 (a KV cache written in place): linear with write indices (4-D, the
    default axis -2), circular with any write indices (4-D, axis 2, wrapping), 3-D without write
    indices (axis 1), float16; and its errors, each naming the node."""
    H = TensorProto.FLOAT16
    ts = lambda ins, out, **a: node("TensorScatter", ins, [out], **a)
    save("tensor_scatter", model(
        [ts(["past", "update", "write_indices"], "present")],
        [vi("past", F, [2, 3, 10, 4]), vi("update", F, [2, 3, 3, 4]),
         vi("write_indices", I64, [2])], [vi("present", F, [2, 3, 10, 4])], opset=24))
    save("tensor_scatter_circular", model(
        [ts(["past", "update", "write_indices_any"], "present", mode="circular", axis=2)],
        [vi("past", F, [2, 3, 8, 4]), vi("update", F, [2, 3, 5, 4]),
         vi("write_indices_any", I64, [2])], [vi("present", F, [2, 3, 8, 4])], opset=24))
    save("tensor_scatter_3d", model(
        [ts(["past", "update"], "present", axis=1)],
        [vi("past", H, [3, 6, 5]), vi("update", H, [3, 2, 5])], [vi("present", H, [3, 6, 5])],
        opset=24))
    err = lambda name, past, upd, **a: save(name, model(
        [node("TensorScatter", ["past", "update"], ["present"], name="scatter", **a)],
        [vi("past", F, past), vi("update", F, upd)], [vi("present", F, None)], opset=24))
    err("error_tensor_scatter_axis0", [2, 4, 3], [2, 4, 3], axis=0)
    err("error_tensor_scatter_mode", [2, 4, 3], [2, 1, 3], mode="wrap")
    err("error_tensor_scatter_fit", [2, 4, 3], [2, 5, 3], axis=1)
    save("error_tensor_scatter_indices", model(
        [node("TensorScatter", ["past", "update", "w"], ["present"], name="scatter")],
        [vi("past", F, [2, 4, 3]), vi("update", F, [2, 1, 3]), vi("w", I32, [2])],
        [vi("present", F, None)], opset=24))


def einsums():
    """Einsum: batched matmul, transpose, reduction, diagonal, trace, outer product, ellipsis
    with a size-1 batch dim, implicit outputs, spaces, integers, three operands; bf16."""
    inputs = [vi("a", F, [2, 3, 4]), vi("b", F, [2, 4, 5]), vi("m", F, [4, 4]), vi("v", F, [3]),
              vi("e1", F, [1, 3, 4]), vi("e2", F, [5, 4, 6]), vi("w", F, [3, 4])]
    E = lambda ins, out, eq: node("Einsum", ins, [out], equation=eq)
    nodes = [
        E(["a", "b"], "bmm", "bij,bjk->bik"),
        E(["m"], "transpose", "ij->ji"),
        E(["m"], "row_sum", "ij->i"),
        E(["m"], "diagonal", "ii->i"),
        E(["m"], "trace", "ii"),
        E(["v", "w"], "outer", "i,jk->ijk"),
        E(["e1", "e2"], "ellipsis", "...ij,...jk->...ik"),
        E(["a", "b"], "implicit", "b i j , b j k"),
        E(["a"], "sum_all", "bij->"),
        E(["a", "w"], "contract_two", "bij,ij->b"),
        E(["w", "m", "b"], "chain", "ij,jk,bkl->bil"),
        E(["a", "w"], "broadcast_mul", "bij,ij->bij"),
        E(["e1", "e2"], "label_broadcast", "bij,bjk->bik"),  # b: 1 against 5 broadcasts
        node("Cast", ["m"], ["mi"], to=I64),
        E(["mi", "mi"], "int_matmul", "ij,jk->ik"),
        E(["e1"], "ellipsis_transpose", "...ij->...ji"),
    ]
    outs = [vi(o.output[0], I64 if o.output[0] == "int_matmul" else F, None)
            for o in nodes if o.output[0] != "mi"]
    save("einsum", model(nodes, inputs, outs, opset=18))
    BF = TensorProto.BFLOAT16
    save("einsum_bf16", model([
        node("Cast", ["a"], ["a16"], to=BF), node("Cast", ["b"], ["b16"], to=BF),
        node("Cast", ["m"], ["m16"], to=BF),
        E(["a16", "b16"], "bmm16", "bij,bjk->bik"),
        E(["m16"], "diag16", "ii->i"),
        E(["m16", "m16"], "outer16", "ij,kl->ijkl"),
        E(["a16"], "sum16", "bij->j"),
        node("Cast", ["bmm16"], ["bmm"], to=F), node("Cast", ["diag16"], ["diagonal"], to=F),
        node("Cast", ["outer16"], ["outer"], to=F), node("Cast", ["sum16"], ["sum"], to=F),
    ], inputs[:3], [vi(o, F, None) for o in ["bmm", "diagonal", "outer", "sum"]], opset=18))

    y = [vi("y", F, None)]
    ein = lambda ins, inputs, opset=18, **a: model(
        [node("Einsum", ins, ["y"], name="einsum", **a)], inputs, y, opset=opset)
    m = [vi("m", F, [4, 4])]
    save("error_einsum_equation", ein(["m"], m, equation="ij->j.i"))
    save("error_einsum_char", ein(["m"], m, equation="i1->i"))
    save("error_einsum_non_ascii", ein(["m"], m, equation="\u00efj->j"))
    save("error_einsum_two_ellipses", ein(["m"], m, equation="......->"))
    save("error_einsum_two_outputs", ein(["m"], m, equation="ij->i->j"))
    save("error_einsum_terms", ein(["m"], m, equation="ij,jk->ik"))
    save("error_einsum_rank", ein(["m"], m, equation="ijk->i"))
    save("error_einsum_ellipsis_rank", ein(["m"], m, equation="...ijk->i"))
    save("error_einsum_size", ein(["m", "v"], m + [vi("v", F, [3])], equation="ij,j->i"))
    save("error_einsum_broadcast", ein(["a", "b"], [vi("a", F, [2, 4]), vi("b", F, [3, 4])],
                                       equation="...i,...i->..."))
    save("error_einsum_output_label", ein(["m"], m, equation="ij->k"))
    save("error_einsum_output_ellipsis", ein(["e"], [vi("e", F, [2, 3])], equation="...i->i"))
    save("error_einsum_diagonal_size", ein(["e"], [vi("e", F, [1, 3])], equation="ii->i"))
    save("error_einsum_output_repeat", ein(["m"], m, equation="ij->ii"))
    save("error_einsum_bool", ein(["c"], [vi("c", B, [2])], equation="i->"))
    save("error_einsum_types", ein(["m", "n"], m + [vi("n", I64, [4])], equation="ij,j->i"))
    save("error_einsum_no_equation", ein(["m"], m))
    save("error_einsum_no_operands", ein([], [], equation="->"))
    save("error_einsum_empty_operand", ein(["m", ""], m, equation="ij,j->i"))
    save("error_einsum_opset", ein(["m"], m, opset=11, equation="ij->ji"))
    save("error_einsum_huge", ein(["v", "v", "v"], [vi("v", F, [2 ** 14])],
                                  equation="i,j,k->ijk"))


# --- elementwise ----------------------------------------------------------------------------

def elementwise():
    unary = ["Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Tanh", "Erf", "Sigmoid", "Relu", "Cos",
             "Sin", "Identity"]
    binary = ["Add", "Sub", "Mul", "Div"]
    nodes = [node(op, ["x"], [op.lower()]) for op in unary]
    nodes += [node(op, ["x", "b"], [op.lower()]) for op in binary]
    nodes += [
        node("Pow", ["x", "two"], ["pow"]),
        node("Max", ["x", "b", "y"], ["max"]),
        node("Min", ["x"], ["min"]),
        node("Clip", ["x", "lo", "hi"], ["clip"]),
        node("Cast", ["x"], ["cast"], to=I32),
    ]
    outs = [vi(op.lower(), F, None) for op in unary + binary + ["Pow", "Max", "Min", "Clip"]]
    outs.append(vi("cast", I32, None))
    inits = [const("b", np.array([1, 2, 3], np.float32)), const("two", np.int64(2)),
             const("lo", np.float32(-1)), const("hi", np.float32(1))]
    save("elementwise", model(nodes, [vi("x", F, ["n", 3]), vi("y", F, [1, 1])], outs, inits))


def logic():
    nodes = [node(op, ["x", "y"], [op.lower()]) for op in
             ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]]
    nodes += [
        node("And", ["less", "greater"], ["and"]),
        node("Or", ["less", "greater"], ["or"]),
        node("Not", ["and"], ["not"]),
        node("IsNaN", ["x"], ["isnan"]),
        node("Where", ["or", "x", "zero"], ["where"]),
    ]
    outs = [vi(n, B, None) for n in ["equal", "lessorequal", "greaterorequal", "not", "isnan"]]
    outs.append(vi("where", F, None))
    save("logic", model(nodes, [vi("x", F, [2, 3]), vi("y", F, [3])], outs,
                        [const("zero", np.float32(0))]))


def gelu():
    nodes = [node("Gelu", ["x"], ["erf"]), node("Gelu", ["x"], ["tanh"], approximate="tanh")]
    save("gelu", model(nodes, [vi("x", F, [4])], [vi("erf", F, None), vi("tanh", F, None)], opset=20))


def folding():
    """Elementwise ops on constants fold at import."""
    nodes = [node("Add", ["a", "b"], ["sum"]), node("Mul", ["sum", "a"], ["prod"]),
             node("Cast", ["prod"], ["int"], to=I64)]
    inits = [const("a", np.array([1, 2], np.float32)), const("b", np.array([3, 4], np.float32))]
    save("folding", model(nodes, [], [vi("int", I64, [2])], inits))


# --- shape ops ------------------------------------------------------------------------------

def shape_ops():
    nodes = [
        node("Shape", ["x"], ["shape"]),
        node("Shape", ["x"], ["shape_mid"], start=1, end=-1),
        node("Size", ["x"], ["size"]),
        node("ConstantOfShape", ["shape"], ["ones"],
             value=numpy_helper.from_array(np.array([1], np.int64))),
        node("ConstantOfShape", ["shape_mid"], ["zeros"]),
        node("Constant", [], ["seq_idx"], value_ints=[1]),
        node("Gather", ["shape", "seq_idx"], ["seq"], axis=0),
        node("Squeeze", ["seq"], ["seq0"]),
        node("Constant", [], ["start"], value=numpy_helper.from_array(np.int64(0))),
        node("Constant", [], ["delta"], value_int=1),
        node("Range", ["start", "seq0", "delta"], ["range"]),
        node("Constant", [], ["axis"], value=numpy_helper.from_array(np.int64(0))),
        node("CumSum", ["range", "axis"], ["cumsum"]),
        node("CumSum", ["range", "axis"], ["cumsum_rev"], exclusive=1, reverse=1),
        node("Constant", [], ["half"], value_float=0.5),
        node("Constant", [], ["floats"], value_floats=[1.0, 2.0]),
    ]
    outs = [vi("shape", I64, None), vi("shape_mid", I64, None), vi("size", I64, None),
            vi("ones", I64, None), vi("zeros", F, None), vi("range", I64, None),
            vi("cumsum", I64, None), vi("cumsum_rev", I64, None), vi("half", F, None),
            vi("floats", F, None)]
    save("shape_ops", model(nodes, [vi("x", F, ["batch", "seq", 4])], outs))


def runtime_cumsum():
    """CumSum on a runtime tensor stays a kiln.cumsum."""
    nodes = [node("CumSum", ["x", "axis"], ["y"])]
    save("cumsum", model(nodes, [vi("x", I64, ["b", "s"])], [vi("y", I64, None)],
                         [const("axis", np.int64(-1))]))


# --- movement -------------------------------------------------------------------------------

def movement():
    nodes = [
        node("Reshape", ["x", "shape_0m1"], ["reshape"]),
        node("Reshape", ["x", "shape_zero"], ["reshape_allowzero"], allowzero=1),
        node("Unsqueeze", ["x", "axes_unsq"], ["unsqueeze"]),
        node("Squeeze", ["unsqueeze"], ["squeeze_all"]),
        node("Squeeze", ["unsqueeze", "axes_sq"], ["squeeze"]),
        node("Flatten", ["x"], ["flatten"], axis=-1),
        node("Transpose", ["x"], ["transpose"]),
        node("Transpose", ["x"], ["transpose_perm"], perm=[1, 0, 2]),
        node("Concat", ["x", "x"], ["concat"], axis=-1),
        node("Expand", ["b", "expand_shape"], ["expand"]),
        node("Tile", ["x", "repeats"], ["tile"]),
        node("Trilu", ["sq"], ["triu"]),
        node("Trilu", ["sq", "k"], ["tril"], upper=0),
    ]
    outs = [vi(n.output[0], F, None) for n in nodes]
    inits = [
        const("shape_0m1", np.array([0, -1], np.int64)),
        const("shape_zero", np.array([6, 4], np.int64)),
        const("axes_unsq", np.array([-1, 0], np.int64)),
        const("axes_sq", np.array([0], np.int64)),
        const("b", np.array([[1], [2]], np.float32)),
        const("expand_shape", np.array([3, 1, 4], np.int64)),
        const("repeats", np.array([1, 2, 1], np.int64)),
        const("k", np.int64(1)),
    ]
    save("movement", model(nodes, [vi("x", F, [2, 3, 4]), vi("sq", F, [3, 3])], outs, inits))


def slices():
    nodes = [
        node("Slice", ["x", "s1", "e1"], ["basic"]),
        node("Slice", ["x", "s2", "e2", "a2", "st2"], ["neg_step"]),
        node("Slice", ["x", "s3", "e3", "a3"], ["clamped"]),
        node("Split", ["x"], ["p0", "p1", "p2"], axis=2, num_outputs=3),
        node("Split", ["x", "sizes"], ["q0", "q1"], axis=-1),
        # Extreme steps select one element each (the length must not overflow).
        node("Slice", ["x", "s4", "e4", "a2", "st4"], ["max_step"]),
        node("Slice", ["x", "s2", "e2", "a2", "st5"], ["min_step"]),
    ]
    outs = [vi(n, F, None) for n in ["basic", "neg_step", "clamped", "p0", "p1", "p2", "q0", "q1",
                                      "max_step", "min_step"]]
    inits = [
        const("s1", np.array([0, 1], np.int64)), const("e1", np.array([1, INT64_MAX], np.int64)),
        const("s2", np.array([-1], np.int64)),
        const("e2", np.array([np.iinfo(np.int64).min], np.int64)),
        const("a2", np.array([2], np.int64)), const("st2", np.array([-2], np.int64)),
        const("s3", np.array([-100], np.int64)), const("e3", np.array([-1], np.int64)),
        const("a3", np.array([-1], np.int64)),
        const("sizes", np.array([3, 4], np.int64)),
        const("s4", np.array([0], np.int64)), const("e4", np.array([INT64_MAX], np.int64)),
        const("st4", np.array([INT64_MAX], np.int64)),
        const("st5", np.array([np.iinfo(np.int64).min], np.int64)),
    ]
    save("slice", model(nodes, [vi("x", F, [2, 3, 7])], outs, inits))


def gathers():
    nodes = [
        node("Gather", ["table", "ids"], ["gather"]),
        node("Gather", ["x", "idx"], ["gather_axis"], axis=-1),
        node("GatherElements", ["x", "eidx"], ["gather_elements"], axis=1),
        node("GatherND", ["x", "ndidx"], ["gather_nd"]),
        node("GatherND", ["x", "bidx"], ["gather_nd_batch"], batch_dims=1),
    ]
    outs = [vi(n.output[0], F, None) for n in nodes]
    inits = [
        const("table", np.arange(20, dtype=np.float32).reshape(10, 2)),
        const("idx", np.array([2, 0], np.int32)),
        const("eidx", np.zeros((2, 1, 4), np.int64)),
        const("ndidx", np.array([[1, 2]], np.int64)),
        const("bidx", np.array([[0], [2]], np.int64)),
    ]
    save("gather", model(nodes, [vi("ids", I64, ["b", "s"]), vi("x", F, [2, 3, 4])], outs, inits))


# --- math -----------------------------------------------------------------------------------

def math():
    nodes = [
        node("MatMul", ["a", "w"], ["matmul"]),
        node("MatMul", ["v", "w"], ["matmul_vec_lhs"]),
        node("MatMul", ["a", "u"], ["matmul_vec_rhs"]),
        node("Gemm", ["m", "wt", "c"], ["gemm"], transB=1, alpha=2.0, beta=0.5),
        node("Gemm", ["mt", "w"], ["gemm_ta"], transA=1),
        node("Softmax", ["a"], ["softmax"], axis=-1),
        node("LayerNormalization", ["a", "gamma", "beta"], ["ln"], axis=-1, epsilon=1e-5),
        node("LayerNormalization", ["a", "gamma"], ["ln_nobias", "", ""]),
    ]
    outs = [vi(n.output[0], F, None) for n in nodes]
    inits = [
        const("w", np.ones((4, 5), np.float32)), const("u", np.ones((4,), np.float32)),
        const("wt", np.arange(20, dtype=np.float32).reshape(5, 4)),
        const("c", np.ones((5,), np.float32)),
        const("gamma", np.ones((4,), np.float32)), const("beta", np.zeros((4,), np.float32)),
    ]
    inputs = [vi("a", F, [2, 3, 4]), vi("v", F, [4]), vi("m", F, [3, 4]), vi("mt", F, [4, 3])]
    save("math", model(nodes, inputs, outs, inits))


def reduce18():
    nodes = [
        node("ReduceMean", ["x", "axes"], ["mean"]),
        node("ReduceSum", ["x", "axes01"], ["sum"], keepdims=0),
        node("ReduceMax", ["x"], ["max_all"], keepdims=0),
        node("ReduceMax", ["x"], ["max_noop"], noop_with_empty_axes=1),
    ]
    outs = [vi(n.output[0], F, None) for n in nodes]
    inits = [const("axes", np.array([-1], np.int64)), const("axes01", np.array([1, 0], np.int64))]
    save("reduce18", model(nodes, [vi("x", F, [2, 3, 4])], outs, inits))


def reduce13():
    nodes = [node("ReduceMean", ["x"], ["mean"], axes=[1]),
             node("ReduceSum", ["x", "axes"], ["sum"])]
    outs = [vi(n.output[0], F, None) for n in nodes]
    save("reduce13", model(nodes, [vi("x", F, [2, 3, 4])], outs,
                           [const("axes", np.array([2], np.int64))], opset=13))


# --- loading: external data -----------------------------------------------------------------

def external_data():
    """Initializer `w` stored in external_data.bin at offset 8 (after 8 padding bytes)."""
    w = np.array([1.5, -2.0, 3.25], np.float32)
    with open(os.path.join(OUT, "external_data.bin"), "wb") as f:
        f.write(b"\0" * 8 + w.tobytes())

    def ext_model(name, offset, length, location="external_data.bin"):
        t = onnx.TensorProto(name="w", data_type=F, dims=[3])
        t.data_location = TensorProto.EXTERNAL
        for k, v in [("location", location), ("offset", str(offset)), ("length", str(length))]:
            e = t.external_data.add()
            e.key, e.value = k, v
        nodes = [node("Add", ["x", "w"], ["y"])]
        save(name, model(nodes, [vi("x", F, [3])], [vi("y", F, [3])], [t]))

    ext_model("external_data", 8, 12)
    ext_model("error_external_bounds", 8, 16)
    ext_model("error_external_range", 4096, 12)
    ext_model("error_external_missing", 0, 12, location="missing.bin")


# --- errors ---------------------------------------------------------------------------------

def old_and_new_opsets():
    """The versions of ops that changed inside opsets 7-24 (kiln follows the model's opset)."""
    F = TensorProto.FLOAT
    x = [vi("x", F, [2, 3, 4])]
    # Opset 7 (Squeeze-1/Unsqueeze-1 with attribute axes, Slice-1 with attribute starts/ends/axes,
    # Split-2 with attribute split, Clip-6 with attribute min/max, Softmax-1 coercing to 2-D).
    save("opset7_ops", model([
        node("Unsqueeze", ["x"], ["u"], axes=[0]),
        node("Squeeze", ["u"], ["q"], axes=[0]),
        node("Slice", ["q"], ["s"], starts=[1], ends=[3], axes=[2]),
        node("Split", ["s"], ["a", "b"], axis=1, split=[1, 2]),
        node("Clip", ["b"], ["c"], min=-0.5, max=0.5),
        node("Softmax", ["x"], ["sm"], axis=1),
    ], x, [vi("a", F, [2, 1, 2]), vi("c", F, [2, 2, 2]), vi("sm", F, [2, 3, 4])], opset=7))
    # Opset 12 (Softmax-11: the same 2-D coercion; Squeeze-11 with negative attribute axes) and
    # opset 24 (RMSNormalization-23, Cast-24 with saturate, Reshape-24).
    save("opset12_ops", model([
        node("Softmax", ["x"], ["sm"], axis=-1),
        node("Unsqueeze", ["sm"], ["u"], axes=[-1]),
        node("Squeeze", ["u"], ["y"], axes=[-1]),
    ], x, [vi("y", F, [2, 3, 4])], opset=12))
    save("opset24_ops", model([
        node("RMSNormalization", ["x", "g"], ["n"], axis=-1, epsilon=1e-6),
        node("Cast", ["n"], ["h"], to=TensorProto.FLOAT16, saturate=1),
        node("Cast", ["h"], ["y"], to=F),
    ], x, [vi("y", F, [2, 3, 4])], [const("g", np.linspace(0.5, 1.5, 4).astype(np.float32))],
        opset=24))


def rotary_embedding():
    """RotaryEmbedding-23: 4-D input with position ids (full rotation), 3-D input with num_heads,
    a partial rotary_embedding_dim and caches given per position (no position ids)."""
    F = TensorProto.FLOAT
    rng = np.random.default_rng(5)
    B, H, S, D, P = 2, 3, 5, 8, 16
    save("rotary_embedding_4d", model([
        node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"]),
    ], [vi("x", F, [B, H, S, D]), vi("pos", TensorProto.INT64, [B, S])], [vi("y", F, [B, H, S, D])],
        [const("cos", rng.standard_normal((P, D // 2)).astype(np.float32)),
         const("sin", rng.standard_normal((P, D // 2)).astype(np.float32))], opset=23))
    R = 4
    save("rotary_embedding_3d", model([
        node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], num_heads=H, rotary_embedding_dim=R),
    ], [vi("x", F, [B, S, H * D])], [vi("y", F, [B, S, H * D])],
        [const("cos", rng.standard_normal((B, S, R // 2)).astype(np.float32)),
         const("sin", rng.standard_normal((B, S, R // 2)).astype(np.float32))], opset=23))


def derived_ops():
    """Ops the importer spells with other kiln ops: CastLike, Abs, Xor, Dropout (inference),
    ReduceMin/SumSquare/L1/L2/LogSum/LogSumExp, LogSoftmax (values: small_models_test.py)."""
    F = TensorProto.FLOAT
    x = [vi("x", F, [3, 4, 5])]
    axes = const("axes", np.array([1], np.int64))
    save("derived_ops", model([
        node("Abs", ["x"], ["abs"]),
        node("CastLike", ["x", "i"], ["xi"]),
        node("CastLike", ["xi", "x"], ["castlike"]),
        node("Greater", ["x", "zero"], ["p"]),
        node("Less", ["x", "half"], ["q"]),
        node("Xor", ["p", "q"], ["pq"]),
        node("Cast", ["pq"], ["xor"], to=F),
        node("Dropout", ["x"], ["drop", "mask"]),
        node("Cast", ["mask"], ["maskf"], to=F),
        node("Abs", ["x"], ["ax"]),
        node("LogSoftmax", ["x"], ["logsoftmax"], axis=1),
    ] + [node(op, ["ax" if op in ("ReduceLogSum",) else "x", "axes"], [out], keepdims=k)
         for op, out, k in [("ReduceMin", "rmin", 1), ("ReduceSumSquare", "rss", 0),
                            ("ReduceL1", "rl1", 1), ("ReduceL2", "rl2", 0),
                            ("ReduceLogSum", "rls", 1), ("ReduceLogSumExp", "rlse", 0)]],
        x, [vi(n, F, None) for n in ["abs", "castlike", "xor", "drop", "maskf", "logsoftmax",
                                     "rmin", "rss", "rl1", "rl2", "rls", "rlse"]],
        [axes, const("i", np.array([1], np.int64)), const("zero", np.array(0, np.float32)),
         const("half", np.array(0.5, np.float32))]))


def activations():
    """Activation functions spelled with kiln ops (values: small_models_test.py)."""
    F = TensorProto.FLOAT
    ops = [("LeakyRelu", dict(alpha=0.1)), ("Elu", dict(alpha=0.5)), ("Selu", {}), ("Celu", dict(alpha=2.0)),
           ("HardSigmoid", dict(alpha=0.3, beta=0.4)), ("HardSwish", {}), ("Softsign", {}),
           ("Softplus", {}), ("ThresholdedRelu", dict(alpha=0.2)), ("Mish", {}), ("Sign", {})]
    nodes = [node(op, ["x"], [op.lower()], **a) for op, a in ops]
    nodes.append(node("PRelu", ["x", "slope"], ["prelu"]))
    save("activations", model(nodes, [vi("x", F, [3, 4, 5])],
                              [vi(op.lower(), F, None) for op, _ in ops] + [vi("prelu", F, None)],
                              [const("slope", np.linspace(-0.5, 0.5, 5).astype(np.float32))]))


def arg_reduce():
    """ArgMax/ArgMin (kiln.arg_reduce) and ReduceMin (kiln.reduce <min>)."""
    F = TensorProto.FLOAT
    save("arg_reduce", model([
        node("ArgMax", ["x"], ["amax"], axis=1, keepdims=0),
        node("ArgMin", ["x"], ["amin"], axis=-1, keepdims=1, select_last_index=1),
        node("ReduceMin", ["x", "axes"], ["rmin"], keepdims=0),
    ], [vi("x", F, [3, 4, 5])], [vi("amax", TensorProto.INT64, None), vi("amin", TensorProto.INT64, None),
                                 vi("rmin", F, None)], [const("axes", np.array([2], np.int64))]))


def arg_reduce_rows():
    """ArgMax/ArgMin over long rows (300 >= 256: one block per row, kiln::argReduceRow) with
    many ties (2x truncated to integers): the first index, the last with select_last_index, and on int64;
    and an ArgMax over rows of 32000 (a vocabulary: 1024 threads per row)."""
    F, I = TensorProto.FLOAT, TensorProto.INT64
    save("arg_reduce_rows", model([
        node("Mul", ["x", "two"], ["x2"]),
        node("Cast", ["x2"], ["ri"], to=I),  # truncation: small integers, many ties
        node("Cast", ["ri"], ["r"], to=F),
        node("ArgMax", ["r"], ["amax"], axis=1, keepdims=0),
        node("ArgMax", ["r"], ["amax_last"], axis=-1, keepdims=1, select_last_index=1),
        node("ArgMin", ["r"], ["amin"], axis=1, keepdims=0),
        node("ArgMax", ["ri"], ["amax_int"], axis=1, keepdims=0),
        # A vocabulary-sized row (1024 threads per block, 8 loads in flight each).
        node("Mul", ["y", "two"], ["y2"]),
        node("Cast", ["y2"], ["yi"], to=I),
        node("Cast", ["yi"], ["yr"], to=F),
        node("ArgMax", ["yr"], ["amax_vocab"], axis=1, keepdims=0),
    ], [vi("x", F, [4, 300]), vi("y", F, [2, 32000])],
        [vi("amax", I, None), vi("amax_last", I, None), vi("amin", I, None), vi("amax_int", I, None),
         vi("amax_vocab", I, None)], [const("two", np.array(2, np.float32))]))


def mod():
    """Mod-13: integers with fmod 0 (the divisor's sign) and 1 (C), floats with fmod 1."""
    F, I = TensorProto.FLOAT, TensorProto.INT64
    save("mod", model([
        node("Mul", ["x", "ten"], ["x10"]),
        node("Cast", ["x10"], ["a"], to=I),
        node("Mod", ["a", "b"], ["imod"]),
        node("Mod", ["a", "b"], ["ifmod"], fmod=1),
        node("Mod", ["x", "c"], ["fmod"], fmod=1),
    ], [vi("x", F, [3, 5])], [vi("imod", I, None), vi("ifmod", I, None), vi("fmod", F, None)],
        [const("ten", np.array(10, np.float32)), const("b", np.array([3, -4, 5, -2, 7], np.int64)),
         const("c", np.array([0.7, -0.3, 1.5, -2.0, 0.25], np.float32))]))


def opsets25_28():
    """Opsets 25-28: of kiln's ops only Attention-25 (sliding windows), Range-27 (stash_type) and
    Mod-28 (fmod 0 on floats) changed beyond new element types; the rest import as at 24."""
    F, H = TensorProto.FLOAT, TensorProto.FLOAT16
    save("opset28_ops", model([
        node("Mod", ["x", "c"], ["fmod0"]),  # Mod-28: A - floor(A / B) * B on floats
        node("Range", ["s", "l", "d"], ["r"], stash_type=1),  # Range-27 on float16
        node("Cast", ["r"], ["rf"], to=F),
        node("Add", ["fmod0", "rf"], ["y"]),
    ], [vi("x", F, [3, 5])], [vi("y", F, None)],
        [const("c", np.array([0.7, -0.3, 1.5, -2.0, 0.25], np.float32)),
         const("s", np.array(1, np.float16)), const("l", np.array(3.5, np.float16)),
         const("d", np.array(0.5, np.float16))], opset=28))
    save("error_opset29", model([node("Relu", ["x"], ["y"])], [vi("x", F, [2, 3])],
                                [vi("y", F, None)], opset=29))
    save("error_mod_float_fmod0", model([node("Mod", ["x", "x"], ["y"], name="mod")],
                                        [vi("x", F, [2, 3])], [vi("y", F, None)], opset=27))
    save("error_range_stash", model(
        [node("Range", ["s", "l", "d"], ["y"], name="range", stash_type=0)], [], [vi("y", H, None)],
        [const("s", np.array(1, np.float16)), const("l", np.array(3.5, np.float16)),
         const("d", np.array(0.5, np.float16))], opset=27))
    # Attention beyond kiln.attention: the composite form (buildCompositeAttention). A sliding
    # window (opset 25); softcap with qk_matmul_output (mode 3) and top-left causal with
    # Sq != Sk; GQA with nonpad_kv_seqlen (an external cache); interleaved RotaryEmbedding.
    save("attention_window", model(
        [node("Attention", ["q", "k", "v"], ["y"], name="attn", left_window_size=1)],
        [vi("q", F, [1, 2, 3, 8]), vi("k", F, [1, 2, 3, 8]), vi("v", F, [1, 2, 3, 8])],
        [vi("y", F, None)], opset=25))
    save("attention_softcap_causal", model(
        [node("Attention", ["q", "k", "v"], ["y", "", "", "qk"], name="attn", softcap=2.0,
              is_causal=1, qk_matmul_output_mode=3)],
        [vi("q", F, [1, 2, 3, 8]), vi("k", F, [1, 2, 5, 8]), vi("v", F, [1, 2, 5, 8])],
        [vi("y", F, None), vi("qk", F, None)], opset=24))
    # qk_matmul_output in each mode with softcap and an additive mask, as the spec's function
    # body defines it: 0 the scaled Q K^T (before softcap), 1 softcapped, 2 softcapped plus the
    # mask, 3 the probabilities (the ONNX reference evaluator softcaps mode 0 too).
    save("attention_qk_modes", model(
        [node("Attention", ["q", "k", "v", "m"], ["y%d" % mode, "", "", "qk%d" % mode],
              name="attn%d" % mode, softcap=1.5, qk_matmul_output_mode=mode)
         for mode in range(4)],
        [vi("q", F, [1, 2, 3, 8]), vi("k", F, [1, 2, 5, 8]), vi("v", F, [1, 2, 5, 8]),
         vi("m", F, [3, 5])],
        [vi("y0", F, None)] + [vi("qk%d" % mode, F, None) for mode in range(4)], opset=24))
    save("attention_nonpad", model(
        [node("Attention", ["q", "k", "v", "", "", "", "lens"], ["y"], name="attn", is_causal=1)],
        [vi("q", F, [2, 4, 1, 8]), vi("k", F, [2, 2, 6, 8]), vi("v", F, [2, 2, 6, 8]),
         vi("lens", TensorProto.INT64, [2])], [vi("y", F, None)], opset=24))
    # Errors: a mask that does not broadcast to the scores (composite path: softcap; fused
    # path: plain), and nonpad_kv_seqlen of the wrong shape.
    for name, attrs in [("error_attention_mask_composite", dict(softcap=2.0)),
                        ("error_attention_mask_fused", {})]:
        save(name, model(
            [node("Attention", ["q", "k", "v", "m"], ["y"], name="attn", **attrs)],
            [vi("q", F, [1, 2, 3, 8]), vi("k", F, [1, 2, 5, 8]), vi("v", F, [1, 2, 5, 8]),
             vi("m", F, [4, 5])], [vi("y", F, None)], opset=24))
    save("error_attention_mask_scalar", model(
        [node("Attention", ["q", "k", "v", "m"], ["y"], name="attn")],
        [vi("q", F, [1, 2, 3, 8]), vi("k", F, [1, 2, 5, 8]), vi("v", F, [1, 2, 5, 8]),
         vi("m", F, [])], [vi("y", F, None)], opset=24))
    save("error_attention_nonpad", model(
        [node("Attention", ["q", "k", "v", "", "", "", "lens"], ["y"], name="attn", is_causal=1)],
        [vi("q", F, [2, 4, 1, 8]), vi("k", F, [2, 2, 6, 8]), vi("v", F, [2, 2, 6, 8]),
         vi("lens", TensorProto.INT64, [3])], [vi("y", F, None)], opset=24))
    save("rotary_interleaved", model(
        [node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], interleaved=1)],
        [vi("x", F, [1, 2, 3, 8]), vi("pos", TensorProto.INT64, [1, 3])], [vi("y", F, None)],
        [const("cos", np.cos(np.arange(32, dtype=np.float32).reshape(8, 4) / 7)),
         const("sin", np.sin(np.arange(32, dtype=np.float32).reshape(8, 4) / 7))], opset=23))


def cast_rounding():
    """Casts to bfloat16 and float16 (cast-rounding.mlir; values on a GPU: small_models_test.py).
    The graph input x goes through the kernels; the initializer c, holding the same special
    values, is folded at import: both must round as IEEE 754 (nearest even, overflow to inf)."""
    BF, H = TensorProto.BFLOAT16, TensorProto.FLOAT16
    nodes = []
    for src in ("x", "c"):
        nodes += [
            node("Cast", [src], [src + "_bf16"], to=BF), node("Cast", [src + "_bf16"],
                                                             [src + "_via_bf16"], to=F),
            node("Cast", [src], [src + "_f16"], to=H), node("Cast", [src + "_f16"],
                                                           [src + "_via_f16"], to=F),
            node("Cast", [src + "_f16"], [src + "_f16_bf16"], to=BF),
            node("Cast", [src + "_f16_bf16"], [src + "_via_f16_bf16"], to=F),
        ]
    outs = []
    for src in ("x", "c"):
        outs += [vi(src + "_via_bf16", F, None), vi(src + "_via_f16", F, None),
                 vi(src + "_f16", H, None), vi(src + "_via_f16_bf16", F, None)]
    save("cast_rounding", model(nodes, [vi("x", F, ["n"])], outs,
                                [const("c", cast_values.special_values())]))


def cast_int_rounding():
    """int64 and int32 graph inputs cast to bfloat16 and float16 (and back to float32) in kernels:
    one rounding to nearest even, not a rounding to float32 first (small_models_test.py checks the
    values on a GPU; cast-rounding.mlir the emitted code)."""
    BF, H, I32 = TensorProto.BFLOAT16, TensorProto.FLOAT16, TensorProto.INT32
    nodes = []
    for src in ("x", "y"):
        nodes += [node("Cast", [src], [src + "_bf16"], to=BF),
                  node("Cast", [src + "_bf16"], [src + "_via_bf16"], to=F),
                  node("Cast", [src], [src + "_f16"], to=H),
                  node("Cast", [src + "_f16"], [src + "_via_f16"], to=F)]
    outs = [vi(src + k, F, None) for src in ("x", "y") for k in ("_via_bf16", "_via_f16")]
    save("cast_int_rounding", model(nodes, [vi("x", TensorProto.INT64, ["n"]),
                                            vi("y", I32, ["n"])], outs))


def empty_tensors():
    """Zero-size dims (kiln-eliminate-empty-tensors): an empty past KV cache concatenated with the
    new key, an empty Concat operand, reductions over an empty axis (sum 0, mean NaN, max -inf /
    the smallest int32, min +inf), MatMul with K = 0, an empty Slice and an empty elementwise
    result as graph outputs; and a Gather from a zero-length axis, which is an error."""
    F, I = TensorProto.FLOAT, TensorProto.INT32
    save("empty_tensors", model([
        node("Concat", ["past", "k"], ["kv"], axis=2),
        node("Mul", ["kv", "two"], ["cat_kv"]),
        node("Concat", ["x", "e", "x"], ["cat_x"], axis=1),
        node("ReduceSum", ["e", "axis1"], ["sum_e"], keepdims=0),
        node("ReduceMean", ["e", "axis1"], ["mean_e"], keepdims=0),
        node("ReduceMax", ["e", "axis1"], ["max_e"], keepdims=0),
        node("ReduceMin", ["e", "axis1"], ["min_e"], keepdims=0),
        node("Cast", ["e"], ["ei"], to=I),
        node("ReduceMax", ["ei", "axis1"], ["max_ei"], keepdims=0),
        node("MatMul", ["e", "w"], ["mm"]),
        node("Add", ["mm", "bias"], ["mm_bias"]),
        node("Slice", ["x", "three", "three", "axis1"], ["slice_empty"]),
        node("Relu", ["e"], ["relu_e"]),
    ], [vi("x", F, [2, 3]), vi("past", F, [1, 2, "past_len", 4]), vi("k", F, [1, 2, 1, 4]),
        vi("e", F, [2, "n"])],
        [vi("cat_kv", F, None), vi("cat_x", F, None), vi("sum_e", F, None), vi("mean_e", F, None),
         vi("max_e", F, None), vi("min_e", F, None), vi("max_ei", I, None),
         vi("mm_bias", F, None), vi("slice_empty", F, None), vi("relu_e", F, None)],
        [const("axis1", np.array([1], np.int64)), const("w", np.zeros((0, 5), np.float32)),
         const("bias", np.arange(5, dtype=np.float32)), const("three", np.array([3], np.int64)),
         const("two", np.array(2, np.float32))]))
    # Attention-23 at the first decode step: past key/value of length 0 (symbolic past_len).
    save("attention_empty_past", model([
        node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "present_k", "present_v"]),
    ], [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4]),
        vi("pk", F, [1, 2, "past_len", 4]), vi("pv", F, [1, 2, "past_len", 4])],
        [vi("y", F, None), vi("present_k", F, None), vi("present_v", F, None)], opset=23))
    save("error_gather_empty_axis", model(
        [node("Gather", ["table", "ids"], ["y"], name="gather")],
        [vi("ids", TensorProto.INT64, [2, 3])], [vi("y", F, None)],
        [const("table", np.zeros((0, 8), np.float32))]))


def attention23():
    """Attention-23: GQA (4 query, 2 KV heads) with past key/value and a boolean mask, and a 3-D
    causal one (values: small_models_test.py)."""
    F = TensorProto.FLOAT
    rng = np.random.default_rng(9)
    mask = rng.random((1, 1, 3, 5)) > 0.3
    mask[..., 0] = True  # every query row keeps one key
    save("attention23", model([
        node("Attention", ["q", "k", "v", "mask", "pk", "pv"], ["y", "present_k", "present_v"]),
        node("Attention", ["q3", "k3", "v3"], ["y3"], is_causal=1, q_num_heads=2, kv_num_heads=2,
             scale=0.3),
    ], [vi("q", F, [2, 4, 3, 8]), vi("k", F, [2, 2, 3, 8]), vi("v", F, [2, 2, 3, 8]),
        vi("pk", F, [2, 2, 2, 8]), vi("pv", F, [2, 2, 2, 8]), vi("q3", F, [2, 4, 16]),
        vi("k3", F, [2, 4, 16]), vi("v3", F, [2, 4, 16])],
        [vi("y", F, None), vi("present_k", F, None), vi("present_v", F, None), vi("y3", F, None)],
        [const("mask", mask)], opset=23))


def errors():
    x = [vi("x", F, [2, 3])]
    y = [vi("y", F, None)]
    save("error_contrib_op", model(
        [helper.make_node("Attention", ["x"], ["y"], name="Attention_3", domain="com.microsoft")],
        x, y, extra_opsets=[("com.microsoft", 1)]))
    save("error_unknown_op", model([node("NonMaxSuppression", ["x"], ["y"], name="nms")],
                                   x, y))
    save("error_attribute", model([node("Softmax", ["x"], ["y"], name="sm", foo=1)], x, y))
    save("error_opset", model([node("Relu", ["x"], ["y"])], x, y, opset=6))
    # Where appeared in opset 9: a node of it in an opset-8 model names the op and the versions.
    save("error_op_version", model([node("Where", ["c", "x", "x"], ["y"], name="where")],
                                   [vi("c", TensorProto.BOOL, [2, 3])] + x, y, opset=8))
    save("error_no_default_opset", helper.make_model(
        helper.make_graph([node("Relu", ["x"], ["y"])], "g", x, y),
        opset_imports=[helper.make_opsetid("com.microsoft", 1)], ir_version=8))
    save("error_stash_type", model(
        [node("LayerNormalization", ["x", "g"], ["y"], name="ln", stash_type=10)], x, y,
        [const("g", np.ones(3, np.float32))]))
    save("layernorm_mean", model(
        [node("LayerNormalization", ["x", "g"], ["y", "mean"], name="ln")], x,
        y + [vi("mean", F, None)], [const("g", np.ones(3, np.float32))]))
    save("error_nonconst_shape", model(
        [node("Reshape", ["x", "shape"], ["y"], name="reshape")], x + [vi("shape", I64, [1])], y))
    save("error_type_mismatch", model(
        [node("Add", ["x", "i"], ["y"], name="add")], x + [vi("i", I64, [2, 3])], y))
    save("error_broadcast", model(
        [node("Mul", ["x", "c"], ["y"], name="mul")], x, y, [const("c", np.ones(4, np.float32))]))
    save("error_input_dtype", model([node("Relu", ["d"], ["y"])], [vi("d", TensorProto.DOUBLE, [2])],
                                    y))
    save("error_init_dtype", model([node("Add", ["x", "c"], ["y"])], x, y,
                                   [const("c", np.ones(3, np.float64))]))
    save("error_cast_dtype", model([node("Cast", ["x"], ["y"], name="cast", to=TensorProto.DOUBLE)],
                                   x, y))
    save("error_symbolic", model([node("Relu", ["x"], ["y"])],
                                 [vi("x", F, ["batch", "seq"])], y))
    save("error_undefined_input", model([node("Add", ["x", "nope"], ["y"], name="add")], x, y))
    # Regression: an empty first Concat operand crashed the importer.
    save("error_concat_empty", model([node("Concat", ["", "x"], ["y"], name="concat", axis=0)],
                                     x, y))
    save("error_empty_operand", model([node("Add", ["x", ""], ["y"], name="add")], x, y))
    save("error_allowzero", model(
        [node("Reshape", ["x", "s"], ["y"], name="reshape", allowzero=1)], x, y,
        [const("s", np.array([0, -1], np.int64))]))
    save("error_output_type", model([node("Relu", ["x"], ["y"])], x, [vi("y", F, [2, 4])]))
    # ONNX is SSA: a second definition of 'a' (onnxruntime: "Duplicate definition").
    save("error_duplicate_definition", model(
        [node("Relu", ["x"], ["a"], name="relu"), node("Neg", ["x"], ["a"], name="neg"),
         node("Identity", ["a"], ["y"])], x, y))
    save("error_output_is_input", model([node("Relu", ["x"], ["x"], name="relu")], x, x))
    save("error_bad_payload", model([node("Add", ["x", "c"], ["y"])], x, y,
                                    [onnx.TensorProto(name="c", data_type=F, dims=[3], float_data=[1.0, 2.0])]))


def review_fixes():
    """Regressions from a review of the opset 7-24 importer: a rank-0 RotaryEmbedding input
    crashed; a bool training_mode constant was rejected; Dropout-7's mask is T, not bool; old
    Clip/Split took operands silently; Xor of floats and Abs of bools reached the verifier;
    ReduceLogSumExp of a row of -inf (or holding +inf) gave NaN instead of -inf (+inf)."""
    x = [vi("x", F, [2, 3])]
    y = [vi("y", F, None)]
    save("error_rotary_rank0", model(
        [node("RotaryEmbedding", ["s", "c", "c"], ["y"], name="rope")],
        [vi("s", F, []), vi("c", F, [4, 1])], y, opset=23))
    save("error_rotary_float_ids", model(
        [node("RotaryEmbedding", ["r", "c", "c", "p"], ["y"], name="rope")],
        [vi("r", F, [1, 1, 3, 2]), vi("c", F, [4, 1]), vi("p", F, [1, 3])], y, opset=23))
    save("error_dropout_training", model(
        [node("Dropout", ["x", "", "t"], ["y"], name="drop")], x, y,
        [const("t", np.array(True))], opset=13))
    save("dropout_mask_types", model(
        [node("Dropout", ["x", "", "f"], ["y", "mask"], name="drop13")], x,
        y + [vi("mask", B, None)], [const("f", np.array(False))], opset=13))
    save("dropout7_mask", model(
        [node("Dropout", ["x"], ["y", "mask"], name="drop7", ratio=0.25)], x,
        y + [vi("mask", F, None)], opset=7))
    save("error_clip6_operand", model(
        [node("Clip", ["x", "lo"], ["y"], name="clip")], x, y,
        [const("lo", np.float32(0))], opset=7))
    save("error_split11_operand", model(
        [node("Split", ["x", "s"], ["a", "b"], name="split", axis=1)], x,
        [vi("a", F, None), vi("b", F, None)], [const("s", np.array([1, 2], np.int64))], opset=11))
    save("error_split18_empty_chunk", model(
        [node("Split", ["e"], ["a", "b", "c", "d", "f"], name="split", num_outputs=5)],
        [vi("e", F, [6])], [vi(n, F, None) for n in "abcdf"], opset=18))
    # Split sizes whose sum overflows int64 (fuzzer-found: UB in the sum).
    save("error_split_overflow", model(
        [node("Split", ["e", "s"], ["a", "b"], name="split", axis=0)],
        [vi("e", F, [6])], [vi(n, F, None) for n in "ab"],
        [const("s", np.array([2**62 + 3, 2**62 + 3], np.int64))], opset=18))
    save("error_xor_float", model([node("Xor", ["x", "x"], ["y"], name="xor")], x,
                                  [vi("y", B, None)]))
    save("error_abs_bool", model([node("Abs", ["b"], ["y"], name="abs")], [vi("b", B, [2])],
                                 [vi("y", B, None)]))
    save("logsumexp_inf", model([node("ReduceLogSumExp", ["x"], ["y"], axes=[1], keepdims=0)],
                                x, y, opset=17))


def contrib():
    """onnxruntime's contrib ops (com.microsoft, version 1, and SimplifiedLayerNormalization in
    the default domain) with their optional inputs and outputs (import: contrib.mlir; values:
    small_models_test.py and check_import_numerics.py --contrib), and their errors."""
    ms = [("com.microsoft", 1)]
    rng = np.random.default_rng(11)

    def weight(name, shape):
        return const(name, rng.standard_normal(shape).astype(np.float32))

    def msnode(op, ins, outs, name=None, **attrs):
        return helper.make_node(op, ins, outs, name=name or outs[0], domain="com.microsoft",
                                **attrs)

    x, s = vi("x", F, [2, 3, 8]), vi("s", F, [2, 3, 8])
    # SkipLayerNormalization: every input and output; skip [S, H] broadcast with the default
    # epsilon (1e-12) and only the output; beta without bias, with input_skip_bias_sum.
    save("contrib_skip_layer_norm", model([
        msnode("SkipLayerNormalization", ["x", "s", "gamma", "beta", "bias"],
               ["y", "mean", "inv_std_var", "sum"], name="sln_all", epsilon=1e-5),
        msnode("SkipLayerNormalization", ["x", "s2", "gamma"], ["y2"], name="sln_min"),
        msnode("SkipLayerNormalization", ["x", "s", "gamma", "beta"], ["y3", "", "", "sum3"],
               name="sln_beta", epsilon=1e-5),
    ], [x, s, vi("s2", F, [3, 8])],
        [vi(n, F, None) for n in ["y", "mean", "inv_std_var", "sum", "y2", "y3", "sum3"]],
        [weight("gamma", [8]), weight("beta", [8]), weight("bias", [8])], extra_opsets=ms))
    # SkipSimplifiedLayerNormalization: bias, inv_std_var and the sum; then the minimal form.
    save("contrib_skip_simplified_layer_norm", model([
        msnode("SkipSimplifiedLayerNormalization", ["x", "s", "gamma", "bias"],
               ["y", "", "inv_std_var", "sum"], name="ssln_all", epsilon=1e-5),
        msnode("SkipSimplifiedLayerNormalization", ["x", "s", "gamma"], ["y2"], name="ssln_min"),
    ], [x, s], [vi(n, F, None) for n in ["y", "inv_std_var", "sum", "y2"]],
        [weight("gamma", [8]), weight("bias", [8])], extra_opsets=ms))
    # SimplifiedLayerNormalization as onnxruntime defines it (default domain): the last axis
    # with inv_std_var, and axis 1 with a [S, H] scale.
    save("contrib_simplified_layer_norm", model([
        node("SimplifiedLayerNormalization", ["x", "scale"], ["y", "inv_std_var"], name="rms",
             epsilon=1e-5),
        node("SimplifiedLayerNormalization", ["x", "scale2"], ["y2", "inv_std_var2"],
             name="rms_axis1", axis=1),
    ], [x], [vi(n, F, None) for n in ["y", "inv_std_var", "y2", "inv_std_var2"]],
        [weight("scale", [8]), weight("scale2", [3, 8])], extra_opsets=ms))
    # The same op under com.microsoft (kiln accepts it there; onnxruntime does not).
    save("contrib_simplified_layer_norm_ms", model([
        msnode("SimplifiedLayerNormalization", ["x", "scale"], ["y"], name="rms")],
        [x], [vi("y", F, None)], [weight("scale", [8])], extra_opsets=ms))
    # FastGelu with and without bias, BiasGelu.
    save("contrib_gelu", model([
        msnode("FastGelu", ["x"], ["fast"]),
        msnode("FastGelu", ["x", "bias"], ["fast_bias"]),
        msnode("BiasGelu", ["x", "bias"], ["bias_gelu"]),
    ], [x], [vi(n, F, None) for n in ["fast", "fast_bias", "bias_gelu"]],
        [weight("bias", [8])], extra_opsets=ms))

    # Errors.
    y = [vi("y", F, None)]
    for op in ["MultiHeadAttention"]:
        save("error_contrib_" + op.lower(), model([msnode(op, ["x"], ["y"], name="attn")], [x], y,
                                                 extra_opsets=ms))
    save("error_contrib_unknown", model([msnode("QuickGelu", ["x"], ["y"], name="qg")], [x], y,
                                        extra_opsets=ms))
    save("error_contrib_other_domain", model(
        [helper.make_node("Foo", ["x"], ["y"], name="foo", domain="com.example")], [x], y,
        extra_opsets=[("com.example", 1)]))
    save("error_contrib_version", model([msnode("FastGelu", ["x"], ["y"], name="fg")], [x], y,
                                        extra_opsets=[("com.microsoft", 2)]))
    save("error_contrib_no_import", model([msnode("FastGelu", ["x"], ["y"], name="fg")], [x], y))
    save("error_contrib_attribute", model([msnode("FastGelu", ["x"], ["y"], name="fg", alpha=1.0)],
                                          [x], y, extra_opsets=ms))
    save("error_skip_simplified_mean", model([
        msnode("SkipSimplifiedLayerNormalization", ["x", "s", "gamma"], ["y", "mean"],
               name="ssln")], [x, s], y + [vi("mean", F, None)],
        [weight("gamma", [8])], extra_opsets=ms))
    save("error_skip_layer_norm_skip_shape", model([
        msnode("SkipLayerNormalization", ["x", "s4", "gamma"], ["y"], name="sln")],
        [x, vi("s4", F, [2, 2, 3, 8])], y, [weight("gamma", [8])], extra_opsets=ms))
    save("error_skip_layer_norm_gamma_type", model([
        msnode("SkipLayerNormalization", ["x", "s", "gamma"], ["y"], name="sln")], [x, s], y,
        [const("gamma", np.ones(8, np.float16))], extra_opsets=ms))
    save("error_skip_layer_norm_bias_shape", model([
        msnode("SkipLayerNormalization", ["x", "s", "gamma", "", "bias"], ["y"], name="sln")],
        [x, s], y, [weight("gamma", [8]), weight("bias", [3])], extra_opsets=ms))
    save("error_skip_layer_norm_operands", model([
        msnode("SkipLayerNormalization", ["x", "s"], ["y"], name="sln")], [x, s], y,
        extra_opsets=ms))
    save("error_bias_gelu_shape", model([msnode("BiasGelu", ["x", "b"], ["y"], name="bg")],
                                        [x], y, [weight("b", [4])], extra_opsets=ms))
    save("error_bias_gelu_no_bias", model([msnode("BiasGelu", ["x"], ["y"], name="bg")],
                                          [x], y, extra_opsets=ms))
    save("error_fast_gelu_int", model([msnode("FastGelu", ["i"], ["y"], name="fg")],
                                      [vi("i", I64, [2, 3])], [vi("y", I64, None)],
                                      extra_opsets=ms))
    save("error_simplified_stash_type", model([
        node("SimplifiedLayerNormalization", ["x", "scale"], ["y"], name="rms", stash_type=10)],
        [x], y, [weight("scale", [8])]))


def nbits_unpack(packed, bits, count):
    """[rows, bytes] uint8 -> [rows, count] codes of `bits` bits, low bits first."""
    codes = [(packed >> (bits * i)) & ((1 << bits) - 1) for i in range(8 // bits)]
    return np.stack(codes, axis=-1).reshape(packed.shape[0], -1)[:, :count]


def nbits_dequantize(b, scales, zero_points, k, n, bits, block_size):
    """MatMulNBits' weight W [K, N] in float32: (q - zp) * scale per block of K, with
    zero_points None (2^(bits-1)), packed uint8 or float (one per block)."""
    k_blocks = -(-k // block_size)
    q = nbits_unpack(b.reshape(n, -1), bits, k_blocks * block_size).astype(np.float32)
    s = np.asarray(scales, np.float32).reshape(n, k_blocks)
    if zero_points is None:
        z = np.full((n, k_blocks), 2 ** (bits - 1), np.float32)
    elif zero_points.dtype == np.uint8:
        z = nbits_unpack(zero_points.reshape(n, -1), bits, k_blocks).astype(np.float32)
    else:
        z = zero_points.astype(np.float32).reshape(n, k_blocks)
    w = (q - np.repeat(z, block_size, axis=1)) * np.repeat(s, block_size, axis=1)
    return w[:, :k].T


def run_with_onnxruntime(m):
    """(initializers, feeds, outputs by name) of one onnxruntime CPU run of `m` on random normal
    inputs of their declared types and shapes (seed 5), or None without onnxruntime."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    rng = np.random.default_rng(5)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    feeds = {}
    for i in m.graph.input:
        dt = helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        feeds[i.name] = rng.standard_normal(shape).astype(dt)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return inits, feeds, dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def check_nbits_reference(m):
    """Each MatMulNBits node of `m` (one per output, input A a graph input, the rest
    initializers) against nbits_dequantize + numpy matmul through onnxruntime on CPU, when
    onnxruntime is installed: the reference semantics of test/onnx/matmul-nbits.mlir."""
    run = run_with_onnxruntime(m)
    if run is None:
        return
    inits, feeds, outs = run
    for nd in m.graph.node:
        at = {a.name: helper.get_attribute_value(a) for a in nd.attribute}
        ins = list(nd.input) + [""] * (6 - len(nd.input))
        w = nbits_dequantize(inits[ins[1]], inits[ins[2]], inits.get(ins[3]), at["K"], at["N"],
                             at.get("bits", 4), at["block_size"])
        a = feeds[ins[0]]
        ref = a.astype(np.float64) @ w.astype(a.dtype).astype(np.float64)
        if ins[5]:
            ref = ref + inits[ins[5]]
        err = np.linalg.norm(outs[nd.output[0]] - ref) / np.linalg.norm(ref)
        assert err < (1e-5 if a.dtype == np.float32 else 2e-3), (nd.name, err)


def matmul_nbits():
    """com.microsoft MatMulNBits (onnxruntime-genai's 4-bit weights), dequantized at import
    (matmul-nbits.mlir; values: check_import_numerics.py --contrib and small_models_test.py):
    K = 80 with block_size 32, so the last block is partial (padded codes), and its errors."""
    ms = [("com.microsoft", 1)]
    rng = np.random.default_rng(17)
    H = TensorProto.FLOAT16

    def codes(n, k, bits, block_size):
        k_blocks = -(-k // block_size)
        return rng.integers(0, 256, (n, k_blocks, block_size * bits // 8), dtype=np.uint8)

    def scales(count, dtype=np.float32):
        return (rng.random(count) * 0.05 + 0.01).astype(dtype)

    def nbits(ins, outs, name, k=80, n=48, bits=4, block_size=32, **attrs):
        return helper.make_node("MatMulNBits", ins, outs, name=name, domain="com.microsoft",
                                K=k, N=n, bits=bits, block_size=block_size, **attrs)

    # 4-bit with packed uint8 zero points (3 blocks: 2 bytes per column) and flat scales; 4-bit
    # without zero points (8) with [N, k_blocks] scales and a bias; 8-bit with block_size 16 and
    # packed zero points on a 2-D A; 2-bit with float zero points and block_size 64 on a 1-D A.
    # accuracy_level 1 (fp32): onnxruntime computes level 4 with A quantized to int8, ~1e-2
    # from the exact product kiln computes.
    m = model([
        nbits(["a", "b4", "s4", "zp4"], ["y_zp"], "nbits_zp", accuracy_level=1),
        nbits(["a", "b4", "s4x2", "", "", "bias"], ["y_bias"], "nbits_bias"),
        nbits(["a2", "b8", "s8", "zp8"], ["y_8bit"], "nbits_8bit", bits=8, block_size=16),
        nbits(["a3", "b2", "s2", "zp2"], ["y_2bit"], "nbits_2bit", bits=2, block_size=64),
    ], [vi("a", F, [2, 3, 80]), vi("a2", F, [5, 80]), vi("a3", F, [80])],
        [vi(o, F, None) for o in ["y_zp", "y_bias", "y_8bit", "y_2bit"]],
        [const("b4", codes(48, 80, 4, 32)), const("s4", scales(48 * 3)),
         const("zp4", rng.integers(0, 256, 48 * 2, dtype=np.uint8)),
         const("s4x2", scales(48 * 3).reshape(48, 3)),
         const("bias", rng.standard_normal(48).astype(np.float32)),
         const("b8", codes(48, 80, 8, 16)), const("s8", scales(48 * 5) / 16),
         const("zp8", rng.integers(100, 156, 48 * 5, dtype=np.uint8)),
         const("b2", codes(48, 80, 2, 64)), const("s2", scales(48 * 2)),
         const("zp2", (rng.random(48 * 2) * 4).astype(np.float32))],
        opset=21, extra_opsets=ms)
    check_nbits_reference(m)
    save("matmul_nbits", m)
    # float16: zero points of A's type (one per block), a bias, 4 rows (a decode-sized GEMM).
    m = model([nbits(["a", "b", "s", "zp", "", "bias"], ["y"], "nbits_fp16")],
              [vi("a", H, [1, 4, 80])], [vi("y", H, None)],
              [const("b", codes(48, 80, 4, 32)), const("s", scales(48 * 3, np.float16)),
               const("zp", (rng.random(48 * 3) * 16).astype(np.float16)),
               const("bias", rng.standard_normal(48).astype(np.float16))],
              opset=21, extra_opsets=ms)
    check_nbits_reference(m)
    save("matmul_nbits_fp16", m)

    # Errors: one node 'mm' each, A [2, 80] unless said.
    a, y = [vi("a", F, [2, 80])], [vi("y", F, None)]

    def error(name, ins, inits, inputs=a, **attrs):
        save("error_matmul_nbits_" + name, model([nbits(ins, ["y"], "mm", **attrs)], inputs, y,
                                                 inits, opset=21, extra_opsets=ms))

    b, s = const("b", codes(48, 80, 4, 32)), const("s", scales(48 * 3))
    error("bits", ["a", "b", "s"], [b, s], bits=3)
    error("block_size", ["a", "b", "s"], [b, s], block_size=24)
    error("g_idx", ["a", "b", "s", "", "g"], [b, s, const("g", np.zeros(80, np.int32))])
    error("k", ["a", "b", "s"], [b, s], inputs=[vi("a", F, [2, 64])])
    error("b_shape", ["a", "b", "s"], [const("b", codes(48, 64, 4, 32)), s])
    error("scales_shape", ["a", "b", "s"], [b, const("s", scales(48 * 2))])
    error("scales_type", ["a", "b", "s"], [b, const("s", scales(48 * 3, np.float16))])
    error("zero_points_shape", ["a", "b", "s", "zp"],
          [b, s, const("zp", np.full(48 * 3, 0x88, np.uint8))])
    error("zero_points_type", ["a", "b", "s", "zp"], [b, s, const("zp", np.zeros(48 * 3, np.int8))])
    error("bias_shape", ["a", "b", "s", "", "", "bias"],
          [b, s, const("bias", np.zeros(80, np.float32))])
    error("b_type", ["a", "b", "s"], [const("b", np.zeros((48, 3, 16), np.int8)), s])
    error("n", ["a", "b", "s"], [b, s], n=0)
    # 2^32 weights: refused before B (a graph input here, never materialized) is read.
    error("huge", ["a", "b", "s"], [s], inputs=[vi("a", F, [2, 65536]),
                                                vi("b", TensorProto.UINT8, [65536, 2048, 16])],
          n=65536, k=65536)
    save("error_matmul_nbits_no_k", model([
        helper.make_node("MatMulNBits", ["a", "b", "s"], ["y"], name="mm", domain="com.microsoft",
                         N=48, block_size=32)], a, y, [b, s], opset=21, extra_opsets=ms))
    error("dynamic_b", ["a", "b", "s"], [s], inputs=a + [vi("b", TensorProto.UINT8, [48, 3, 16])])
    error("dynamic_scales", ["a", "b", "s"], [b], inputs=a + [vi("s", F, [48 * 3])])


def gqa_reference(q, k, v, past_k, past_v, num_heads, kv_num_heads, scale=0.0, softcap=0.0,
                  local_window_size=-1, causal=1, cos=None, sin=None, interleaved=0):
    """com.microsoft GroupQueryAttention with full rows (seqlens_k[b] = P + S - 1) in float64,
    as onnxruntime's CPU kernel computes it: (output [B, S, Hq*D], present_key, present_value).
    Packed QKV when k is None."""
    q, B, S = q.astype(np.float64), q.shape[0], q.shape[1]
    if k is None:
        D = q.shape[2] // (num_heads + 2 * kv_num_heads)
        q, k, v = np.split(q, [num_heads * D, (num_heads + kv_num_heads) * D], axis=2)
    D = q.shape[2] // num_heads
    P = 0 if past_k is None else past_k.shape[2]

    def heads(x, h):
        return x.astype(np.float64).reshape(B, S, h, D).transpose(0, 2, 1, 3)

    q4, k4, v4 = heads(q, num_heads), heads(k, kv_num_heads), heads(v, kv_num_heads)
    if cos is not None:
        c, s = cos[P:P + S].astype(np.float64), sin[P:P + S].astype(np.float64)
        R = 2 * c.shape[1]

        def rotate(x):
            xr = x[..., :R]
            if interleaved:
                e, o = xr[..., 0::2], xr[..., 1::2]
                y = np.stack([e * c - o * s, e * s + o * c], axis=-1).reshape(xr.shape)
            else:
                h1, h2 = xr[..., :R // 2], xr[..., R // 2:]
                y = np.concatenate([h1 * c - h2 * s, h2 * c + h1 * s], axis=-1)
            return np.concatenate([y, x[..., R:]], axis=-1)

        q4, k4 = rotate(q4), rotate(k4)
    if P:
        k4 = np.concatenate([past_k.astype(np.float64), k4], axis=2)
        v4 = np.concatenate([past_v.astype(np.float64), v4], axis=2)
    group = num_heads // kv_num_heads
    kr, vr = np.repeat(k4, group, axis=1), np.repeat(v4, group, axis=1)
    scores = q4 @ kr.transpose(0, 1, 3, 2) * (scale or 1 / np.sqrt(D))
    if softcap:
        scores = softcap * np.tanh(scores / softcap)
    pos = P + np.arange(S)[:, None]
    j = np.arange(P + S)[None, :]
    allowed = np.ones((S, P + S), bool)
    if causal:
        allowed &= j <= pos
    if local_window_size >= 0:  # the query and the local_window_size - 1 keys before it
        allowed &= pos - j < local_window_size
    scores = np.where(allowed, scores, -np.inf)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    out = (p @ vr).transpose(0, 2, 1, 3).reshape(B, S, num_heads * D)
    return out, k4, v4


def check_gqa_reference(m):
    """Each GroupQueryAttention node of `m` (float32 graph inputs, the rest initializers)
    against gqa_reference through onnxruntime on CPU, when onnxruntime is installed: the
    reference semantics of test/onnx/group-query-attention.mlir."""
    run = run_with_onnxruntime(m)
    if run is None:
        return
    inits, feeds, outs = run
    values = {**inits, **feeds}
    for nd in m.graph.node:
        at = {a.name: helper.get_attribute_value(a) for a in nd.attribute}
        ins = [values.get(name) if name else None for name in list(nd.input) + [""] * 9]
        refs = gqa_reference(ins[0], ins[1], ins[2], ins[3], ins[4], at["num_heads"],
                             at["kv_num_heads"], at.get("scale", 0.0), at.get("softcap", 0.0),
                             at.get("local_window_size", -1), at.get("causal", 1),
                             ins[7] if at.get("do_rotary") else None,
                             ins[8] if at.get("do_rotary") else None,
                             at.get("rotary_interleaved", 0))
        for name, ref in zip(nd.output, refs):
            if name:
                err = np.linalg.norm(outs[name] - ref) / np.linalg.norm(ref)
                assert err < 1e-5, (nd.name, name, err)


def group_query_attention():
    """com.microsoft GroupQueryAttention (onnxruntime-genai's attention with a KV cache) as
    kiln.attention (group-query-attention.mlir; values: check_import_numerics.py --contrib and
    small_models_test.py): B = 2, S = 3, 4 query and 2 KV heads of size 8, a past of 4 and of
    0, each checked against gqa_reference through onnxruntime; and its errors."""
    ms = [("com.microsoft", 1)]
    rng = np.random.default_rng(23)
    B, S, Hq, Hkv, D, P, MAX = 2, 3, 4, 2, 8, 4, 16

    def gqa(ins, outs, name, **attrs):
        attrs = {"num_heads": Hq, "kv_num_heads": Hkv, **attrs}
        return helper.make_node("GroupQueryAttention", ins, outs, name=name,
                                domain="com.microsoft", **attrs)

    def lengths(past, seq, suffix, batch=B):
        return [const("seqlens_k" + suffix, np.full(batch, past + seq - 1, np.int32)),
                const("total" + suffix, np.array(past + seq, np.int32))]

    def ins(suffix, past=True, caches=()):
        names = ["q" + suffix, "k" + suffix, "v" + suffix]
        names += ["pk" + suffix, "pv" + suffix] if past else ["", ""]
        return names + ["seqlens_k" + suffix, "total" + suffix] + list(caches)

    # The three forms, each with its own inputs: a first prompt (S = 3, no past: suffix "p"),
    # a decode step (S = 1 after a past of 4: "d") and a prefill chunk after a past of 4
    # (onnxruntime takes it for batch 1 only: "c").
    def inputs(suffix, batch, seq, past, d=D):
        vs = [vi("q" + suffix, F, [batch, seq, Hq * d]), vi("k" + suffix, F, [batch, seq, Hkv * d]),
              vi("v" + suffix, F, [batch, seq, Hkv * d])]
        if past:
            vs += [vi("pk" + suffix, F, [batch, Hkv, past, d]),
                   vi("pv" + suffix, F, [batch, Hkv, past, d])]
        return vs

    prompt, decode, chunk = inputs("p", B, S, 0), inputs("d", B, 1, P), inputs("c", 1, S, P)
    lens = lengths(0, S, "p") + lengths(P, 1, "d") + lengths(P, S, "c", batch=1)
    caches = [const("cos32", rng.standard_normal((MAX, 16)).astype(np.float32)),
              const("sin32", rng.standard_normal((MAX, 16)).astype(np.float32)),
              const("cos16", rng.standard_normal((MAX, 8)).astype(np.float32)),
              const("sin16", rng.standard_normal((MAX, 8)).astype(np.float32))]

    def outs(*names):
        return [vi(n, F, None) for n in names]

    # Every node lists its three outputs: onnxruntime 1.30's CPU kernel computes a wrong output
    # when present_key/present_value are left out (onnxruntime-genai's models list them).
    def three(suffix):
        return ["y_" + suffix, "present_k_" + suffix, "present_v_" + suffix]

    # Present = Concat(past, new) in BNSH; the prompt with scale 0.3; the chunk also with
    # causal 0 (every key visible).
    m = model([
        gqa(ins("p", past=False), three("p"), "gqa_prompt", scale=0.3),
        gqa(ins("d"), three("d"), "gqa_decode"),
        gqa(ins("c"), three("c"), "gqa_chunk"),
        gqa(ins("c"), three("all"), "gqa_not_causal", causal=0),
    ], prompt + decode + chunk, outs(*[o for s in ["p", "d", "c", "all"] for o in three(s)]), lens,
        opset=21, extra_opsets=ms)
    check_gqa_reference(m)
    save("gqa", m)
    # do_rotary at positions P..P+S-1, head size 32 (onnxruntime's rotation needs a multiple of
    # 16): rotate-half on the prompt, a decode step and a prefill chunk; interleaved, full and
    # with a partial rotary dim (16 of 32), on a decode step.
    m = model([
        gqa(ins("z", past=False, caches=["cos32", "sin32"]), three("z"), "gqa_rotary_prompt",
            do_rotary=1),
        gqa(ins("w", caches=["cos32", "sin32"]), three("w"), "gqa_rotary_decode", do_rotary=1),
        gqa(ins("x", caches=["cos32", "sin32"]), three("x"), "gqa_rotary_chunk", do_rotary=1),
        gqa(ins("w", caches=["cos32", "sin32"]), three("wi"), "gqa_rotary_interleaved",
            do_rotary=1, rotary_interleaved=1),
        gqa(ins("w", caches=["cos16", "sin16"]), three("w16"), "gqa_rotary_partial", do_rotary=1,
            rotary_interleaved=1),
    ], inputs("z", B, S, 0, d=32) + inputs("w", B, 1, P, d=32) + inputs("x", 1, S, P, d=32),
        outs(*[o for s in ["z", "w", "x", "wi", "w16"] for o in three(s)]),
        lengths(0, S, "z") + lengths(P, 1, "w") + lengths(P, S, "x", batch=1) + caches,
        opset=21, extra_opsets=ms)
    check_gqa_reference(m)
    save("gqa_rotary", m)
    # softcap; a local window (onnxruntime's CPU kernel: the query and the
    # local_window_size - 1 keys before it) on the prompt and a chunk; packed QKV.
    qkv = [vi("qkv", F, [B, 1, (Hq + 2 * Hkv) * D])]
    m = model([
        gqa(ins("d"), three("softcap"), "gqa_softcap", softcap=2.0),
        gqa(ins("p", past=False), three("window_p"), "gqa_window_prompt", local_window_size=2),
        gqa(ins("c"), three("window_c"), "gqa_window_chunk", local_window_size=3),
        gqa(["qkv", "", "", "pkd", "pvd", "seqlens_kd", "totald"], three("packed"), "gqa_packed"),
    ], prompt + decode + chunk + qkv,
        outs(*[o for s in ["softcap", "window_p", "window_c", "packed"] for o in three(s)]), lens,
        opset=21, extra_opsets=ms)
    check_gqa_reference(m)
    save("gqa_softcap_window_packed", m)

    # seqlens_k read at run time, as onnxruntime-genai's model builder writes it: seqlens_k =
    # Cast(ReduceSum(attention_mask, 1) - 1) and total_sequence_length = Cast(Shape(mask)[1]),
    # one mask input mask_<form> [B, T] per form (check_import_numerics.py --contrib feeds row b
    # max(T - 2b, 1) ones; rows differ, so the batch is padded). Forms: decode steps after a past
    # of 4 ("rd") and in a past buffer of 8 ("rs", onnxruntime-genai's shared buffer); first
    # prompts, right-padded, without a past ("rp") and with a buffer of 8 ("rq"); a batch-1
    # chunk of 3 whose past (3) is shorter than its buffer (4) ("rc"); rotary on a decode step
    # and a first prompt (head size 32); softcap, a local window and causal 0 on decode steps; a
    # local window on a first prompt.
    def runtime_lengths(form, batch, total):
        mask = "mask_" + form
        return [
            node("ReduceSum", [mask, "axis1"], ["sum_" + form], keepdims=0),
            node("Sub", ["sum_" + form, "one64"], ["last_" + form]),
            node("Cast", ["last_" + form], ["seqlens_k" + form], to=I32),
            node("Shape", [mask], ["shape_" + form]),
            node("Gather", ["shape_" + form, "one64"], ["t_" + form], axis=0),
            node("Cast", ["t_" + form], ["total" + form], to=I32),
        ], vi(mask, I64, [batch, total])

    forms = {  # form: (batch, sequence, past buffer, total, head size)
        "rd": (B, 1, P, P + 1, D), "rs": (B, 1, 8, P + 1, D), "rp": (B, S, 0, S, D),
        "rq": (B, S, 8, S, D), "rc": (1, S, P, 6, D), "rr": (B, 1, P, P + 1, 32),
        "rz": (B, S, 0, S, 32), "rsc": (B, 1, P, P + 1, D), "rw": (B, 1, P, P + 1, D),
        "rwp": (B, S, 0, S, D), "rn": (B, 1, P, P + 1, D)}
    attrs = {"rr": dict(do_rotary=1), "rz": dict(do_rotary=1, rotary_interleaved=1),
             "rsc": dict(softcap=2.0), "rw": dict(local_window_size=2),
             "rwp": dict(local_window_size=2), "rn": dict(causal=0)}
    nodes, graph_inputs = [], []
    for form, (batch, seq, past, total, d) in forms.items():
        length_nodes, mask = runtime_lengths(form, batch, total)
        tables = ["cos32", "sin32"] if "do_rotary" in attrs.get(form, {}) else []
        nodes += length_nodes + [gqa(ins(form, past=past > 0, caches=tables), three(form),
                                     "gqa_" + form, **attrs.get(form, {}))]
        graph_inputs += inputs(form, batch, seq, past, d=d) + [mask]
    m = model(nodes, graph_inputs, outs(*[o for form in forms for o in three(form)]),
              [const("axis1", np.array([1], np.int64)), const("one64", np.array(1, np.int64))]
              + caches[:2], opset=21, extra_opsets=ms)
    save("gqa_runtime_lengths", m)

    # Errors: one node 'gqa' each, a decode step after a past of 4 unless said.
    def error(name, names=None, inputs=decode, inits=None, outputs=("y",), **attrs):
        save("error_gqa_" + name, model(
            [gqa(names or ins("d"), list(outputs), "gqa", **attrs)], list(inputs),
            outs(*[o for o in outputs if o]), lengths(P, 1, "d") if inits is None else inits,
            opset=21, extra_opsets=ms))

    error("total", inits=[const("seqlens_kd", np.full(B, 4, np.int32)),
                          const("totald", np.array(9, np.int32))])
    error("total_short", inputs=decode + [vi("seqlens_kd", I32, [B])],
          inits=[const("totald", np.array(0, np.int32))])
    error("seqlens_range", inits=[const("seqlens_kd", np.array([4, 100], np.int32)),
                                  const("totald", np.array(5, np.int32))])
    error("zero_tokens", inputs=inputs("d", B, 0, P) + [vi("seqlens_kd", I32, [B])],
          inits=[const("totald", np.array(P, np.int32))])
    error("dynamic_total", inputs=decode + [vi("totald", I32, [])],
          inits=lengths(P, 1, "d")[:1])
    error("chunk_batch", names=ins("c"), inputs=inputs("c", B, S, P) + [vi("seqlens_kc", I32, [B])],
          inits=[const("totalc", np.array(P + S, np.int32))])
    error("seqlens_type", inits=[const("seqlens_kd", np.full(B, 4, np.int64)),
                                 const("totald", np.array(5, np.int32))])
    error("heads", kv_num_heads=3)
    error("window_not_causal", local_window_size=2, causal=0)
    error("window_zero", local_window_size=0)
    error("smooth_softmax", smooth_softmax=1)
    error("qk_output", qk_output=1)
    error("quantized", k_quant_type="PER_TENSOR")
    error("position_ids", names=ins("d") + ["", "", "pos"],
          inputs=decode + [vi("pos", I64, [B, 1])])
    error("key_only", names=["qd", "kd", "", "pkd", "pvd", "seqlens_kd", "totald"])
    error("query_shape", inputs=[vi("qd", F, [B, 1, 18])] + decode[1:])
    error("past_shape", inputs=decode[:3] + [vi("pkd", F, [B, Hq, P, D]),
                                             vi("pvd", F, [B, Hq, P, D])])
    error("no_cos", do_rotary=1)
    error("no_sin", names=ins("d", caches=["cos"]), do_rotary=1,
          inits=lengths(P, 1, "d") + [const("cos", np.ones((8, D // 2), np.float32))])
    error("cos_short", names=ins("d", caches=["cos", "sin"]), do_rotary=1,
          inits=lengths(P, 1, "d") + [const("cos", np.ones((4, D // 2), np.float32)),
                                      const("sin", np.ones((4, D // 2), np.float32))])
    error("no_seqlens", names=ins("d")[:5], inits=[])
    save("error_gqa_no_num_heads", model([
        helper.make_node("GroupQueryAttention", ins("d"), ["y"], name="gqa",
                         domain="com.microsoft", kv_num_heads=Hkv)],
        decode, outs("y"), lengths(P, 1, "d"), opset=21, extra_opsets=ms))


def genai_decoders():
    """One-layer decoders in onnxruntime-genai's form (input_ids, attention_mask [B, total],
    past_key_values.0.key/.value [B, 2, past, 16] read by a packed-QKV GroupQueryAttention with
    rotary caches, seqlens_k = Cast(ReduceSum(attention_mask) - 1), total_sequence_length =
    Cast(Shape(attention_mask)[1]), logits): what kiln-compile --kv-cache refuses in such a
    model (test/cli/kv-cache-genai.test; the model builder's own exports are test/models'
    genai_llama_tiny_*)."""
    ms = [("com.microsoft", 1)]
    rng = np.random.default_rng(31)
    V, E, Hq, Hkv, D, MAX = 11, 64, 4, 2, 16, 32
    w = lambda *shape: (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    inits = [const("wte", w(V, E)), const("wqkv", w(E, (Hq + 2 * Hkv) * D)),
             const("wlm", w(Hq * D, V)), const("cos", w(MAX, D // 2)), const("sin", w(MAX, D // 2)),
             const("one", np.array([1], np.int64)), const("one_scalar", np.array(1, np.int64))]
    position_inits = [const("wpe", w(MAX, E)), const("big", np.array([MAX], np.int64))]

    def decoder(name, past=("past_key_values.0.key", "past_key_values.0.value"),
                past_dims=("batch", Hkv, "past_seq", D), positions_from_mask=False,
                length_inputs=False, extra_inputs=(), **attrs):
        embed = "h"
        extra = []
        if positions_from_mask:
            # Learned positions at CumSum(attention_mask) - 1 (the mask's last S entries).
            embed = "tok"
            extra = [node("CumSum", ["attention_mask", "one_scalar"], ["csum"], name="csum"),
                     node("Sub", ["csum", "one"], ["pos_all"], name="pos_all"),
                     node("Shape", ["input_ids"], ["seq_len"], name="seq_len", start=1, end=2),
                     node("Neg", ["seq_len"], ["minus_seq"], name="minus_seq"),
                     node("Slice", ["pos_all", "minus_seq", "big", "one"], ["pos"], name="pos"),
                     node("Gather", ["wpe", "pos"], ["pe"], name="position_embed", axis=0),
                     node("Add", ["tok", "pe"], ["h"], name="add_pe")]
        nodes = [node("Gather", ["wte", "input_ids"], [embed], name="embed", axis=0)] + extra + [
                 node("MatMul", ["h", "wqkv"], ["qkv"], name="qkv_proj"),
                 node("ReduceSum", ["attention_mask", "one"], ["kept"], name="kept", keepdims=0),
                 node("Sub", ["kept", "one"], ["last"], name="last"),
                 node("Cast", ["last"], ["seqlens_k"], name="seqlens_k", to=I32),
                 node("Shape", ["attention_mask"], ["mask_shape"], name="mask_shape"),
                 node("Gather", ["mask_shape", "one_scalar"], ["total"], name="total", axis=0),
                 node("Cast", ["total"], ["total32"], name="total32", to=I32),
                 helper.make_node("GroupQueryAttention",
                                  ["qkv", "", "", past[0], past[1], "seqlens_k", "total32", "cos",
                                   "sin"], ["y", "present.0.key", "present.0.value"], name="gqa",
                                  domain="com.microsoft",
                                  **{"num_heads": Hq, "kv_num_heads": Hkv, "do_rotary": 1,
                                     **attrs}),
                 node("MatMul", ["y", "wlm"], ["logits"], name="lm_head")]
        inputs = [vi("input_ids", I64, ["batch", "seq"]),
                  vi("attention_mask", I64, ["batch", "total_seq"]),
                  vi(past[0], F, list(past_dims)), vi(past[1], F, list(past_dims))]
        inputs += list(extra_inputs)
        if length_inputs:  # seqlens_k and total_sequence_length given as inputs of their own
            nodes = [nd for nd in nodes if nd.output[0] not in (
                "kept", "last", "seqlens_k", "mask_shape", "total", "total32")]
            inputs[1] = vi("seqlens_k", I32, ["batch"])
            inputs.append(vi("total32", I32, []))
        outputs = [vi("logits", F, ["batch", "seq", V]),
                   vi("present.0.key", F, ["batch", Hkv, "total_seq", D]),
                   vi("present.0.value", F, ["batch", Hkv, "total_seq", D])]
        save(name, model(nodes, inputs, outputs,
                         inits + (position_inits if positions_from_mask else []), opset=21,
                         extra_opsets=ms))

    decoder("genai_decoder")
    decoder("error_genai_decoder_softcap", softcap=5.0)
    decoder("error_genai_decoder_window", local_window_size=3)
    # A window of 16 keys holds every position of a sequence of up to 16 tokens.
    decoder("genai_decoder_window_wide", local_window_size=16)
    # The lengths as inputs: they leave the step (the runtime's), and need no --shape.
    decoder("genai_decoder_length_inputs", length_inputs=True)
    # A position_ids input that is not integer: the rotary cannot read it (an error).
    decoder("error_genai_decoder_float_positions",
            extra_inputs=[vi("position_ids", F, ["batch", "seq"])])
    # Positions computed from the attention mask (which the runtime replaces by its lengths).
    decoder("error_genai_decoder_mask_positions", positions_from_mask=True)
    decoder("error_genai_decoder_not_causal", causal=0)
    # A past that is not named as a cache (past_key_values.*): it keeps its file's length.
    decoder("error_genai_decoder_past_name", past=("past_key", "past_value"),
            past_dims=(1, Hkv, 4, D))
    # The same names with the builder's symbolic dims: kiln cannot shape an empty past for them.
    decoder("error_genai_decoder_past_name_symbolic", past=("past_key", "past_value"))


def unsorted_graphs():
    """Node lists out of topological order (onnxruntime sorts them; so does kiln, keeping the
    file order where it is valid) and graphs whose nodes form a cycle: unsorted.mlir."""
    x = [vi("x", F, [2, 3])]
    y = [vi("y", F, None)]
    # Every node before its producers: a Constant after its user, a Split whose two outputs feed
    # different nodes, an initializer and a graph input read directly.
    save("unsorted_nodes", model([
        node("Mul", ["sum", "half"], ["y"], name="mul"),
        node("Add", ["left", "right"], ["sum"], name="add"),
        node("Constant", [], ["half"], name="half", value=numpy_helper.from_array(
            np.float32(0.5))),
        node("Tanh", ["b"], ["right"], name="tanh"),
        node("Relu", ["a"], ["left"], name="relu"),
        node("Split", ["xc"], ["a", "b"], name="split", axis=1, num_outputs=2),
        node("Concat", ["x", "c"], ["xc"], name="concat", axis=1),
    ], x, y, [const("c", np.array([[1.0], [-2.0]], np.float32))]))
    # Independent nodes keep their file order: exp, neg, then add (which reads both).
    save("unsorted_stable", model([
        node("Add", ["a", "b"], ["y"], name="add"),
        node("Exp", ["x"], ["b"], name="exp"),
        node("Neg", ["x"], ["a"], name="neg"),
    ], x, y))
    # Two nodes that read each other's outputs.
    save("error_cycle", model([
        node("Relu", ["z"], ["w"], name="relu"),
        node("Neg", ["w"], ["z"], name="neg"),
        node("Add", ["x", "w"], ["y"], name="add"),
    ], x, y))
    # A node that reads its own output.
    save("error_cycle_self", model([node("Add", ["x", "s"], ["s"], name="acc"),
                                    node("Identity", ["s"], ["y"], name="out")], x, y))
    # A three-node cycle behind a node that only reads it: the error names the cycle's nodes.
    save("error_cycle_three", model([
        node("Identity", ["c3"], ["y"], name="out"),
        node("Relu", ["x"], ["p"], name="n0"),
        node("Add", ["p", "c3"], ["c1"], name="n1"),
        node("Neg", ["c1"], ["c2"], name="n2"),
        node("Exp", ["c2"], ["c3"], name="n3"),
    ], x, y))
    # A cycle of ten nodes: the error lists eight and counts them all.
    save("error_cycle_long", model(
        [node("Neg", ["t%d" % ((i + 9) % 10)], ["t%d" % i], name="n%d" % i) for i in range(10)] +
        [node("Identity", ["t9"], ["y"], name="out")], x, y))


def structure_checks():
    """Invalid models that onnx.checker and onnxruntime reject, and sizes that overflow int64
    (issue Reliability): test/onnx/structure.mlir."""
    x = [vi("x", F, [2, 3])]
    y = [vi("y", F, None)]
    relu = [node("Relu", ["x"], ["y"], name="relu")]
    save("error_duplicate_graph_input", model(relu, x + x, y))
    save("error_duplicate_graph_output", model(relu, x, y + y))
    save("error_empty_graph_input", model(relu, x + [vi("", F, [2])], y))
    save("error_duplicate_initializer", model(
        [node("Add", ["x", "c"], ["y"], name="add")], x, y,
        [const("c", np.ones(3, np.float32)), const("c", np.zeros(3, np.float32))]))
    sm = node("Softmax", ["x"], ["y"], name="sm", axis=1)
    sm.attribute.append(helper.make_attribute("axis", 0))
    save("error_duplicate_attribute", model([sm], x, y))
    # axis declared INT but its value in the FLOAT field.
    sm = node("Softmax", ["x"], ["y"], name="sm")
    sm.attribute.append(onnx.AttributeProto(name="axis", type=onnx.AttributeProto.INT, f=1.0))
    save("error_attribute_wrong_field", model([sm], x, y))
    sm = node("Softmax", ["x"], ["y"], name="sm")
    sm.attribute.append(onnx.AttributeProto(name="axis", type=onnx.AttributeProto.INT))
    save("error_attribute_no_value", model([sm], x, y))
    save("error_too_many_outputs", model([node("Relu", ["x"], ["y", "z"], name="relu")], x, y))
    m = model(relu, x, y)
    m.ir_version = 1000000
    save("error_ir_version", m)
    save("error_slice_starts_2d", model(
        [node("Slice", ["x", "s", "e"], ["y"], name="slice")], x, y,
        [const("s", np.array([[0]], np.int64)), const("e", np.array([[1]], np.int64))]))
    # Element counts that overflow int64 (UBSan: signed overflow) or are absurd.
    big = 2 ** 32
    save("error_reshape_overflow", model(
        [node("Reshape", ["x", "s"], ["y"], name="reshape")], x, y,
        [const("s", np.array([big, big, 4, -1], np.int64))]))
    save("error_tile_overflow", model(
        [node("Tile", ["x", "r"], ["y"], name="tile")], x, y,
        [const("r", np.array([2 ** 62, 1], np.int64))]))
    save("error_expand_overflow", model(
        [node("Expand", ["x", "s"], ["y"], name="expand")], x, y,
        [const("s", np.array([big, big, 2, 3], np.int64))]))
    save("error_constant_of_shape_overflow", model(
        [node("ConstantOfShape", ["s"], ["y"], name="cos")], [], y,
        [const("s", np.array([big, big, 4], np.int64))]))
    save("error_range_huge", model(
        [node("Range", ["a", "b", "d"], ["y"], name="range")], [], y,
        [const("a", np.array(0, np.float32)), const("b", np.array(1e30, np.float32)),
         const("d", np.array(1, np.float32))]))
    save("error_input_dims_overflow", model(relu, [vi("x", F, [big, big, 4])], y))
    save("error_initializer_dims_overflow", model(
        [node("Add", ["x", "c"], ["y"], name="add")], x, y,
        [onnx.TensorProto(name="c", data_type=F, dims=[big, big, 4])]))


def broken_files():
    """A truncated copy of a valid model, random bytes and an empty file."""
    data = model([node("Add", ["x", "c"], ["y"])], [vi("x", F, [4])], [vi("y", F, None)],
                 [const("c", np.arange(4, dtype=np.float32))]).SerializeToString()
    with open(os.path.join(OUT, "error_truncated.onnx"), "wb") as f:
        f.write(data[: len(data) - 20])
    with open(os.path.join(OUT, "error_random.onnx"), "wb") as f:
        f.write(np.random.default_rng(0).integers(0, 256, 256, dtype=np.uint8).tobytes())
    open(os.path.join(OUT, "error_empty.onnx"), "wb").close()


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for gen in [elementwise, logic, gelu, folding, shape_ops, runtime_cumsum, movement, slices,
                gathers, math, reduce18, reduce13, external_data, old_and_new_opsets,
                rotary_embedding, derived_ops, activations, arg_reduce, arg_reduce_rows, mod, opsets25_28, empty_tensors, attention23, errors, review_fixes, contrib,
                matmul_nbits, group_query_attention, plain_decoders,
                broken_files, structure_checks, unsorted_graphs, cast_rounding, cast_int_rounding, pads,
                einsums, tensor_scatters, cache_op_decoders, genai_decoders]:
        gen()
    print("wrote", OUT)
