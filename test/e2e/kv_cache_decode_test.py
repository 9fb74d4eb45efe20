#!/usr/bin/env python3
"""KV-cached decode of the tiny Hugging Face exports with cache I/O (test/models), on a GPU.

For each export and precision: `kiln-compile --kv-cache` a decode step (1x1 with blocks of 16;
3x1 with blocks of 4, rows starting 0, 1 and 2 steps apart; a contiguous 2x1 cache at fp32), then
test/gpu/kv_cache_decode_test.cpp decodes the 13 tokens of the export's .ref.npz token by token
and compares every step's logits with torch's full forward over the same tokens (`full_logits`):
max|err| / max|ref| <= 1e-4 (fp32), 1e-2 (fp16), 3e-2 (bf16), argmax equal where the reference's
top-2 margin is clear. Then, with --programs-test, each export compiled once with a --shape range
(input_ids=1..2x1..32: programs decode_b1, decode_b2, prefill_b1_s32; the prefill chunk returns
its last real token's logits, and with --prefill-logits all every token's, a third variant) runs as
a generation loop (test/gpu/kv_cache_programs_test.cpp): the 5 prompt tokens prefilled in chunks of 3 through
prefill_b1_s32, the rest decoded through decode_b1, the last token again through decode_b2 with a
padding row, all programs sharing one set of pools; and with --kiln-run, `kiln-run --generate 9
--batch 2` (kiln_generate) on that artifact must give torch's greedy tokens (`greedy_ids`, from
transformers' generate) in both rows, up to the first step whose top-2 margin is within the
tolerance, and sampling on the GPU must hold its rules (check_generate_sampling: top_k 1 is
greedy, a seed reproduces its tokens in any batch row, another seed gives others). Exit 0 all pass, 1 a failure, 77 no GPU (found
at the first case), 2 setup error.

With --steps N (default 8) each check decodes N greedy tokens after the prompt. Other than the
default, the torch exports' reference comes from PyTorch (torch_reference: the export's model
rebuilt from examples/export/export_hf.py's TINY config and seed 0, checked against its
.ref.npz; transformers' greedy `generate` of N tokens, one full forward over them), and every
variant's --max-seq-len covers the prompt and the N tokens: `--steps 64` is issue 19's per-step
check over 64 steps.

With --genai they run on onnxruntime-genai's exports of test/models (GroupQueryAttention keeps
the cache; the fp16 one only in its fp16 variants), against onnxruntime as --plain.

With --plain the same variants run on the plain causal-LM exports of test/models instead
(input_ids -> logits, no cache I/O: docs/generation.md, form b, whose positions the importer makes
the position_ids input). Their reference comes from onnxruntime on the CPU, in the .ref.npz's
form: the same 5-token prompt, 8 greedy tokens (each the arg-max of the full forward's last row
over the tokens so far) and the full forward over all 13 tokens (exit 77 without onnxruntime).

    kv_cache_decode_test.py --kiln-compile build/bin/kiln-compile --decode-test build/test/kv_cache_decode_test
    kv_cache_decode_test.py --plain --kiln-compile build/bin/kiln-compile --decode-test build/test/kv_cache_decode_test \\
        --programs-test build/test/kv_cache_programs_test --kiln-run build/bin/kiln-run
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
EXPORTS = ["llama_tiny_causal_past_dynamo", "gpt2_tiny_causal_past_dynamo", "llama_tiny_causal_past_legacy",
           "llama_tiny_causal_past_dynamo_opset23"]
# --plain: the exports without cache I/O, and the prompt of the .ref.npz files (test/models/README.md).
PLAIN_EXPORTS = ["llama_tiny_causal_dynamo", "gpt2_tiny_causal_dynamo"]
# --cache-ops: decoders whose KV cache is ONNX ops (test/onnx/gen_onnx_tests.py,
# cache_op_decoders: Attention-23 past_key/past_value, a TensorScatter-24 static cache), against
# onnxruntime like the plain exports; their vocabulary has 11 words (the prompt is taken mod 11)
# and their position table 32 rows.
CACHE_OP_EXPORTS = ["attention23_decoder", "tensor_scatter_decoder"]
CACHE_OP_MODELS = os.path.join(HERE, "..", "onnx", "Inputs")
# --genai: onnxruntime-genai model-builder exports (test/models, make_genai_tiny.py): the cache
# in GroupQueryAttention nodes, positions and lengths from the attention mask, against
# onnxruntime. The fp16 export computes in fp16 in the reference too: only its fp16 variants run.
GENAI_EXPORTS = ["genai_llama_tiny_int4", "genai_llama_tiny_fp16"]
FP16_ONLY = {"genai_llama_tiny_fp16"}
PROMPT = [44, 239, 933, 760, 963]
GREEDY_STEPS = 8
# Programs (--shape ranges): (name, precision, tolerance, more kiln-compile flags). The default
# prefill chunks return their last real token's logits only; "-all" every token's.
PROGRAM_VARIANTS = [("programs-fp32", "fp32", 1e-4, []), ("programs-fp16", "fp16", 1e-2, []),
                    ("programs-fp32-all", "fp32", 1e-4, ["--prefill-logits", "all"]),
                    ("programs-fp16-fused-append", "fp16", 1e-2, ["--fuse-kv-append"]),
                    ("programs-fp16-separate-append", "fp16", 1e-2, ["--fuse-kv-append=false"])]
# (name, precision, --shape, block size, tolerance). At batch 8 the decode GEMMs multiply on the
# tensor cores (--skinny-tensor-cores=auto, from 5 rows on); below on the CUDA cores.
VARIANTS = [("fp32-b1", "fp32", "1x1", 16, 1e-4), ("fp32-b3", "fp32", "3x1", 4, 1e-4),
            ("fp32-contig", "fp32", "2x1", 64, 1e-4), ("fp16-b1", "fp16", "1x1", 16, 1e-2),
            ("fp16-b3", "fp16", "3x1", 4, 1e-2), ("fp16-b8", "fp16", "8x1", 4, 1e-2),
            ("bf16-b1", "bf16", "1x1", 16, 3e-2), ("bf16-b3", "bf16", "3x1", 4, 3e-2),
            ("bf16-b8", "bf16", "8x1", 4, 3e-2)]
# Decode steps append the step's keys and values inside the attention kernel by default (since
# session 25); "-separate-append" above keeps the append kernel (--fuse-kv-append=false). These
# give --fuse-kv-append explicitly at other capacities: (name, precision, --shape, block size, tolerance, --max-seq-len). 64
# tokens keep one split per KV group; 2048 give the cluster of split slots (GPT-2's exports hold
# at most MAX_SEQ_LEN[m] tokens: their position table's rows).
FUSED_APPEND_VARIANTS = [("fp32-b3-fused-append", "fp32", "3x1", 4, 1e-4, 64),
                         ("fp16-b1-fused-append", "fp16", "1x1", 16, 1e-2, 2048),
                         ("fp16-b8-fused-append", "fp16", "8x1", 4, 1e-2, 2048),
                         ("bf16-b3-fused-append", "bf16", "3x1", 16, 3e-2, 64)]
# The torch exports' families (examples/export/export_hf.py's TINY configs, seed 0): --steps
# rebuilds their PyTorch models for its reference (torch_reference).
TORCH_FAMILY = {"llama_tiny_causal_past_dynamo": "llama", "gpt2_tiny_causal_past_dynamo": "gpt2",
                "llama_tiny_causal_past_dynamo_opset23": "llama",
                "llama_tiny_causal_past_legacy": "llama", "llama_tiny_causal_dynamo": "llama",
                "gpt2_tiny_causal_dynamo": "gpt2"}
MAX_SEQ_LEN = {"gpt2_tiny_causal_past_dynamo": 128, "gpt2_tiny_causal_dynamo": 128,
               "attention23_decoder": 32, "tensor_scatter_decoder": 32,
               # make_genai_tiny.py's exports: cos_cache / sin_cache of 256 rows
               "genai_llama_tiny_int4": 256, "genai_llama_tiny_fp16": 256}


def model_path(m):
    """The .onnx file of export `m`."""
    return os.path.join(CACHE_OP_MODELS if m in CACHE_OP_EXPORTS else MODELS, m + ".onnx")


def ort_feeds(sess, ids, head=None):
    """onnxruntime's inputs for a forward over all of `ids` (one sequence, no past): input_ids; a
    cache-I/O export also gets a mask of ones, positions 0..L-1 and an empty past (a TensorScatter
    cache, one with a `write_indices` input: L rows written from index 0; a symbolic head size,
    onnxruntime-genai's, is `head`)."""
    scatter = any(i.name == "write_indices" for i in sess.get_inputs())
    feeds = {}
    for i in sess.get_inputs():
        if i.name == "input_ids":
            feeds[i.name] = np.array([ids], np.int64)
        elif i.name == "attention_mask":
            feeds[i.name] = np.ones((1, len(ids)), np.int64)
        elif i.name == "position_ids":
            feeds[i.name] = np.arange(len(ids), dtype=np.int64)[None, :]
        elif i.name.startswith("past_key_values."):
            dtype = np.float16 if i.type == "tensor(float16)" else np.float32
            feeds[i.name] = np.zeros((1, i.shape[1], len(ids) if scatter else 0,
                                      i.shape[3] if isinstance(i.shape[3], int) else head), dtype)
        elif i.name == "write_indices":
            feeds[i.name] = np.zeros(1, np.int64)
        else:
            raise SystemExit("%s: an input the onnxruntime reference does not know how to fill"
                             % i.name)
    return feeds


def plain_reference(path, steps=GREEDY_STEPS):
    """The arrays of a .ref.npz for a plain or --cache-ops export, from onnxruntime on the CPU:
    input_ids (PROMPT, each token mod the vocabulary size),
    decode_input_ids (`steps` greedy tokens, each the arg-max of the last row of the full
    forward over the prompt and the tokens before it), full_logits (the full forward over all of
    them, [1, 5 + steps, V]) and greedy_ids (the arg-max of its rows from the prompt's last on)."""
    sys.path.insert(0, os.path.join(HERE, "..", "onnx"))
    from ort_reference import reference_session  # MatMulNBits in float; genai's head size
    sess, head = reference_session(path)
    vocab = sess.get_outputs()[0].shape[2]
    prompt = [t % vocab for t in PROMPT]
    ids = list(prompt)
    for _ in range(steps):
        logits = sess.run(None, ort_feeds(sess, ids, head))[0]
        ids.append(int(np.argmax(logits[0, -1])))
    full = sess.run(None, ort_feeds(sess, ids, head))[0].astype(np.float32)
    return {"input_ids": np.array([prompt], np.int64),
            "decode_input_ids": np.array([ids[len(PROMPT):]], np.int64),
            "full_logits": full,
            "greedy_ids": np.argmax(full[:, len(PROMPT) - 1:], axis=-1)}


def torch_reference(m, steps):
    """The arrays of plain_reference for torch export `m` from PyTorch: its model rebuilt as
    examples/export/export_hf.py made it (the TINY config of its family, seed 0, eager attention,
    fp32), checked to be the export's (its forward over the committed .ref.npz's 13 tokens within
    1e-5 of max|ref| of that file's logits); greedy_ids are transformers' greedy `generate` of
    `steps` tokens after PROMPT (no stop token), decode_input_ids the same tokens, full_logits one
    forward over the prompt and them. Raises ImportError without torch or transformers."""
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "export"))
    import export_hf
    model, _, vocab = export_hf.build(argparse.Namespace(
        family=TORCH_FAMILY[m], pretrained=None, task="causal-lm", seed=0, config={}))
    model.eval()
    check = os.path.join(MODELS, m.replace("_causal_dynamo", "_causal_past_dynamo") + ".ref.npz")
    committed = np.load(check)
    prompt = [t % vocab for t in PROMPT]
    with torch.no_grad():
        tokens = np.concatenate([committed["input_ids"][0], committed["decode_input_ids"][0]])
        logits = model(torch.tensor(tokens[None, :])).logits.numpy()
        err = np.abs(logits - committed["full_logits"]).max() / np.abs(committed["full_logits"]).max()
        if err > 1e-5:
            raise SystemExit("%s: the rebuilt PyTorch model is not the export's (%.2e of max|ref| "
                             "off %s)" % (m, err, os.path.basename(check)))
        model.generation_config.eos_token_id = None  # exactly `steps` tokens
        model.generation_config.pad_token_id = 0
        out = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(PROMPT),
                             dtype=torch.long), max_new_tokens=steps, do_sample=False)
        greedy = out[0, len(PROMPT):].numpy().astype(np.int64)
        full = model(out).logits.numpy().astype(np.float32)
    assert len(greedy) == steps, (m, len(greedy), steps)
    return {"input_ids": np.array([prompt], np.int64), "decode_input_ids": greedy[None, :],
            "full_logits": full, "greedy_ids": greedy[None, :]}


