#!/usr/bin/env python3
"""Text generation at real model size: kiln's KV-cached programs against transformers' generate.

One model, the 0.8B Llama of the real-size benchmark as LlamaForCausalLM (random weights, seed 0;
max_position_embeddings raised to 4096 so that a 2048-token prompt plus the new tokens fit), or
with --size 3b the larger config (hidden 3072, 28 layers, 24 query / 8 KV heads, intermediate
8192: 3.0 B parameters; --export-dtype float16 halves its 12 GB fp32 export):

  1. export   examples/export/export_hf.py llama --task causal-lm --with-past: the Hugging Face
              cache I/O step (input_ids, attention_mask, position_ids, past_key_values.* ->
              logits, present.*), fp32 ONNX, dynamo exporter (TorchScript if dynamo fails).
              Cached in --work-dir.
  2. compile  kiln-compile --kv-cache --max-seq-len P+N --shape input_ids=1..BxP1..P --precision
              fp16: one artifact with a program per step shape (kiln-run --info lists them).
  3. kiln     per case (prompt P, batch B): kiln-run --generate N --prompt-ids --batch B --warmup 1
              --json (greedy; B copies of one random prompt): time to first token, decode tokens/s
              (B * (N - 1) tokens over the decode time), per-step p50/p99.
  4. peers    the same model in PyTorch fp16 with SDPA attention, greedy, no stop token, the same
              prompt: transformers generate eager (dynamic cache), and with a static cache whose
              decode step runs under torch.compile mode="reduce-overhead" (transformers'
              compile_config; the gpt-fast recipe). A streamer stamps every token (host time after
              the token reaches the host), so TTFT and decode tokens/s are measured like kiln's.
              Each peer runs once untimed per case (compilation, CUDA graphs), then once timed.
              Also torch.compile(mode="reduce-overhead") of the plain forward over 1 x 2048 (no
              cache): the issue's TTFT yardstick.
  5. HBM      the bytes one decode step must read (every weight but the embedding table, once,
              plus the KV cache of every sequence at its mean length during decode) over kiln's
              p50 step time, against the copy bandwidth measured in the same run (a 1 GiB
              device-to-device copy counts 2 GiB).

Greedy tokens of kiln and of transformers eager are compared: the number of leading tokens that
agree (fp16 kernels differ, so random-weight models with near ties diverge at some point).

Every line printed also goes to <log-dir>/bench-generate.log, the table to bench-generate.md,
and the output of the export, kiln-compile and kiln-run to bench-generate/.
Exit: 0 all measured, 1 something failed or a peer was not measured, 2 usage/setup error, 77 no
GPU. Run through scripts/bench_real_size.sh --generate on the GPU machine (docs/gpu.md).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

import bench_real_size as brs  # noqa: E402 - logging, subprocess and PyTorch helpers

EXIT_FAIL, EXIT_USAGE, EXIT_SKIP = 1, 2, 77
PROMPT_SEED = 20261202
# The 0.8B Llama of the real-size benchmark; the position table is long enough for 2048 + 256.
CONFIG = dict(brs.MODELS["llama"]["config"], max_position_embeddings=4096)
# --size 3b: the larger Llama config (hidden 3072, 28 layers; Llama 3.2 3B's widths with the
# 0.8B's vocabulary): 3.0 B parameters, 6 GB of fp16 weights.
SIZES = {"0.8b": {}, "3b": dict(hidden_size=3072, num_hidden_layers=28, num_attention_heads=24,
                               num_key_value_heads=8, intermediate_size=8192)}
RUN_TIMEOUT_S = 600


def export(args, log):
    """The with-past export (cached by its config); returns the .onnx path or None."""
    tag = "llama-gen" + ("-" + args.size if args.size != "0.8b" else "") + \
        ("-l%d" % args.layers if args.layers else "") + \
        ("-" + args.export_dtype if args.export_dtype != "float32" else "")
    folder = os.path.join(args.work_dir, "export-" + tag)
    path = os.path.join(folder, "llama_gen.onnx")
    stamp_path = os.path.join(args.work_dir, "export-%s.stamp.json" % tag)
    want = dict(config=CONFIG, seed=0, task="causal-lm-with-past", dtype=args.export_dtype)
    if os.path.isfile(path) and os.path.isfile(stamp_path):
        with open(stamp_path, encoding="utf-8") as f:
            if {k: v for k, v in json.load(f).items() if k in want} == want:
                log.step("export cached: %s" % path)
                return path
    config = ",".join("%s=%s" % kv for kv in CONFIG.items())
    for exporter in ("dynamo", "legacy"):
        if os.path.exists(stamp_path):
            os.remove(stamp_path)
        brs.shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        cmd = [sys.executable, brs.EXPORT_HF, "llama", "-o", path, "--config", config, "--seed", "0",
               "--task", "causal-lm", "--with-past", "--exporter", exporter, "--dtype", args.export_dtype]
        log.step("exporting LlamaForCausalLM with cache I/O (%s exporter)" % exporter)
        rc, text, seconds = brs.run_logged(cmd, log.tool_log("export"), brs.EXPORT_TIMEOUT_S)
        if rc == 0 and os.path.isfile(path):
            with open(stamp_path, "w", encoding="utf-8") as f:
                json.dump(dict(want, exporter=exporter), f)
            log.step("exported in %.1f s (%s exporter, %.0f MB)" % (seconds, exporter,
                                                                      brs.dir_bytes(folder) / 1e6))
            return path
        log("  %s exporter failed (exit %d):\n%s" % (exporter, rc, brs.tail(text)))
    return None


def compile_programs(args, log, onnx_path):
    """kiln-compile --kv-cache with a --shape range; returns (artifact or None, info dict)."""
    out = os.path.join(args.work_dir, "llama_gen.kiln")
    max_len = max(args.prompts) + args.new_tokens
    shape = "input_ids=1..%dx1..%d" % (max(args.batches), max(args.prompts))
    cmd = [args.kiln_compile, onnx_path, "-o", out, "--kv-cache", "--max-seq-len", str(max_len),
           "--shape", shape, "--precision", args.precision, "--target", "sm_90"] + \
        brs.shlex.split(args.kiln_flags)
    # The artifact is reused by a later call on the same machine when nothing changed: the
    # command, the kiln-compile wrapper (its folder is named after the carried binary's hash,
    # scripts/bench_real_size.sh) and the export.
    stamp_path = out + ".stamp.json"
    st = os.stat(onnx_path)
    want = dict(cmd=cmd, kiln_compile=os.path.realpath(args.kiln_compile),
                onnx=[st.st_size, st.st_mtime])
    if os.path.isfile(out) and os.path.isfile(stamp_path):
        with open(stamp_path, encoding="utf-8") as f:
            stamp = json.load(f)
        if {k: stamp.get(k) for k in want} == want:
            log.step("kiln-compile cached: %s (compiled in %.1f s by an earlier run)" % (
                out, stamp["seconds"]))
            return out, dict(seconds=stamp["seconds"], programs=stamp["programs"], summary="")
    for path in (out, stamp_path):
        if os.path.exists(path):
            os.remove(path)
    log.step("kiln-compile --kv-cache --max-seq-len %d --shape %s --precision %s %s" % (
        max_len, shape, args.precision, args.kiln_flags))
    rc, text, seconds = brs.run_logged(cmd, log.tool_log("compile"), brs.COMPILE_TIMEOUT_S * 3)
    if rc != 0 or not os.path.isfile(out):
        log("  kiln-compile FAILED (exit %d):\n%s" % (rc, brs.tail(text)))
        return None, {}
    # kiln-compile's summary ends with the time of each phase: where the compile time goes.
    lines = text.strip().splitlines()
    phases = [l for l in lines if brs.re.match(r"^(  \S.*\s[0-9.]+ ms|kernels: .*|compile time: .*)$", l)]
    if phases:
        log("  compile phases:\n" + "\n".join("  " + l for l in phases))
    rc, info_text, _ = brs.run_logged([args.kiln_run, out, "--info", "--json"], log.tool_log("info"), 60)
    info = json.loads(info_text[info_text.index("{"):]) if rc == 0 and "{" in info_text else {}
    names = [p.get("name", "?") for p in info.get("artifact", {}).get("programs", [])]
    log.step("compiled in %.1f s: %d programs (%s), %.0f MB" % (
        seconds, len(names), ", ".join(names), os.path.getsize(out) / 1e6))
    with open(stamp_path, "w", encoding="utf-8") as f:
        json.dump(dict(want, seconds=seconds, programs=names), f)
    return out, dict(seconds=seconds, programs=names, summary=text)


def kiln_generate(args, log, artifact, prompt, batch):
    """kiln-run --generate; returns the parsed JSON (tokens, timings) or None."""
    ids = os.path.join(args.work_dir, "prompt-%d.npy" % len(prompt))
    np.save(ids, prompt.astype(np.int64))
    cmd = [args.kiln_run, artifact, "--generate", str(args.new_tokens), "--prompt-ids", ids,
           "--batch", str(batch), "--warmup", "1", "--json"]
    if args.sampling:
        t, k, p = args.sampling
        cmd += ["--temperature", str(t), "--top-k", str(k), "--top-p", str(p), "--seed", "1"]
    rc, text, _ = brs.run_logged(cmd, log.tool_log("generate-p%d-b%d" % (len(prompt), batch)),
                                 RUN_TIMEOUT_S)
    if rc != 0 or "{" not in text:
        log("  kiln-run --generate FAILED (exit %d):\n%s" % (rc, brs.tail(text)))
        return None
    out = json.loads(text[text.index("{"):text.rindex("}") + 1])
    out["ttft_ms"] = max(s["time_to_first_token_ms"] for s in out["sequences"])
    return out


class StampStreamer:
    """A transformers streamer that records the host time of every put() (the prompt, then each
    generated token; generate moves each token to the host before put, so the time is after the
    step finished)."""

    def __init__(self):
        self.times = []
        self.start = None

    def put(self, value):
        self.times.append(time.perf_counter())

    def end(self):
        pass


def hf_generate(torch, model, ids, new_tokens, static):
    """One greedy generate; returns (tokens of row 0, TTFT ms, decode tokens/s, p50, p99 ms)."""
    from transformers import GenerationConfig

    kwargs = dict(max_new_tokens=new_tokens, do_sample=False, eos_token_id=None, pad_token_id=0)
    if static:
        kwargs["cache_implementation"] = "static"
        try:
            from transformers import CompileConfig

            kwargs["compile_config"] = CompileConfig(fullgraph=True, mode="reduce-overhead")
        except ImportError:
            pass
    streamer = StampStreamer()
    torch.cuda.synchronize()
    start = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), streamer=streamer,
                             generation_config=GenerationConfig(**kwargs))
    torch.cuda.synchronize()
    stamps = streamer.times[1:]  # [0] is the prompt
    ttft = (stamps[0] - start) * 1e3
    steps = np.diff(stamps) * 1e3
    batch = ids.shape[0]
    tps = batch * len(steps) / ((stamps[-1] - stamps[0])) if len(steps) else float("nan")
    return (out[0, ids.shape[1]:].tolist(), ttft, tps, float(np.percentile(steps, 50)),
            float(np.percentile(steps, 99)))


def copy_bandwidth(torch):
    """Device-to-device copy bandwidth in GB/s (1 GiB read + 1 GiB written per copy)."""
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    ms = brs.cuda_median_ms(torch, lambda: b.copy_(a), 20, 3)
    del a, b
    return 2 * n / (ms / 1e3) / 1e9


def step_bytes(model, batch, context):
    """Bytes a decode step of `batch` sequences of `context` cached tokens reads at fp16: every
    weight but the embedding table once, and each sequence's K and V."""
    cfg = model.config
    weights = sum(p.numel() for n, p in model.named_parameters() if "embed_tokens" not in n) * 2
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    kv = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * head_dim * 2 * context * batch
    return weights + kv


