#!/usr/bin/env python3
"""Checks the importer's semantics against onnxruntime, without a GPU.

Imports each shared model with `kiln-compile --emit=graph`, folds it with
`kiln-opt --kiln-fold-shape-subgraphs`, evaluates the resulting graph-level kiln IR with a
small numpy interpreter (below) and compares the output with onnxruntime on the same
inputs: ||out - ref|| / ||ref|| must stay below 1e-5 (fp32 throughout).

Usage: python3 test/onnx/check_import_numerics.py [--bin build/bin] [--models ../shared/models]
       python3 test/onnx/check_import_numerics.py --contrib [--bin build/bin]
         (onnxruntime's contrib ops, models from test/onnx/Inputs; every output compared)
       python3 test/onnx/check_import_numerics.py --pad-einsum [--bin build/bin]
         (Pad in every mode, Einsum's forms and TensorScatter, models from test/onnx/Inputs)
       python3 test/onnx/check_import_numerics.py --genai [--bin build/bin]
         (onnxruntime-genai model-builder exports from test/models: prefill, then a decode step)
       python3 test/onnx/check_import_numerics.py --kv-steps [--bin build/bin]
         (the causal-LM exports of test/models, plain ones included, compiled with --kv-cache
         and run as generation steps over a numpy paged KV cache: see check_kv_steps)
Needs numpy and onnxruntime (exit 77, skipped, without them). The ctest tests import-numerics-*
run each mode (test/CMakeLists.txt); the shared-models mode skips when the models are absent.
"""
import argparse
import math
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import onnxruntime as ort
except ImportError as e:  # ctest counts exit 77 as skipped
    print(f"SKIP: {e} (pip install numpy onnxruntime; scripts/setup.sh puts them in .venv)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gqa_lengths  # noqa: E402  (inputs and comparison rules of gqa_runtime_lengths.onnx)
from ort_reference import reference_session  # noqa: E402  (--genai and --kv-steps references)

DT = {"f32": np.float32, "f16": np.float16, "i64": np.int64, "i32": np.int32, "i1": np.bool_,
      "ui8": np.uint8}

def ttype(s):
    """tensor<2x16xf32> -> ([2, 16], np.float32)."""
    m = re.fullmatch(r"tensor<(?:([0-9x]*)x)?(\w+)>", s.strip())
    dims = [int(d) for d in m.group(1).split("x")] if m.group(1) else []
    return dims, DT[m.group(2)]

def parse_dense(body, dims, dt):
    """The value of a dense<...> literal (hex blob, hex splat or nested list)."""
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        if dt == np.bool_:
            return np.frombuffer(raw, np.uint8).astype(bool).reshape(dims)
        return np.frombuffer(raw, dt).reshape(dims).copy()
    if body.startswith("0x"):
        bits = np.array([int(body, 16)], dtype=np.uint64)
        a = bits.astype({np.float32: np.uint32, np.float16: np.uint16}[dt]).view(dt)[0]
        return np.full(dims, a, dt)
    # Inside a list MLIR prints non-finite floats as their bits (0xFF800000 is -inf in f32).
    if dt in (np.float32, np.float16):
        bits_t = {np.float32: np.uint32, np.float16: np.uint16}[dt]
        body = re.sub(r"0x[0-9A-Fa-f]+", lambda m: repr(float(np.array([int(m.group(0), 16)], bits_t).view(dt)[0])), body)
    v = eval(body.replace("true", "True").replace("false", "False").replace("inf", "float('inf')").replace("nan", "float('nan')"))
    a = np.array(v, dtype=dt)
    return np.broadcast_to(a, dims).copy() if a.ndim == 0 else a.reshape(dims)

def paged_positions(table, lens, b, count, block):
    """(pool block, row) of the first `count` cache positions of sequence `b`."""
    pos = np.arange(count)
    return table[b][pos // block], pos % block


def kv_cache_append(k, v, kcache, vcache, table, lens):
    """kiln.kv_cache_append: token i of sequence b to cache position lens[b] + i (in place)."""
    block = kcache.shape[2]
    for b in range(k.shape[0]):
        pos = lens[b] + np.arange(k.shape[2])
        kcache[table[b][pos // block], :, pos % block] = k[b].transpose(1, 0, 2)
        vcache[table[b][pos // block], :, pos % block] = v[b].transpose(1, 0, 2)
    return kcache, vcache


def paged_attention(q, kcache, vcache, table, lens, scale, bshd):
    """kiln.paged_attention: query i of sequence b at position lens[b] + i attends the cache
    positions j <= lens[b] + i (causal), query head h reading KV head h / (Hq / Hkv)."""
    B, Hq, S, _ = q.shape
    g = Hq // kcache.shape[1]
    out = np.zeros((B, Hq, S, vcache.shape[3]))
    for b in range(B):
        blocks, rows = paged_positions(table, lens, b, lens[b] + S, kcache.shape[2])
        k = np.repeat(kcache[blocks, :, rows].transpose(1, 0, 2).astype(np.float64), g, axis=0)
        v = np.repeat(vcache[blocks, :, rows].transpose(1, 0, 2).astype(np.float64), g, axis=0)
        sc = q[b].astype(np.float64) @ k.swapaxes(-1, -2) * scale
        sc = np.where(np.arange(lens[b] + S)[None, :] <= lens[b] + np.arange(S)[:, None], sc, -np.inf)
        e = np.exp(sc - sc.max(axis=-1, keepdims=True))
        out[b] = e / e.sum(axis=-1, keepdims=True) @ v
    return out.transpose(0, 2, 1, 3) if bshd else out


def run(text, inputs):
    """Evaluates the single func.func of `text` on `inputs`; returns its results. A
    kv_cache_append writes into its cache inputs in place, as the runtime's does."""
    env = {}
    erf = np.vectorize(math.erf)
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("func.func"):
            for i, (name, ty) in enumerate(re.findall(r"(%arg\d+): (tensor<[^>]*>)", line)):
                env[name] = inputs[i]
            continue
        if line.startswith("return"):
            names = line[len("return "):].split(" : ")[0].split(", ")
            return [env[n] for n in names]
        m = re.match(r"(%\w+), (%\w+) = kiln\.kv_cache_append (%\w+), (%\w+), (%\w+), (%\w+), (%\w+), (%\w+) :", line)
        if m:
            a = [env[o] for o in m.groups()[2:]]
            env[m.group(1)], env[m.group(2)] = kv_cache_append(*a)
            continue
        m = re.match(r"(%\d+) = kiln\.(\w+) (.*)$", line)
        if not m:
            continue
        res, op, rest = m.groups()
        rtype = re.findall(r"tensor<[^>]*>", rest)[-1]
        dims, dt = ttype(rtype)
        if op == "constant":
            env[res] = parse_dense(re.match(r"dense<(.*)> : tensor", rest).group(1), dims, dt)
            continue
        kind = None
        km = re.match(r"<(\w+)> (.*)", rest)
        if km:
            kind, rest = km.groups()
        attrs = {}
        am = re.search(r"\{(.*)\}", rest)
        if am:
            for k, v in re.findall(r"(\w+) = (array<i64(?::[^>]*)?>|[^,]+)", am.group(1)):
                if v.startswith("array"):
                    attrs[k] = [int(x) for x in v[len("array<i64"):-1].lstrip(":").split(",") if x.strip()]
                else:
                    attrs[k] = v.split(" : ")[0].strip()
        ops = re.findall(r"%\w+", rest.split("{")[0].split(" : ")[0])
        a = [env[o] for o in ops]
        U = {"neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "reciprocal": lambda x: 1 / x,
             "tanh": np.tanh, "erf": lambda x: erf(x).astype(x.dtype), "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
             "relu": lambda x: np.maximum(x, 0), "cos": np.cos, "sin": np.sin, "not": np.logical_not, "is_nan": np.isnan}
        B = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "pow": np.power, "max": np.maximum, "min": np.minimum,
             "equal": np.equal, "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
             "greater_equal": np.greater_equal, "and": np.logical_and, "or": np.logical_or}
        with np.errstate(all="ignore"):
            if op in U: r = U[op](a[0])
            elif op in B: r = B[op](a[0], a[1])
            elif op == "mod": r = np.mod(a[0], a[1])  # kiln.mod: the sign of the divisor
            elif op == "div": r = np.divide(a[0], a[1]) if a[0].dtype.kind == "f" else np.trunc(a[0] / a[1]).astype(a[0].dtype)
            elif op == "where": r = np.where(a[0], a[1], a[2])
            elif op == "cast": r = a[0].astype(dt) if dt != np.bool_ else (a[0] != 0)
            elif op == "reshape": r = a[0].reshape(dims)
            elif op == "transpose": r = np.transpose(a[0], attrs["perm"])
            elif op == "slice":
                idx = [np.arange(n) * st + s for n, s, st in zip(dims, attrs["starts"], attrs["steps"])]
                r = a[0][np.ix_(*idx)]
            elif op == "concat": r = np.concatenate(a, axis=int(attrs["axis"]))
            elif op == "expand": r = np.broadcast_to(a[0], dims).copy()
            elif op == "gather":
                ax = int(attrs["axis"]); i = a[1].astype(np.int64); i = np.where(i < 0, i + a[0].shape[ax], i)
                r = np.take(a[0], i, axis=ax)
            elif op == "gather_elements":
                ax = int(attrs["axis"]); i = a[1].astype(np.int64); i = np.where(i < 0, i + a[0].shape[ax], i)
                r = np.take_along_axis(a[0], i, axis=ax)
            elif op == "gather_nd":
                assert int(attrs["batch_dims"]) == 0
                i = a[1]; k = i.shape[-1]
                r = a[0][tuple(i[..., j] for j in range(k))]
            elif op == "matmul": r = np.matmul(a[0], a[1])
            elif op == "softmax":
                x = a[0]; ax = int(attrs["axis"]); e = np.exp(x - x.max(axis=ax, keepdims=True)); r = e / e.sum(axis=ax, keepdims=True)
            elif op == "layer_norm":
                x = a[0]; ax = int(attrs["axis"]); axes = tuple(range(ax, x.ndim)); eps = float(attrs["epsilon"])
                mu = x.mean(axis=axes, keepdims=True); var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
                r = (x - mu) / np.sqrt(var + eps) * a[1] + (a[2] if len(a) > 2 else 0)
            elif op == "rms_norm":
                x = a[0]; ax = int(attrs["axis"]); axes = tuple(range(ax, x.ndim)); eps = float(attrs["epsilon"])
                r = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps) * a[1]
            elif op == "attention":
                q, k, v = (x.astype(np.float64) for x in a[:3]); g = q.shape[1] // k.shape[1]
                k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
                sc = q @ k.swapaxes(-1, -2) * float(attrs["scale"])
                if len(a) > 3: sc = sc + a[3]
                sq, sk = sc.shape[-2:]
                if attrs["causal"] == "true":
                    sc = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq, sc, -np.inf)
                e = np.exp(sc - sc.max(axis=-1, keepdims=True)); pr = e / e.sum(axis=-1, keepdims=True)
                if attrs["zero_masked_rows"] == "true": pr = np.where(np.isnan(pr), 0, pr)
                r = pr @ v
                if attrs["bshd_output"] == "true": r = r.transpose(0, 2, 1, 3)
            elif op == "rotary":
                x, c, sn = a; h = x.shape[-1] // 2
                r = x * c + np.concatenate([-x[..., h:], x[..., :h]], axis=-1) * sn
            elif op == "reduce":
                f = {"mean": np.mean, "sum": np.sum, "max": np.max}[kind]
                r = f(a[0], axis=tuple(attrs["axes"]), keepdims=attrs["keep_dims"] == "true")
            elif op == "paged_attention":
                r = paged_attention(*a, float(attrs["scale"]), attrs["bshd_output"] == "true")
            elif op == "sample":
                # Greedy rows only (temperature <= 0): the first maximum, NaN never picked.
                x, t = a[0].reshape(a[0].shape[0], -1), a[1]
                if np.any(t > 0):
                    raise SystemExit("kiln.sample with temperature > 0: not interpreted")
                r = np.argmax(np.where(np.isnan(x), -np.inf, x), axis=-1)[:, None]
            elif op == "arg_reduce" and kind == "max" and attrs["select_last_index"] == "false":
                r = np.argmax(a[0], axis=int(attrs["axis"]))
                if attrs["keep_dims"] == "true": r = np.expand_dims(r, int(attrs["axis"]))
            else:
                raise SystemExit("unknown op " + op)
        r = np.asarray(r).astype(dt)
        assert list(r.shape) == dims, (line, r.shape, dims)
        env[res] = r


MODELS = ["gpt2_tiny_dynamo", "bert_tiny_dynamo", "bert_tiny_legacy", "llama_tiny_dynamo"]

# --contrib: onnxruntime's contrib ops (test/onnx/Inputs, gen_onnx_tests.py), every output
# compared; inputs are random normals of each input's type, all fixed-shape float32 or float16.
CONTRIB_MODELS = ["contrib_skip_layer_norm", "contrib_skip_simplified_layer_norm",
                  "contrib_simplified_layer_norm", "contrib_gelu", "matmul_nbits",
                  "matmul_nbits_fp16", "gqa", "gqa_rotary", "gqa_softcap_window_packed",
                  "gqa_runtime_lengths"]
# Relative-error bound per model where 1e-5 does not apply: float16 storage (the dequantized
# weight and the output rounded to fp16; onnxruntime rounds differently).
TOLERANCE = {"matmul_nbits_fp16": 2e-3}
ORT_DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16}
# --pad-einsum: Pad (every mode, opsets 7, 19 and 24), Einsum (float and int64 forms) and
# TensorScatter-24 (linear, circular, 3-D float16).
PAD_EINSUM_MODELS = ["pad", "pad_opset7", "pad_opset24", "pad_wide", "einsum", "tensor_scatter",
                     "tensor_scatter_circular", "tensor_scatter_3d"]
# Models whose reference is the ONNX reference evaluator (onnxruntime refuses Pad's reflect and
# wrap wider than the axis; numpy.pad repeats them).
REFERENCE_EVALUATOR = {"pad_wide"}


def feed(i, rng):
    """A random input for onnxruntime input `i`: normals for floats; an attention mask (int64
    [B, T] named mask_*) right-padded as gqa_lengths.padded_mask draws it."""
    if i.type == "tensor(int64)" and i.name.startswith("mask_"):
        return gqa_lengths.padded_mask(i.shape)
    if i.type == "tensor(int64)" and i.name == "write_indices":  # linear: room for the update
        return rng.integers(0, 5, i.shape).astype(np.int64)
    if i.type == "tensor(int64)" and i.name == "write_indices_any":  # circular: anything
        return rng.integers(0, 1000, i.shape).astype(np.int64)
    return rng.standard_normal(i.shape).astype(ORT_DTYPES[i.type])


def relative_error(out, ref, undefined=None):
    """||out - ref|| / ||ref|| in float64 (0 when both are all zeros), leaving out the elements
    where `undefined` (broadcastable to out, or None) is True."""
    out, ref = out.astype(np.float64), ref.astype(np.float64)
    if undefined is not None:
        out, ref = np.where(undefined, 0, out), np.where(undefined, 0, ref)
    return float(np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-30))


def check_contrib(compile_, opt, passes, models=CONTRIB_MODELS):
    """Each output of each of `models` (test/onnx/Inputs, float32 or float16 inputs):
    ||out - ref|| / ||ref|| against onnxruntime (0 when both are all zeros). Returns the worst
    error as a fraction of each model's bound (1e-5 unless TOLERANCE says otherwise), scaled to
    1e-5: below 1e-5 passes."""
    inputs_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs")
    worst = 0.0
    rng = np.random.default_rng(2)
    for m in models:
        path = os.path.join(inputs_dir, m + ".onnx")
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feeds = {i.name: feed(i, rng) for i in sess.get_inputs()}
        graph = subprocess.run([compile_, path, "--emit=graph", "--print-constants"], capture_output=True, text=True,
                               check=True).stdout
        folded = subprocess.run([opt] + passes.split(), input=graph, capture_output=True, text=True,
                                check=True).stdout
        if m in REFERENCE_EVALUATOR:
            from onnx.reference import ReferenceEvaluator
            refs = ReferenceEvaluator(path).run(None, feeds)
        else:
            refs = sess.run(None, feeds)
        outs = run(folded, list(feeds.values()))
        for o, out, ref in zip(sess.get_outputs(), outs, refs):
            assert out.shape == ref.shape, (m, o.name, out.shape, ref.shape)
            err = relative_error(out, ref, gqa_lengths.undefined(o.name, out.shape, feeds))
            worst = max(worst, err * 1e-5 / TOLERANCE.get(m, 1e-5))
            print(f"{m} {o.name}: relative error {err:.2e} (bound {TOLERANCE.get(m, 1e-5):.0e})")
    return worst


# --genai: onnxruntime-genai model-builder exports in test/models (make_genai_tiny.py), a prefill
# of a right-padded batch of 2 and then a decode step on its present, against onnxruntime.
GENAI_MODELS = {"genai_llama_tiny_int4": 1e-5, "genai_llama_tiny_fp16": 2e-3}


def check_genai(compile_, opt, passes):
    """Each GENAI_MODELS export: prefill (input_ids 2x5, attention_mask right-padded to 5 and 3
    tokens, an empty past) and a decode step (2x1, the prefill's present as the past, masks of 6
    and 4) through the imported graph and through onnxruntime; every output compared where
    onnxruntime defines it (gqa_lengths.undefined_for_mask). MatMulNBits runs with
    accuracy_level 0 in the reference: at the builder's 4 onnxruntime quantizes A to int8 per
    block (0.7% off in the logits here), where kiln multiplies in float. Returns the worst error
    scaled as check_contrib's."""
    models_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
    worst = 0.0
    rng = np.random.default_rng(3)
    for m, bound in GENAI_MODELS.items():
        path = os.path.join(models_dir, m + ".onnx")
        # The head size is a dim_param of the past: reference_session gives it from the rotary
        # caches.
        sess, dim = reference_session(path)
        names = [i.name for i in sess.get_inputs()]
        past = [i for i in sess.get_inputs() if i.name.startswith("past_key_values.")]
        dt = ORT_DTYPES[past[0].type]
        heads = past[0].shape[1]
        vocab = sess.get_outputs()[0].shape[2]
        feeds = {"input_ids": rng.integers(0, vocab, (2, 5)).astype(np.int64),
                 "attention_mask": gqa_lengths.padded_mask((2, 5))}
        feeds.update({p.name: np.zeros((2, heads, 0, dim), dt) for p in past})
        for step in ("prefill", "decode"):
            refs = sess.run(None, feeds)
            spec = ",".join(f"{k}={'x'.join(map(str, feeds[k].shape))}" for k in names)
            graph = subprocess.run([compile_, path, "--shape", spec, "--emit=graph",
                                    "--print-constants"], capture_output=True, text=True,
                                   check=True).stdout
            folded = subprocess.run([opt] + passes.split(), input=graph, capture_output=True,
                                    text=True, check=True).stdout
            outs = run(folded, [feeds[k] for k in names])
            for o, out, ref in zip(sess.get_outputs(), outs, refs):
                assert out.shape == ref.shape, (m, step, o.name, out.shape, ref.shape)
                err = relative_error(out, ref, gqa_lengths.undefined_for_mask(
                    o.name, out.shape, feeds["attention_mask"]))
                worst = max(worst, err * 1e-5 / bound)
                print(f"{m} {step} {o.name}: relative error {err:.2e} (bound {bound:.0e})")
            # The decode step: one new token per row, the prefill's present as the past.
            presents = dict(zip([o.name for o in sess.get_outputs()], refs))
            lengths = feeds["attention_mask"].sum(axis=1)
            feeds = {"input_ids": rng.integers(0, vocab, (2, 1)).astype(np.int64),
                     "attention_mask": (np.arange(6)[None, :] < (lengths + 1)[:, None]).astype(
                         np.int64)}
            feeds.update({p.name: presents[p.name.replace("past_key_values", "present")]
                          for p in past})
    return worst


# --kv-steps: the causal-LM exports of test/models compiled as generation steps (kiln-compile
# --kv-cache): with cache I/O (form a), and plain (form b: the importer makes their positions
# the position_ids input). Two sequences of 13 and 11 tokens share a pool of 9 blocks of 4
# tokens (their blocks scattered); each step is (the sequences it runs, tokens per sequence):
# prefill chunks of sequence 0, then of sequence 1, then steps of both at different positions.
# (directory under test/, model): plain_decoder* are gen_onnx_tests.py's tiny plain decoders,
# without and with an attention_mask input; attention23_decoder and tensor_scatter_decoder keep
# their cache in ONNX Attention-23's past_key/past_value and in TensorScatter-24 buffers (a
# symbolic length, a static one of 32, and [B, M, Hkv, D] written along axis 1); genai_llama_tiny_*
# (and gen_onnx_tests.py's one-layer genai_decoder) are onnxruntime-genai model-builder exports (GroupQueryAttention keeps the cache and rotates by
# positions from the attention mask; int4 MatMulNBits in f32, and fp16 with its own bound).
KV_STEP_MODELS = [("models", "llama_tiny_causal_dynamo"), ("models", "gpt2_tiny_causal_dynamo"),
                  ("models", "llama_tiny_causal_past_dynamo"),
                  ("models", "llama_tiny_causal_past_dynamo_opset23"),
                  ("models", "gpt2_tiny_causal_past_dynamo"), ("onnx/Inputs", "plain_decoder"),
                  ("onnx/Inputs", "plain_decoder_attention_mask"),
                  ("onnx/Inputs", "attention23_decoder"), ("onnx/Inputs", "tensor_scatter_decoder"),
                  ("onnx/Inputs", "tensor_scatter_decoder_static"),
                  ("onnx/Inputs", "tensor_scatter_decoder_bshd"),
                  ("onnx/Inputs", "genai_decoder"), ("onnx/Inputs", "genai_decoder_window_wide"),
                  ("onnx/Inputs", "genai_decoder_length_inputs"),
                  ("models", "genai_llama_tiny_int4"),
                  ("models", "genai_llama_tiny_fp16")]
# Relative-error bounds other than 1e-5 (fp16 arithmetic in both kiln's graph and onnxruntime).
KV_STEP_BOUNDS = {"genai_llama_tiny_fp16": 2e-3}
KV_STEPS = [((0,), 5), ((0,), 3), ((1,), 4), ((1,), 2), ((0, 1), 1), ((0, 1), 1), ((0, 1), 1),
            ((0, 1), 2)]
KV_TABLES = [[3, 0, 6, 1], [2, 5, 8, 4]]
KV_STEP_PASSES = ["--kiln-bind-generation-inputs", "--kiln-eliminate-empty-tensors",
                  "--kiln-fold-shape-subgraphs", "--cse", "--kiln-raise-attention",
                  "--kiln-paged-kv-cache=max-seq-len=16 block-size=4 num-blocks=9 "
                  "last-token-logits=false"]


def full_forward(sess, ids, head=None):
    """onnxruntime's logits [L, V] of the export over all of `ids` (one sequence, no past):
    a cache-I/O export gets an empty past, a mask of ones and positions 0..L-1; a TensorScatter
    cache (a `write_indices` input) L zero rows written from index 0. `head` fills a past's
    symbolic head size."""
    feeds = {}
    scatter = any(i.name == "write_indices" for i in sess.get_inputs())
    for i in sess.get_inputs():
        if i.name == "input_ids":
            feeds[i.name] = ids[None, :]
        elif i.name == "attention_mask":
            feeds[i.name] = np.ones((1, len(ids)), np.int64)
        elif i.name == "position_ids":
            feeds[i.name] = np.arange(len(ids), dtype=np.int64)[None, :]
        elif i.name.startswith("past_key_values."):
            # The batch dim 1; the cache's symbolic length L rows (TensorScatter) or 0 (a past);
            # a symbolic head size (the last dim) `head`.
            dims = [d if not isinstance(d, str) else 1 if k == 0 else head if k == 3 and head
                    else (len(ids) if scatter else 0) for k, d in enumerate(i.shape)]
            feeds[i.name] = np.zeros(dims, ORT_DTYPES[i.type])
        elif i.name == "write_indices":
            feeds[i.name] = np.zeros(1, np.int64)
        elif i.name == "seqlens_k":  # GroupQueryAttention's lengths as inputs (genai_decoder_*)
            feeds[i.name] = np.array([len(ids) - 1], np.int32)
        elif i.name == "total32":
            feeds[i.name] = np.array(len(ids), np.int32)
        else:
            raise SystemExit(f"{i.name}: an input --kv-steps does not know how to fill")
    return sess.run(None, feeds)[0][0]


def check_kv_steps(compile_, opt):
    """Each KV_STEP_MODELS export compiled with --kv-cache at every step shape of KV_STEPS
    (kiln-compile --emit=graph, then KV_STEP_PASSES: kiln-paged-kv-cache makes the attention
    append to and read from the cache), run step by step by the interpreter with one set of
    numpy pools, position_ids = seq_lens[b] + i: each step's logits against the last rows of
    onnxruntime's full forward over the sequence so far (||out - ref|| / ||ref|| per row).
    Returns the worst error, scaled to a bound of 1e-5 (KV_STEP_BOUNDS)."""
    test_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    worst = 0.0
    for directory, m in KV_STEP_MODELS:
        path = os.path.join(test_dir, directory, m + ".onnx")
        sess, head = reference_session(path)
        vocab = sess.get_outputs()[0].shape[2]
        bound = KV_STEP_BOUNDS.get(m, 1e-5)
        rng = np.random.default_rng(4)
        seqs = [rng.integers(0, vocab, n).astype(np.int64) for n in (13, 11)]
        refs = [full_forward(sess, ids, head) for ids in seqs]
        graphs, pools, lens = {}, {}, [0, 0]
        for rows, S in KV_STEPS:
            B = len(rows)
            if (B, S) not in graphs:
                graph = subprocess.run([compile_, path, "--kv-cache", "--max-seq-len", "16",
                                        "--shape", f"input_ids={B}x{S}", "--emit=graph",
                                        "--print-constants"], capture_output=True, text=True,
                                       check=True).stdout
                graphs[(B, S)] = subprocess.run([opt] + KV_STEP_PASSES, input=graph,
                                                capture_output=True, text=True,
                                                check=True).stdout
            text = graphs[(B, S)]
            header = next(l for l in text.splitlines() if l.strip().startswith("func.func"))
            args = re.findall(r'%arg\d+: (tensor<[^>]*>) \{kiln\.name = "([^"]+)"', header)
            feeds = {"input_ids": np.stack([seqs[r][lens[r]:lens[r] + S] for r in rows]),
                     "position_ids": np.stack([lens[r] + np.arange(S) for r in rows]),
                     "kv_cache.block_table": np.array([KV_TABLES[r] for r in rows], np.int32),
                     "kv_cache.seq_lens": np.array([lens[r] for r in rows], np.int32)}
            for ty, name in args:
                if name.startswith("kv_cache.") and name not in feeds and name not in pools:
                    dims, dt = ttype(ty)
                    pools[name] = np.full(dims, np.nan, dt)  # unwritten rows show as NaN
            feeds.update(pools)
            for ty, name in args:  # next_token's sampling inputs: greedy rows
                if name.startswith("sampling."):
                    dims, dt = ttype(ty)
                    feeds[name] = np.full(dims, 1 if name == "sampling.top_p" else 0, dt)
            unknown = [name for _, name in args if name not in feeds]
            if unknown:
                raise SystemExit(f"{m}: step inputs {unknown} (expected the --kv-cache roles)")
            logits = run(text, [feeds[name] for _, name in args])[0]
            assert logits.shape == (B, S, vocab), (m, rows, S, logits.shape)
            for k, r in enumerate(rows):
                err = relative_error(logits[k], refs[r][lens[r]:lens[r] + S])
                worst = max(worst, err * 1e-5 / bound)
                print(f"{m} sequence {r}, positions {lens[r]}..{lens[r] + S - 1} "
                      f"(batch {B}): relative error {err:.2e} (bound {bound:.0e})")
            for r in rows:
                lens[r] += S
    print(f"kv-steps: {len(KV_STEP_MODELS)} models, worst error {worst / 1e-5:.2f} of its bound")
    return worst


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.path.join(here, "..", "..", "build", "bin"))
    parser.add_argument("--models", default=os.environ.get(
        "KILN_MODELS_DIR", os.path.join(here, "..", "..", "..", "shared", "models")),
        help="the shared models (default: $KILN_MODELS_DIR, else ../shared/models beside the "
             "repository)")
    parser.add_argument("--shapes", default="2x16,1x128", help="batch x seq list")
    parser.add_argument("--names", default=",".join(MODELS), help="model file names (no .onnx)")
    parser.add_argument("--passes", default="--kiln-fold-shape-subgraphs",
                        help="kiln-opt passes before interpreting (e.g. add --kiln-raise-layer-norm)")
    parser.add_argument("--contrib", action="store_true",
                        help="check the contrib-op models of test/onnx/Inputs instead of --models")
    parser.add_argument("--pad-einsum", action="store_true",
                        help="check the Pad and Einsum models of test/onnx/Inputs instead of --models")
    parser.add_argument("--genai", action="store_true",
                        help="check the onnxruntime-genai exports of test/models instead of --models")
    parser.add_argument("--kv-steps", action="store_true",
                        help="run the causal-LM exports of test/models as --kv-cache generation "
                             "steps over a numpy paged cache instead of --models")
    args = parser.parse_args()
    compile_, opt = os.path.join(args.bin, "kiln-compile"), os.path.join(args.bin, "kiln-opt")
    if args.pad_einsum:
        sys.exit(0 if check_contrib(compile_, opt, args.passes, PAD_EINSUM_MODELS) < 1e-5 else 1)
    if args.contrib:
        sys.exit(0 if check_contrib(compile_, opt, args.passes) < 1e-5 else 1)
    if args.genai:
        sys.exit(0 if check_genai(compile_, opt, args.passes) < 1e-5 else 1)
    if args.kv_steps:
        sys.exit(0 if check_kv_steps(compile_, opt) < 1e-5 else 1)
    if not os.path.isdir(args.models):
        print(f"SKIP: no shared models in {os.path.abspath(args.models)} (--models, "
              f"KILN_MODELS_DIR)")
        sys.exit(77)
    worst = 0.0
    for m in args.names.split(","):
        for shape in args.shapes.split(","):
            b, s = (int(d) for d in shape.split("x"))
            path = os.path.join(args.models, m + ".onnx")
            rng = np.random.default_rng(1)
            feeds = {"input_ids": rng.integers(0, 1000, (b, s)).astype(np.int64)}
            spec = f"input_ids={b}x{s}"
            if "attention_mask" in [i.name for i in ort.InferenceSession(
                    path, providers=["CPUExecutionProvider"]).get_inputs()]:
                mask = np.ones((b, s), np.int64)
                mask[0, s // 2:] = 0
                feeds["attention_mask"] = mask
                spec += f",attention_mask={b}x{s}"
            graph = subprocess.run([compile_, path, "--shape", spec, "--emit=graph", "--print-constants"],
                                   capture_output=True, text=True, check=True).stdout
            folded = subprocess.run([opt] + args.passes.split(), input=graph,
                                    capture_output=True, text=True, check=True).stdout
            ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
            out = run(folded, list(feeds.values()))[0]
            err = float(np.linalg.norm(out - ref) / np.linalg.norm(ref))
            worst = max(worst, err)
            print(f"{m} {shape}: relative error {err:.2e}")
    sys.exit(0 if worst < 1e-5 else 1)


if __name__ == "__main__":
    main()