def check_generate(kiln_run, artifact, ref, tol, work):
    """kiln-run --generate (greedy, 2 copies of the prompt) against torch's greedy tokens.

    Step j's token is argmax of full_logits[prompt - 1 + j]; it must match wherever that row's top-2
    margin exceeds 2 * tol * max|row|, and checking stops after the first step where it need not.
    Returns (ok, detail)."""
    import json
    prompt = ref["input_ids"][0]
    want = ref["greedy_ids"][0]
    ids = os.path.join(work, "prompt.npy")
    np.save(ids, prompt.astype(np.int64))
    r = subprocess.run([kiln_run, artifact, "--generate", str(len(want)), "--prompt-ids", ids,
                        "--batch", "2", "--json"], capture_output=True, text=True)
    if r.returncode:
        return False, "kiln-run exit %d: %s" % (r.returncode, r.stderr.strip())
    out = json.loads(r.stdout)
    rows = [s["tokens"] for s in out["sequences"]]
    if rows[0] != rows[1]:
        return False, "the two rows differ: %s vs %s" % (rows[0], rows[1])
    full = ref["full_logits"][0]
    for j, token in enumerate(want):
        row = full[len(prompt) - 1 + j]
        top2 = np.sort(row)[-2:]
        clear = top2[1] - top2[0] > 2 * tol * np.abs(row).max()
        if j >= len(rows[0]):
            return False, "%d tokens, expected %d" % (len(rows[0]), len(want))
        if rows[0][j] != token:
            if clear:
                return False, "token %d is %d, torch's greedy %d (tokens %s)" % (
                    j, rows[0][j], token, rows[0])
            return True, "%d tokens equal torch's greedy ones, then a near tie" % j
    return True, "%d tokens equal torch's greedy ones in both rows; decode %.0f tokens/s" % (
        len(want), out["decode_tokens_per_s"])