def leading_equal(a, b):
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln-compile", required=True)
    p.add_argument("--kiln-run", required=True)
    p.add_argument("--work-dir", default=os.path.join(brs.REPO, ".bench-work"))
    p.add_argument("--log-dir", default=os.path.join(brs.REPO, ".carry-bench", "logs"))
    p.add_argument("--precision", default="fp16", choices=["fp16", "bf16"])
    p.add_argument("--prompts", default="128,2048", help="prompt lengths, comma-separated")
    p.add_argument("--batches", default="1,8", help="batch sizes, comma-separated")
    p.add_argument("--new-tokens", type=int, default=256)
    p.add_argument("--peers", default="eager,static_compile,forward_ro",
                   help="PyTorch peers to time: eager, static_compile, forward_ro")
    p.add_argument("--peer-prompts", help="time the PyTorch generate peers only at these prompt "
                   "lengths (comma-separated; default: every --prompts)")
    p.add_argument("--kiln-flags", default="", help="more kiln-compile flags (an A/B run, e.g. "
                   "--skinny-gemm=false)")
    p.add_argument("--layers", type=int, help="override num_hidden_layers (a development run: the "
                   "per-layer kernels at real width, exported and compiled in seconds)")
    p.add_argument("--sampling", metavar="T,K,P", help="kiln samples on the GPU with temperature "
                   "T, top-k K and top-p P (seed 1) instead of greedy decoding; the PyTorch "
                   "peers stay greedy (their tokens/s do not include sampling)")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="also kiln-run --profile N of every program, decode and prefill (random "
                        "lengths and block tables inside their ranges); the table goes to the log")
    p.add_argument("--size", choices=sorted(SIZES), default="0.8b",
                   help="the Llama config: 0.8b (hidden 2048, 16 layers) or 3b (hidden 3072, 28 "
                        "layers, 24 heads, intermediate 8192)")
    p.add_argument("--export-dtype", choices=["float32", "float16"], default="float32",
                   help="the ONNX export's dtype (float16 halves the 3b export's 12 GB; kiln "
                        "compiles either with --precision)")
    args = p.parse_args(argv)
    CONFIG.update(SIZES[args.size])
    if args.layers:
        CONFIG["num_hidden_layers"] = args.layers
    if args.sampling:
        t, k, p_ = args.sampling.split(",")
        args.sampling = (float(t), int(k), float(p_))
    args.prompts = [int(x) for x in args.prompts.split(",")]
    args.batches = [int(x) for x in args.batches.split(",")]
    args.peers = [x for x in args.peers.split(",") if x]
    args.peer_prompts = ([int(x) for x in args.peer_prompts.split(",")] if args.peer_prompts
                         else args.prompts)
    from e2e_test import has_gpu

    if not has_gpu():
        print("SKIP: no GPU (nvidia-smi -L found none); this benchmark needs an NVIDIA GPU")
        return EXIT_SKIP
    os.makedirs(args.work_dir, exist_ok=True)
    log = brs.Log(args.log_dir, "bench-generate")
    torch = brs.import_torch()
    gpu = brs.subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    log("GPU %s; %s" % (gpu, brs.versions(torch)))
    log("model: LlamaForCausalLM %s; prompts %s, batches %s, %d new tokens, kiln --precision %s" % (
        CONFIG, args.prompts, args.batches, args.new_tokens, args.precision))
    failed = []

    onnx_path = export(args, log)
    artifact, compiled = compile_programs(args, log, onnx_path) if onnx_path else (None, {})
    if not artifact:
        failed.append("export/compile")
    rng = np.random.default_rng(PROMPT_SEED)
    prompts = {n: rng.integers(0, CONFIG["vocab_size"], size=n, dtype=np.int64) for n in args.prompts}
    cases = [(n, b) for n in args.prompts for b in args.batches]
    rows = {c: {} for c in cases}
    for n, b in cases:
        if not artifact:
            break
        out = kiln_generate(args, log, artifact, prompts[n], b)
        if out is None:
            failed.append("kiln p%d b%d" % (n, b))
            continue
        rows[(n, b)]["kiln"] = out
        log.step("kiln P=%d B=%d: TTFT %.2f ms, decode %.1f tokens/s, step p50 %.3f ms p99 %.3f ms" % (
            n, b, out["ttft_ms"], out["decode_tokens_per_s"], out["decode_step_p50_ms"],
            out["decode_step_p99_ms"]))

    if args.profile and artifact:
        for name in compiled.get("programs", []):
            cmd = [args.kiln_run, artifact, "--program", name, "--inputs-generate", "random:1",
                   "--profile", str(args.profile)]
            rc, text, _ = brs.run_logged(cmd, log.tool_log("profile-" + name), RUN_TIMEOUT_S)
            log.step("kiln-run --program %s --profile %d (exit %d):" % (name, args.profile, rc))
            for line in text.strip().splitlines()[:60]:
                log("    " + line)
    if not args.peers:
        return EXIT_FAIL if failed else 0

    # PyTorch.
    import export_hf

    ns = argparse.Namespace(pretrained=None, family="llama", config=dict(CONFIG), seed=0, task="causal-lm")
    model, _, _ = export_hf.build(ns)
    model = brs.set_attention(model.half().cuda().eval(), "sdpa")
    model.generation_config.eos_token_id = None
    bandwidth = copy_bandwidth(torch)
    log.step("copy bandwidth %.0f GB/s" % bandwidth)
    for peer in args.peers:  # in the order given (the most important first, for a short call)
        if peer not in ("eager", "static_compile"):
            continue
        for n, b in cases:
            if n not in args.peer_prompts:
                continue
            ids = torch.tensor(prompts[n], device="cuda").repeat(b, 1)
            try:
                t0 = time.time()
                hf_generate(torch, model, ids, args.new_tokens if peer == "static_compile" else 8,
                            peer == "static_compile")
                warm = time.time() - t0
                res = hf_generate(torch, model, ids, args.new_tokens, peer == "static_compile")
            except Exception as e:  # noqa: BLE001 - a peer that fails leaves a gap, not a crash
                log("  %s P=%d B=%d failed: %s: %s" % (peer, n, b, type(e).__name__, e))
                failed.append("%s p%d b%d" % (peer, n, b))
                continue
            rows[(n, b)][peer] = res
            log.step("%s P=%d B=%d: TTFT %.2f ms, decode %.1f tokens/s, step p50 %.3f p99 %.3f ms "
                     "(untimed first run %.1f s)" % (peer, n, b, res[1], res[2], res[3], res[4], warm))
        brs.reset_compiled(torch)
    forward_ro = None
    if "forward_ro" in args.peers:
        n = max(args.prompts)
        ids = torch.tensor(prompts[n], device="cuda")[None]
        try:
            compiled_model = torch.compile(model, mode="reduce-overhead")
            with torch.inference_mode():
                forward_ro = brs.cuda_median_ms(
                    torch, lambda: compiled_model(input_ids=ids, use_cache=False).logits, 20, 3)
            log.step("torch.compile reduce-overhead forward 1x%d: %.3f ms" % (n, forward_ro))
        except Exception as e:  # noqa: BLE001
            log("  forward_ro failed: %s: %s" % (type(e).__name__, e))
            failed.append("forward_ro")
        brs.reset_compiled(torch)

    # Table.
    head = ("| prompt | batch | kiln TTFT ms | kiln tokens/s | kiln step p50 / p99 ms | HBM fraction | "
            "eager TTFT ms | eager tokens/s | static+compile TTFT ms | static+compile tokens/s | "
            "kiln / static+compile tokens/s | greedy tokens equal (of %d) |" % args.new_tokens)
    md = ["# bench-generate", "", "`test/bench/bench_generate.py %s`" % " ".join(argv), "",
          "GPU %s; %s; copy bandwidth %.0f GB/s" % (gpu, brs.versions(torch), bandwidth), "",
          "kiln: %d programs (%s), compiled in %.1f s" % (
              len(compiled.get("programs", [])), ", ".join(compiled.get("programs", [])),
              compiled.get("seconds", float("nan"))), "", head,
          "|" + "---|" * (head.count("|") - 1)]
    for n, b in cases:
        r = rows[(n, b)]
        k, e, s = r.get("kiln"), r.get("eager"), r.get("static_compile")
        frac = None
        if k:
            ctx = n + args.new_tokens / 2
            frac = step_bytes(model, b, ctx) / (k["decode_step_p50_ms"] / 1e3) / (bandwidth * 1e9)
        equal = (leading_equal(k["sequences"][0]["tokens"], e[0])
                 if k and e and not args.sampling else None)
        md.append("| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            n, b, brs.fmt(k and k["ttft_ms"], "%.2f"), brs.fmt(k and k["decode_tokens_per_s"], "%.1f"),
            "%s / %s" % (brs.fmt(k and k["decode_step_p50_ms"], "%.3f"), brs.fmt(k and k["decode_step_p99_ms"], "%.3f")),
            brs.fmt(frac, "%.2f"), brs.fmt(e and e[1], "%.2f"), brs.fmt(e and e[2], "%.1f"), brs.fmt(s and s[1], "%.2f"), brs.fmt(s and s[2], "%.1f"),
            brs.fmt(k["decode_tokens_per_s"] / s[2] if k and s else None, "%.2f"),
            "-" if equal is None else str(equal)))
    lines = [""]
    for n in args.prompts:
        k1, k8 = rows.get((n, 1), {}).get("kiln"), rows.get((n, max(args.batches)), {}).get("kiln")
        if k1 and k8 and max(args.batches) > 1:
            lines.append("- P=%d: kiln batch %d / batch 1 decode tokens/s = %.2f" % (
                n, max(args.batches), k8["decode_tokens_per_s"] / k1["decode_tokens_per_s"]))
    k = rows.get((max(args.prompts), 1), {}).get("kiln")
    if k and forward_ro:
        lines.append("- TTFT at P=%d, batch 1: kiln %.2f ms / torch.compile reduce-overhead forward "
                     "%.2f ms = %.2f" % (max(args.prompts), k["ttft_ms"], forward_ro,
                                         k["ttft_ms"] / forward_ro))
    md += lines
    for line in md[md.index(head) - 1:]:
        log(line)
    with open(log.md_path, "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    if failed:
        log("FAILED or not measured: %s" % ", ".join(failed))
        return EXIT_FAIL
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