def run_generate(kiln_run, artifact, ids, n, extra, env=None):
    """kiln-run --generate n --batch 2 with `extra` flags (and `env` added to the environment):
    (rows of tokens, error or None)."""
    import json
    r = subprocess.run([kiln_run, artifact, "--generate", str(n), "--prompt-ids", ids, "--batch",
                        "2", "--json"] + extra, capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    if r.returncode:
        return None, "kiln-run %s exit %d: %s" % (" ".join(extra), r.returncode, r.stderr.strip())
    return [s["tokens"] for s in json.loads(r.stdout)["sequences"]], None


def check_generate_sampling(kiln_run, artifact, ref, work):
    """Sampling on the GPU through kiln_generate (the artifact's next_token is kiln.sample):
    top_k 1 at temperature 1 gives the greedy tokens; the same seed gives the same tokens twice;
    kiln-run seeds row r with S + r, so with --seed 7 the rows (the same prompt) are seeds 7 and 8
    and must differ, and with --seed 8 row 0 (seed 8) must repeat the tokens row 1 had: a
    sequence's tokens depend on its seed, not on its batch row. Returns (ok, detail)."""
    ids = os.path.join(work, "prompt.npy")
    np.save(ids, ref["input_ids"][0].astype(np.int64))
    n = 12
    greedy, err = run_generate(kiln_run, artifact, ids, n, [])
    if err:
        return False, err
    top1, err = run_generate(kiln_run, artifact, ids, n, ["--temperature", "1", "--top-k", "1",
                                                          "--seed", "5"])
    if err:
        return False, err
    if top1 != greedy:
        return False, "top_k 1 gave %s, greedy %s" % (top1, greedy)
    flags = ["--temperature", "1.5", "--top-k", "50", "--top-p", "0.95", "--seed"]
    a, err = run_generate(kiln_run, artifact, ids, n, flags + ["7"])
    b, err2 = run_generate(kiln_run, artifact, ids, n, flags + ["7"])
    c, err3 = run_generate(kiln_run, artifact, ids, n, flags + ["8"])
    if err or err2 or err3:
        return False, err or err2 or err3
    if a != b:
        return False, "seed 7 gave %s, then %s" % (a, b)
    if a[0] == a[1]:
        return False, "seeds 7 and 8 gave the same tokens %s" % a[0]
    if c[0] != a[1]:
        return False, "seed 8 in row 0 gave %s, in row 1 %s" % (c[0], a[1])
    if a[0] == greedy[0]:
        return False, "temperature 1.5 gave the greedy tokens %s" % a[0]
    return True, ("top_k 1 = greedy; seed 7 reproducible (%s); seed 8 the same in rows 0 and 1, "
                  "other than seed 7" % a[0])


def check_generate_chain(kiln_run, artifact, ref, work):
    """kiln_generate's chained decode steps (the next step enqueued before the previous one's
    tokens are read, its ids copied on the device) against steps run one at a time
    (KILN_DECODE_CHAIN=0): the same tokens greedy and sampled; and with a stop token that ends
    row 0 while row 1 goes on (a sampled token of row 0 that row 1 has not drawn by then), row 0
    ends at its first stop token and row 1 continues with the tokens it had without the stop,
    chained or not: the chained step of the ended row is discarded, the batch falls back to
    the 1-row program. Returns (ok, detail)."""
    ids = os.path.join(work, "prompt.npy")
    np.save(ids, ref["input_ids"][0].astype(np.int64))
    n = 16
    one = {"KILN_DECODE_CHAIN": "0"}
    sampled = ["--temperature", "1.5", "--top-k", "50", "--top-p", "0.95", "--seed", "7"]
    runs = {}
    for name, flags in (("greedy", []), ("sampled", sampled)):
        chained, err = run_generate(kiln_run, artifact, ids, n, flags)
        alone, err2 = run_generate(kiln_run, artifact, ids, n, flags, one)
        if err or err2:
            return False, err or err2
        if chained != alone:
            return False, "%s: chained %s, one at a time %s" % (name, chained, alone)
        runs[name] = chained
    rows = runs["sampled"]
    stop = next((t for k, t in enumerate(rows[0][1:n - 2], 1) if t not in rows[1][:k + 2]), None)
    if stop is None:
        return False, "no token of row 0 to stop at that row 1 lacks: %s" % rows
    stops = ["--stop-ids", str(stop)]
    chained, err = run_generate(kiln_run, artifact, ids, n, sampled + stops)
    alone, err2 = run_generate(kiln_run, artifact, ids, n, sampled + stops, one)
    if err or err2:
        return False, err or err2
    want = [r[:r.index(stop) + 1] if stop in r else r for r in rows]
    if chained != want or alone != want:
        return False, "stop %d: chained %s, one at a time %s, want %s" % (stop, chained, alone,
                                                                         want)
    return True, "greedy and sampled equal one step at a time; stop %d ends row 0 after %d of " \
        "%d tokens, row 1 unchanged" % (stop, len(want[0]), n)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln-compile", required=True)
    p.add_argument("--decode-test", required=True, help="the kv_cache_decode_test binary")
    p.add_argument("--programs-test", help="the kv_cache_programs_test binary (runs the programs "
                   "of a --shape range artifact)")
    p.add_argument("--kiln-run", help="kiln-run, for --generate on the --shape range artifacts")
    p.add_argument("--plain", action="store_true", help="the plain causal-LM exports (no cache "
                   "I/O) against onnxruntime instead of the cache-I/O exports against torch")
    p.add_argument("--cache-ops", action="store_true", help="the decoders whose cache is ONNX "
                   "ops (Attention-23 past_key/past_value, TensorScatter-24) against onnxruntime")
    p.add_argument("--steps", type=int, default=GREEDY_STEPS, help="greedy tokens decoded after "
                   "the 5-token prompt (default %d); other than the default, the torch exports' "
                   "reference comes from PyTorch (their models rebuilt, transformers' generate: "
                   "torch_reference), the other exports' from onnxruntime" % GREEDY_STEPS)
    p.add_argument("--genai", action="store_true", help="onnxruntime-genai's exports (the cache "
                   "in GroupQueryAttention nodes) against onnxruntime")
    p.add_argument("--exports", help="comma-separated export names in test/models (each with its "
                   ".ref.npz) instead of the default cache-I/O exports, e.g. a new export checked "
                   "on a GPU machine")
    p.add_argument("--only", help="comma-separated variant names (e.g. fp16-b8,programs-fp16): "
                   "run only those (a development run)")
    args = p.parse_args(argv)
    known = ({v[0] for v in VARIANTS} | {v[0] for v in PROGRAM_VARIANTS}
             | {v[0] for v in FUSED_APPEND_VARIANTS})
    only = known
    if args.only is not None:
        only = {name.strip() for name in args.only.split(",")}
        if only - known:
            p.error("--only: unknown variant(s) %s; the variants: %s" % (
                ", ".join(repr(n) for n in sorted(only - known)),
                ", ".join(v[0] for v in VARIANTS + FUSED_APPEND_VARIANTS + PROGRAM_VARIANTS)))
        programs = sorted(only & {v[0] for v in PROGRAM_VARIANTS})
        if programs and not args.programs_test:
            p.error("--only %s needs --programs-test" % ", ".join(programs))
    if args.plain + args.cache_ops + args.genai > 1:
        p.error("--plain, --cache-ops and --genai pick different exports: give one")
    onnxruntime_reference = args.plain or args.cache_ops or args.genai
    exports = (PLAIN_EXPORTS if args.plain else CACHE_OP_EXPORTS if args.cache_ops else
               GENAI_EXPORTS if args.genai else EXPORTS)
    if args.exports:
        if onnxruntime_reference:
            p.error("--exports names cache-I/O exports with a torch reference: not with --plain, "
                    "--cache-ops or --genai")
        exports = [e.strip() for e in args.exports.split(",") if e.strip()]
        missing = [e for e in exports if not os.path.exists(os.path.join(MODELS, e + ".ref.npz"))]
        if missing:
            p.error("--exports: no %s in %s" % (", ".join(e + ".ref.npz" for e in missing), MODELS))
    if args.steps < 1:
        p.error("--steps must be at least 1")
    # Every row holds the prompt and the decoded tokens: a --max-seq-len of at least that many.
    tokens_needed = len(PROMPT) + args.steps
    short = [m for m in exports if MAX_SEQ_LEN.get(m, tokens_needed) < tokens_needed]
    if short:
        p.error("--steps %d needs %d tokens per sequence; the position tables hold fewer: %s" % (
            args.steps, tokens_needed,
            ", ".join("%s (%d)" % (m, MAX_SEQ_LEN[m]) for m in short)))
    # Like the other GPU tests: no compiling when nvidia-smi lists no GPU. A machine with a driver
    # library but no device still gets here; the decode binary then exits 77 at the first case.
    smi = shutil.which("nvidia-smi")
    if not smi or "GPU" not in subprocess.run([smi, "-L"], capture_output=True, text=True).stdout:
        print("SKIP: no GPU (nvidia-smi -L lists none)")
        return 77
    refs = {}
    if args.steps != GREEDY_STEPS and not onnxruntime_reference:
        unknown = [m for m in exports if m not in TORCH_FAMILY]
        if unknown:
            p.error("--steps: no PyTorch model known for %s (TORCH_FAMILY)" % ", ".join(unknown))
        try:
            refs = {m: torch_reference(m, args.steps) for m in exports}
        except ImportError as e:
            print("SKIP: --steps %d needs torch and transformers for its reference (%s)"
                  % (args.steps, e))
            return 77
    if onnxruntime_reference:
        try:
            refs = {m: plain_reference(model_path(m), args.steps) for m in exports}
        except ImportError as e:
            print("SKIP: --plain, --cache-ops and --genai need onnx and onnxruntime for their "
                  "reference (%s)" % e)
            return 77
    failed = passed = 0
    with tempfile.TemporaryDirectory() as work:
        for m in exports:
            ref = refs[m] if m in refs else np.load(os.path.join(MODELS, m + ".ref.npz"))
            tokens = os.path.join(work, m + ".tokens.i64")
            logits = os.path.join(work, m + ".logits.f32")
            np.concatenate([ref["input_ids"][0], ref["decode_input_ids"][0]]).astype("<i8").tofile(tokens)
            ref["full_logits"][0].astype("<f4").tofile(logits)
            step_variants = [v + (64, []) for v in VARIANTS] + [
                v + (["--fuse-kv-append"],) for v in FUSED_APPEND_VARIANTS]
            for name, precision, shape, block, tol, max_seq_len, flags in step_variants:
                if name not in only or (m in FP16_ONLY and precision != "fp16"):
                    continue
                artifact = os.path.join(work, "%s-%s.kiln" % (m, name))
                max_seq_len = max(max_seq_len, -(-tokens_needed // 64) * 64)
                c = subprocess.run([args.kiln_compile, model_path(m), "--kv-cache",
                                    "--max-seq-len", str(min(max_seq_len, MAX_SEQ_LEN.get(m, max_seq_len))),
                                    "--kv-block-size", str(block),
                                    "--shape", "input_ids=" + shape, "--precision", precision, "-o",
                                    artifact, "--quiet"] + flags, capture_output=True, text=True)
                if c.returncode:
                    print("FAIL %s %s: kiln-compile exit %d\n%s" % (m, name, c.returncode, c.stderr))
                    failed += 1
                    continue
                r = subprocess.run([args.decode_test, artifact, tokens, logits, "--tol", str(tol)],
                                   capture_output=True, text=True)
                last = (r.stdout.strip().splitlines() or [""])[-1]
                if r.returncode == 77:
                    # No GPU: the first step artifact shows it; compiling the rest would only cost time.
                    print("SKIP: no GPU (%s)" % r.stdout.strip())
                    return 77
                elif r.returncode == 0:
                    passed += 1
                    print("PASS %s %s: %s" % (m, name, last))
                else:
                    failed += 1
                    print("FAIL %s %s (exit %d): %s\n%s" % (m, name, r.returncode, last, r.stderr))
            for name, precision, tol, flags in PROGRAM_VARIANTS if args.programs_test else []:
                if name not in only or (m in FP16_ONLY and precision != "fp16"):
                    continue
                artifact = os.path.join(work, "%s-%s.kiln" % (m, name))
                c = subprocess.run([args.kiln_compile, model_path(m), "--kv-cache",
                                    "--max-seq-len", str(MAX_SEQ_LEN.get(m, max(64, -(-tokens_needed // 64) * 64))),
                                    "--shape", "input_ids=1..2x1..32",
                                    "--precision", precision, "-o", artifact, "--quiet"] + flags,
                                   capture_output=True, text=True)
                if c.returncode:
                    print("FAIL %s %s: kiln-compile exit %d\n%s" % (m, name, c.returncode, c.stderr))
                    failed += 1
                    continue
                prompt = str(ref["input_ids"].shape[1])
                r = subprocess.run([args.programs_test, artifact, tokens, logits, prompt, "--tol",
                                    str(tol), "--chunk", "3"], capture_output=True, text=True)
                last = (r.stdout.strip().splitlines() or [""])[-1]
                if r.returncode == 0:
                    passed += 1
                    print("PASS %s %s: %s" % (m, name, last))
                else:
                    failed += 1
                    print("FAIL %s %s (exit %d): %s\n%s\n%s" % (m, name, r.returncode, last,
                                                             r.stdout, r.stderr))
                if args.kiln_run:
                    ok, detail = check_generate(args.kiln_run, artifact, ref, tol, work)
                    passed += ok
                    failed += not ok
                    print("%s %s %s generate: %s" % ("PASS" if ok else "FAIL", m, name, detail))
                    ok, detail = check_generate_sampling(args.kiln_run, artifact, ref, work)
                    passed += ok
                    failed += not ok
                    print("%s %s %s generate sampling: %s" % ("PASS" if ok else "FAIL", m, name,
                                                             detail))
                    ok, detail = check_generate_chain(args.kiln_run, artifact, ref, work)
                    passed += ok
                    failed += not ok
                    print("%s %s %s generate chained: %s" % ("PASS" if ok else "FAIL", m, name,
                                                            detail))
    print("kv-cache decode: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
