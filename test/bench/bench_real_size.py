#!/usr/bin/env python3
"""kiln against PyTorch at real model size: GPT-2 124M, BERT-base, Llama 0.8B on one GPU.

Model mode (default), for each model:
  1. export   examples/export/export_hf.py with random weights (seed 0) and the real config:
              fp32 ONNX, inputs input_ids (BERT: and attention_mask) int64 [batch, seq] with
              dynamic dims, output last_hidden_state; dynamo exporter, the TorchScript one if
              dynamo fails; weights as external data for Llama. Cached in --work-dir.
  2. compile  kiln-compile --shape ... --precision P --target sm_90 at 1x128 and 8x512 (Llama:
              4x512); wall-clock seconds and the kernel count from its summary. GPT-2 at 1x128
              is also compiled once under `taskset -c 0,1` (the 2-core compile time).
  3. check    kiln's output against PyTorch fp32 (the same HF model, eager attention, the same
              ids and mask): max|kiln - torch| / max|torch| <= tolerance of P (fp32 1e-4,
              tf32 2e-3, fp16 1e-2, bf16 3e-2). Token ids are random in [0, vocab) from a fixed
              seed; BERT's mask zeroes the last quarter of every row but the first.
  4. time     kiln-run --bench N (CUDA graph replay; p50), and PyTorch fp16 (the same model
              object cast to fp16, switched to HF's default SDPA attention; torch.inference_mode):
              eager, torch.compile(dynamic=False), the same with mode="reduce-overhead"; each the
              median of N runs timed with CUDA events after warm-up. Ratios are kiln / peer: < 1
              means kiln is faster.

--gemm mode: every distinct GEMM of these models at these sizes (the linear layers, M = batch*seq,
GPT-2's fused QKV N = 2304, no lm-head; the attention batched matmuls QK^T and PV over
batch*heads). For each, a small fp16 ONNX graph of R independent MatMuls (one graph input A,
R random fp16 weights B_i: distinct, so CSE cannot merge them) compiled by kiln-compile and timed
with kiln-run --bench (one CUDA graph of R GEMM launches), divided by R; against R torch.matmul
captured in one torch.cuda.CUDAGraph (cuBLAS). Ratio = cuBLAS time / kiln time (>= 1: kiln is as
fast). One kiln output per shape is checked against torch in fp32 (max rel err <= 1e-2; 3e-2
for bf16). The weights' results are graph outputs, which kiln-fuse-sibling-gemms leaves apart (a
merged GEMM would need a copy per output). With --precision bf16 the graphs, the peer and the
checked values are bf16 (--gemm-io). A last row, not in the geometric means, times the square
8192^3 GEMM (R lowered to 4 to keep the weights at 512 MiB).

Every line printed also goes to <log-dir>/<run>.log, the tables to <log-dir>/<run>.md, and the
output of every export, kiln-compile and kiln-run to <log-dir>/<run>/.

Exit: 0 all checks passed and every peer measured; 1 a check failed or something could not be
measured; 2 usage or setup error; 77 no GPU. Run through scripts/bench_real_size.sh on the GPU
machine (it unpacks the carried kiln-compile); see docs/gpu.md, "Real-size benchmark".
"""

import argparse
import gc
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import zlib

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXPORT_HF = os.path.join(REPO, "examples", "export", "export_hf.py")
sys.path.insert(0, os.path.join(REPO, "test", "e2e"))
sys.path.insert(0, os.path.join(REPO, "examples", "export"))

EXIT_FAIL, EXIT_USAGE, EXIT_SKIP = 1, 2, 77
TOLERANCE = {"fp32": 1e-4, "tf32": 2e-3, "fp16": 1e-2, "bf16": 3e-2}
GEMM_TOLERANCE = {"fp16": 1e-2, "bf16": 3e-2, "fp32": 1e-2}  # by the GEMM graph's I/O type
GEMM_REPEAT = 20  # R: MatMul nodes per GEMM graph
# R is lowered for a shape whose R weights would pass this many bytes (the 8192^3 row: 4).
GEMM_WEIGHT_BYTES = 512 << 20
# Rows beside the models' GEMMs, in the table but not in its geometric means: the square GEMM
# whose throughput the issue targets (>= 700 TFLOP/s on the H200).
GEMM_EXTRA_SHAPES = [((1, 8192, 8192, 8192), "square 8192^3 (peak throughput)")]
INPUT_SEED = 20261130
EXPORT_TIMEOUT_S = 480
COMPILE_TIMEOUT_S = 300
RUN_TIMEOUT_S = 300

# The models: export_hf.py family, config overrides (every field of its tiny config is overridden,
# so the result is the transformers default config plus the fields below), shapes (batch, seq).
MODELS = {
    "gpt2": dict(
        family="gpt2", title="GPT-2 124M",
        # GPT2Config() defaults
        config=dict(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024),
        shapes=[(1, 128), (8, 512)]),
    "bert": dict(
        family="bert", title="BERT-base",
        # BertConfig() defaults
        config=dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                    intermediate_size=3072, max_position_embeddings=512),
        shapes=[(1, 128), (8, 512)]),
    "llama": dict(
        family="llama", title="Llama 0.8B",
        config=dict(vocab_size=32000, hidden_size=2048, num_hidden_layers=16, num_attention_heads=32,
                    num_key_value_heads=8, intermediate_size=5632, max_position_embeddings=2048),
        shapes=[(1, 128), (4, 512)]),
}
TWO_CORE_COMPILE = ("gpt2", (1, 128))  # compiled once more under taskset -c 0,1


# ----------------------------------------------------------------------------------------------
# Logging and subprocesses


class Log:
    """Prints and appends every line to the run's log file; sub-tool output goes to files."""

    def __init__(self, log_dir, run):
        self.dir = os.path.join(log_dir, run)
        os.makedirs(self.dir, exist_ok=True)
        self.path = os.path.join(log_dir, run + ".log")
        self.md_path = os.path.join(log_dir, run + ".md")
        self.file = open(self.path, "w", encoding="utf-8")
        self.t0 = time.time()

    def __call__(self, msg=""):
        print(msg, flush=True)
        self.file.write(msg + "\n")
        self.file.flush()

    def step(self, msg):
        """A progress line with the elapsed time of the run."""
        self("[%6.1fs] %s" % (time.time() - self.t0, msg))

    def tool_log(self, name):
        return os.path.join(self.dir, name + ".log")


def run_logged(cmd, log_path, timeout, env=None):
    """Runs cmd, writes the command and its output to log_path; returns (rc, stdout+stderr, s)."""
    start = time.time()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        rc, text = res.returncode, res.stdout + res.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        rc, text = 124, out + "\ntimeout after %d s" % timeout
    except OSError as e:
        rc, text = 127, str(e)
    seconds = time.time() - start
    with open(log_path, "a", encoding="utf-8") as f:
        f.write("$ %s\n%s\n(exit %d, %.2f s)\n\n" % (" ".join(cmd), text, rc, seconds))
    return rc, text, seconds


def tail(text, lines=15):
    return "\n".join("    " + line for line in text.strip().splitlines()[-lines:])


# ----------------------------------------------------------------------------------------------
# kiln


def tp_rank_path(base, rank):
    """The file of tensor-parallel rank `rank` for kiln-compile -o base (the rule of
    kiln-compile --tensor-parallel: a trailing .kiln is replaced by .rank<r>.kiln)."""
    return (base[:-5] if base.endswith(".kiln") else base) + ".rank%d.kiln" % rank


def kiln_compile(args, log, onnx_path, out_path, shape_spec, tag, taskset=None, extra=(),
                 expect=None):
    """kiln-compile onnx_path -> out_path (extra flags appended; `expect` is the file that must
    exist afterwards, default out_path); returns dict(ok, seconds, kernels, text)."""
    cmd = [args.kiln_compile, onnx_path, "-o", out_path, "--precision", args.precision,
           "--target", args.target] + shlex.split(args.kiln_flags) + list(extra)
    expect = expect or out_path
    if shape_spec:
        cmd += ["--shape", shape_spec]
    if taskset:
        cmd = ["taskset", "-c", taskset] + cmd
    if os.path.exists(expect):
        os.remove(expect)
    rc, text, seconds = run_logged(cmd, log.tool_log("compile-" + tag), COMPILE_TIMEOUT_S)
    m = re.search(r"^kernels:\s*(\d+)", text, re.M)
    ok = rc == 0 and os.path.isfile(expect)
    if not ok:
        log("  kiln-compile FAILED (exit %d) for %s:\n%s" % (rc, tag, tail(text)))
    return dict(ok=ok, seconds=seconds, kernels=int(m.group(1)) if m else None, text=text)


def kiln_run(args, log, artifact, inputs, outputs, tag, iters, tp=1, env=None):
    """kiln-run with --input/--output and --bench iters (with tp > 1: --tensor-parallel tp over
    the rank files of `artifact`; `env`: more environment variables); returns (p50 ms or nan, ok)."""
    cmd = [args.kiln_run, artifact] + (["--tensor-parallel", str(tp)] if tp > 1 else [])
    for name, path in inputs.items():
        cmd += ["--input", "%s=%s" % (name, path)]
    for name, path in outputs.items():
        if os.path.exists(path):
            os.remove(path)  # a stale output must never pass
        cmd += ["--output", "%s=%s" % (name, path)]
    cmd += ["--bench", str(iters)]
    rc, text, _ = run_logged(cmd, log.tool_log("run-" + tag), RUN_TIMEOUT_S,
                             env=dict(os.environ, **env) if env else None)
    m = re.search(r"p50=([0-9.]+)", text)
    if rc != 0 or not m:
        log("  kiln-run FAILED (exit %d) for %s:\n%s" % (rc, tag, tail(text)))
        return float("nan"), False
    return float(m.group(1)), True


def kiln_profile(args, log, artifact, inputs, tag, tp=1):
    """kiln-run --profile: the full per-launch table goes to the tool log; the console gets the
    time per kernel function (summed over its launches), largest first, and with tp > 1 the
    all-reduce lines (collective rows and kiln-run's summary of their share)."""
    cmd = [args.kiln_run, artifact, "--profile", str(args.profile)]
    if tp > 1:
        cmd += ["--tensor-parallel", str(tp)]
    for name, path in inputs.items():
        cmd += ["--input", "%s=%s" % (name, path)]
    rc, text, _ = run_logged(cmd, log.tool_log("profile-" + tag), RUN_TIMEOUT_S)
    profile_text = text
    # Rows: "#  function  grid  block  us  %  GB/s  TFLOP/s  kernel name" (the last three columns
    # since kiln-run names kernels after the model; older kiln-run builds end at "%").
    rows = re.findall(r"^\s+\d+\s+(\S+)\s+(\S+)\s+(\S+)\s+([0-9.]+)\s+[0-9.]+(?:\s+\S+\s+\S+\s+.*)?$",
                      text, re.M)
    if rc != 0 or not rows:
        log("  kiln-run --profile FAILED (exit %d) for %s:\n%s" % (rc, tag, tail(text)))
        return
    per_fn = {}
    for fn, grid, block, us in rows:
        t = per_fn.setdefault(fn, [0.0, 0, grid, block])
        t[0] += float(us)
        t[1] += 1
    total = sum(t[0] for t in per_fn.values())
    if tp > 1:
        reduces = [l.strip() for l in text.splitlines() if re.search(r"all.reduce|collective", l)]
        for line in reduces[-(args.profile_top + 2):]:
            log("    %s" % line)
    log("  profile %s: %.1f us over %d launches; by function:" % (tag, total, len(rows)))
    for fn, (us, n, grid, block) in sorted(per_fn.items(), key=lambda kv: -kv[1][0])[:args.profile_top]:
        log("    %-10s %3d x  grid %-14s block %-10s %9.1f us %5.1f%%" % (fn, n, grid, block, us,
                                                                        100 * us / total))
    return profile_text


def max_rel_err(out, ref):
    """max|out - ref| / max|ref| in float64; inf on a shape mismatch or a non-finite output."""
    out64, ref64 = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    if out64.shape != ref64.shape or not np.all(np.isfinite(out64)):
        return float("inf")
    return float(np.max(np.abs(out64 - ref64))) / (float(np.max(np.abs(ref64))) or 1.0)


# ----------------------------------------------------------------------------------------------
# PyTorch


def import_torch():
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # the fp32 reference is real fp32
    torch.backends.cudnn.allow_tf32 = False
    return torch


def cuda_median_ms(torch, fn, iters, warmup):
    """Median of `iters` runs of fn() timed with CUDA events, after `warmup` untimed runs."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


def free_gpu(torch):
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def reset_compiled(torch):
    """Drops torch.compile's compiled code and CUDA graph pools (between modes and models)."""
    try:
        torch._dynamo.reset()
    except Exception:  # noqa: BLE001 - best effort cleanup
        pass
    try:
        from torch._inductor import cudagraph_trees

        cudagraph_trees.reset_cudagraph_trees()
    except Exception:  # noqa: BLE001
        pass
    free_gpu(torch)


def build_hf_model(spec):
    """The HF model exactly as export_hf.py builds it for the export (seed 0, CPU init, fp32,
    eager attention), without KV cache; the same weights as the exported ONNX file."""
    import export_hf

    ns = argparse.Namespace(pretrained=None, family=spec["family"], config=dict(spec["config"]),
                            seed=0)
    model, _, _ = export_hf.build(ns)
    model.config.use_cache = False  # one output, as in the export
    return model.eval()


def set_attention(model, attn):
    """Switches the attention implementation of a built HF model ("sdpa", "eager")."""
    try:
        model.set_attn_implementation(attn)
    except Exception:  # noqa: BLE001 - older transformers: the config field is read per call
        model.config._attn_implementation = attn
    return model


# ----------------------------------------------------------------------------------------------
# Model mode


def bench_tensor_parallel(args, log, onnx_path, tmp, tag, spec_text, inputs, r):
    """kiln-compile --tensor-parallel N, then kiln-run --tensor-parallel N (one thread and GPU per
    rank): latency into r["tp"], output kept for the reference check, optional profile."""
    n = args.tensor_parallel
    base = os.path.join(tmp, "%s-tp%d.kiln" % (tag, n))
    log.step("%s %s: kiln-compile --tensor-parallel %d" % (r["model"], r["shape"], n))
    c = kiln_compile(args, log, onnx_path, base, spec_text, tag + "-tp%d" % n,
                     extra=["--tensor-parallel", str(n)], expect=tp_rank_path(base, n - 1))
    r["tp_compile_s"] = c["seconds"]
    if not c["ok"]:
        r["notes"].append("kiln-compile --tensor-parallel %d failed" % n)
        return
    out_path = os.path.join(tmp, tag + "-tp.out.npy")
    r["tp"], ok = kiln_run(args, log, base, inputs, {"last_hidden_state": out_path}, tag + "-tp%d" % n,
                           args.iters, tp=n)
    if ok:
        r["tp_out"] = np.load(out_path)
        if "kiln_out" in r:
            r["tp_vs_tp1"] = max_rel_err(r["tp_out"], r["kiln_out"])
        log.step("%s %s: kiln TP=%d p50 %.4f ms (TP=1 %.4f ms: %.2fx); compiled in %.1f s" % (
            r["model"], r["shape"], n, r["tp"], r["kiln"], r["kiln"] / r["tp"], c["seconds"]))
        if args.profile:
            text = kiln_profile(args, log, base, inputs, tag + "-tp%d" % n, tp=n)
            m = re.search(r"collectives: (\d+) per run, ([0-9.]+) ms per run, ([0-9.]+)% of the profiled total",
                          text or "")
            layers = next((v for k, v in MODELS[r["model"]]["config"].items()
                           if k in ("num_hidden_layers", "n_layer")), None)
            if m and layers:
                count, ms, share = int(m.group(1)), float(m.group(2)), float(m.group(3))
                r["ar_layer_us"] = 1000 * ms / layers
                r["ar_share"] = share
                log.step("%s %s: all-reduce %d per run (%d per layer), %.1f us per layer, %.1f%% of "
                         "the profiled step (rank 0)" % (r["model"], r["shape"], count, count // layers,
                                                         r["ar_layer_us"], share))
    else:
        r["notes"].append("kiln-run --tensor-parallel %d failed" % n)
    for rank in range(n):
        if os.path.exists(tp_rank_path(base, rank)):
            os.remove(tp_rank_path(base, rank))


def check_loopback(args, log, onnx_path, tmp, tag, spec_text, inputs, r, n):
    """kiln-compile --tensor-parallel n --tp-loopback on one GPU: the output goes into
    r["loop"][n] for the comparison with TP=1 and the PyTorch reference."""
    art = os.path.join(tmp, "%s-loop%d.kiln" % (tag, n))
    c = kiln_compile(args, log, onnx_path, art, spec_text, tag + "-loop%d" % n,
                     extra=["--tensor-parallel", str(n), "--tp-loopback"])
    if not c["ok"]:
        r["notes"].append("loopback %d: kiln-compile failed" % n)
        return
    out_path = os.path.join(tmp, tag + "-loop.out.npy")
    ms, ok = kiln_run(args, log, art, inputs, {"last_hidden_state": out_path}, tag + "-loop%d" % n, 3)
    if ok:
        out = np.load(out_path)
        r.setdefault("loop", {})[n] = dict(out=out, vs_tp1=max_rel_err(out, r["kiln_out"])
                                           if "kiln_out" in r else float("nan"))
        log.step("%s %s: loopback %d ranks on one GPU: max rel diff vs TP=1 %.2e (%.3f ms)" % (
            r["model"], r["shape"], n, r["loop"][n]["vs_tp1"], ms))
    else:
        r["notes"].append("loopback %d: kiln-run failed" % n)
    os.remove(art)


def export_model(args, log, name, spec):
    """Exports (or reuses) <work>/<name>.onnx; returns (path or None, exporter, seconds)."""
    folder = os.path.join(args.work_dir, "export-" + name)  # the .onnx and its external data
    path = os.path.join(folder, name + ".onnx")
    stamp_path = os.path.join(args.work_dir, "export-%s.stamp.json" % name)
    want = dict(family=spec["family"], config=spec["config"], seed=0)
    if os.path.isfile(path) and os.path.isfile(stamp_path):
        with open(stamp_path, encoding="utf-8") as f:
            stamp = json.load(f)
        if {k: stamp.get(k) for k in want} == want:
            log.step("%s: export cached (%s exporter): %s" % (name, stamp.get("exporter"), path))
            return path, stamp.get("exporter"), 0.0
    config = ",".join("%s=%s" % kv for kv in spec["config"].items())
    start = time.time()
    for exporter in ("dynamo", "legacy"):
        if os.path.exists(stamp_path):
            os.remove(stamp_path)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        cmd = [sys.executable, EXPORT_HF, spec["family"], "-o", path, "--config", config,
               "--seed", "0", "--exporter", exporter]
        log.step("%s: exporting with the %s exporter" % (name, exporter))
        rc, text, _ = run_logged(cmd, log.tool_log("export-" + name), EXPORT_TIMEOUT_S)
        if rc == 0 and os.path.isfile(path):
            with open(stamp_path, "w", encoding="utf-8") as f:
                json.dump(dict(want, exporter=exporter), f)
            seconds = time.time() - start
            log.step("%s: exported in %.1f s (%s exporter, %.0f MB)" % (
                name, seconds, exporter, dir_bytes(folder) / 1e6))
            return path, exporter, seconds
        log("  %s exporter failed (exit %d):\n%s" % (exporter, rc, tail(text)))
    return None, None, time.time() - start


def dir_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def make_feeds(spec, name, b, s):
    """Random ids in [0, vocab) from a fixed seed; BERT: mask with the last quarter of every row
    except the first set to 0."""
    rng = np.random.default_rng([INPUT_SEED, zlib.crc32(name.encode()), b, s])
    feeds = {"input_ids": rng.integers(0, spec["config"]["vocab_size"], size=(b, s), dtype=np.int64)}
    if spec["family"] == "bert":
        mask = np.ones((b, s), dtype=np.int64)
        mask[1:, s - s // 4:] = 0
        feeds["attention_mask"] = mask
    return feeds


def bench_model(args, log, torch, name, spec, rows):
    """Export, compile, check and time one model; appends one row per shape to `rows`."""
    shapes = spec["shapes"][:1] if args.quick else spec["shapes"]
    my_rows = []
    for b, s in shapes:
        my_rows.append(dict(model=name, shape="%dx%d" % (b, s), b=b, s=s, kiln=float("nan"),
                            eager=float("nan"), compile=float("nan"), compile_ro=float("nan"),
                            compile_s=float("nan"), kernels=None, err=float("nan"), result="FAIL",
                            notes=[]))
    rows.extend(my_rows)

    onnx_path, exporter, _ = export_model(args, log, name, spec)
    if not onnx_path:
        for r in my_rows:
            r["notes"].append("export failed")
        return
    for r in my_rows:
        r["exporter"] = exporter

    # kiln: compile, write the inputs, run once (output) + bench.
    tmp = os.path.join(args.work_dir, "run-" + name)
    os.makedirs(tmp, exist_ok=True)
    for r in my_rows:
        b, s = r["b"], r["s"]
        tag = "%s-%s-%s" % (name, r["shape"], args.precision)
        feeds = make_feeds(spec, name, b, s)
        r["feeds"] = feeds
        spec_text = ",".join("%s=%dx%d" % (k, b, s) for k in feeds)
        art = os.path.join(tmp, tag + ".kiln")
        log.step("%s %s: kiln-compile --precision %s" % (name, r["shape"], args.precision))
        c = kiln_compile(args, log, onnx_path, art, spec_text, tag)
        r["compile_s"], r["kernels"] = c["seconds"], c["kernels"]
        if not c["ok"]:
            r["notes"].append("kiln-compile failed")
            continue
        log.step("%s %s: compiled in %.1f s, %s kernels" % (name, r["shape"], c["seconds"], c["kernels"]))
        if not args.quick and (name, (b, s)) == TWO_CORE_COMPILE:
            art2 = os.path.join(tmp, tag + "-2core.kiln")
            c2 = kiln_compile(args, log, onnx_path, art2, spec_text, tag + "-2core", taskset="0,1")
            r["compile_2core_s"] = c2["seconds"] if c2["ok"] else float("nan")
            log.step("%s %s: compiled under taskset -c 0,1 in %.1f s" % (name, r["shape"], c2["seconds"]))
            if os.path.exists(art2):
                os.remove(art2)
        inputs = {}
        for k, v in feeds.items():
            inputs[k] = os.path.join(tmp, "%s.in.%s.npy" % (tag, k))
            np.save(inputs[k], v)
        out_path = os.path.join(tmp, tag + ".out.npy")
        r["kiln"], ok = kiln_run(args, log, art, inputs, {"last_hidden_state": out_path}, tag, args.iters)
        if ok:
            r["kiln_out"] = np.load(out_path)
            log.step("%s %s: kiln p50 %.4f ms" % (name, r["shape"], r["kiln"]))
        else:
            r["notes"].append("kiln-run failed")
        if ok and args.profile:
            kiln_profile(args, log, art, inputs, tag)
        if not args.keep_artifacts:
            os.remove(art)  # 0.2-3 GB each; compiled again on every run anyway
        if args.tensor_parallel > 1:
            bench_tensor_parallel(args, log, onnx_path, tmp, tag, spec_text, inputs, r)
        for n in args.tp_loopback if r is my_rows[0] else ():  # the first shape only
            check_loopback(args, log, onnx_path, tmp, tag, spec_text, inputs, r, n)

    # PyTorch fp32 reference from the model export_hf.py exported (eager attention, as in the graph).
    model = None
    try:
        log.step("%s: PyTorch fp32 reference" % name)
        torch.set_float32_matmul_precision("highest")
        model = build_hf_model(spec).cuda()
        with torch.inference_mode():
            for r in my_rows:
                tf = {k: torch.from_numpy(v).cuda() for k, v in r["feeds"].items()}
                ref = model(**tf).last_hidden_state.float().cpu().numpy()
                if "kiln_out" in r:
                    r["err"] = max_rel_err(r["kiln_out"], ref)
                    if r["err"] <= TOLERANCE[args.precision]:
                        r["result"] = "PASS"
                    else:
                        r["notes"].append("error above %.0e" % TOLERANCE[args.precision])
                    r.pop("kiln_out")
                # Tensor-parallel and loopback outputs: the same tolerance against the reference.
                if "tp_out" in r:
                    r["tp_err"] = max_rel_err(r.pop("tp_out"), ref)
                    if r["tp_err"] > TOLERANCE[args.precision]:
                        r["result"] = "FAIL"
                        r["notes"].append("TP=%d error above %.0e" % (args.tensor_parallel,
                                                                      TOLERANCE[args.precision]))
                for n, lb in sorted(r.get("loop", {}).items()):
                    lb["err"] = max_rel_err(lb.pop("out"), ref)
                    log.step("%s %s: loopback %d error vs torch fp32 %.2e" % (name, r["shape"], n, lb["err"]))
                    if lb["err"] > TOLERANCE[args.precision]:
                        r["result"] = "FAIL"
                        r["notes"].append("loopback %d error above %.0e" % (n, TOLERANCE[args.precision]))
                del tf, ref
    except Exception as e:  # noqa: BLE001 - reported in the rows
        log("  PyTorch reference FAILED: %s: %s" % (type(e).__name__, e))
        for r in my_rows:
            r["result"] = "FAIL"
            r["notes"].append("no reference")
    free_gpu(torch)

    # PyTorch fp16 peers: the same model object, in fp16, with the peers' attention.
    try:
        if model is None:
            model = build_hf_model(spec).cuda()
        peer = set_attention(model.half(), args.peer_attn)
        model = None
    except Exception as e:  # noqa: BLE001
        log("  PyTorch fp16 model FAILED: %s: %s" % (type(e).__name__, e))
        return
    peers = [("eager", None), ("compile", dict()), ("compile_ro", dict(mode="reduce-overhead"))]
    if args.peers != "all":
        peers = [p for p in peers if p[0] in args.peers.split(",")]
    for key, compile_kwargs in peers:
        fn_model = peer if compile_kwargs is None else torch.compile(peer, dynamic=False, **compile_kwargs)
        for r in my_rows:
            try:
                call = peer_call(torch, fn_model, r["feeds"], mark_step=key == "compile_ro")
                start = time.time()
                with torch.inference_mode():
                    call()  # the compile, for torch.compile
                    torch.cuda.synchronize()
                    first_s = time.time() - start
                    r[key] = cuda_median_ms(torch, call, args.iters, warmup=10)
                log.step("%s %s: torch %s fp16 %.4f ms (first call %.1f s)" % (
                    name, r["shape"], key.replace("_", "-"), r[key], first_s))
            except Exception as e:  # noqa: BLE001 - a peer that fails is reported and fails the run
                log("  torch %s FAILED on %s %s: %s: %s" % (key, name, r["shape"], type(e).__name__,
                                                           str(e).splitlines()[0] if str(e) else ""))
                r["notes"].append("torch %s failed" % key)
            call = None
        fn_model = None
        reset_compiled(torch)
    peer = None
    for r in my_rows:
        r.pop("feeds", None)
    reset_compiled(torch)
    if args.keep_artifacts:
        log("  kept: %s" % ", ".join(sorted(f for f in os.listdir(tmp) if f.endswith(".kiln"))))
    else:
        shutil.rmtree(tmp, ignore_errors=True)


def peer_call(torch, fn_model, feeds, mark_step):
    """fn() running fn_model on `feeds` (copied to the GPU once); with mark_step, each call starts
    a new CUDA graph tree step (torch.compile mode="reduce-overhead")."""
    tf = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}

    def call():
        if mark_step:
            torch.compiler.cudagraph_mark_step_begin()
        return fn_model(**tf)

    return call


def fmt(v, spec="%.4f"):
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else spec % v


def model_table(args, rows):
    """(text lines, markdown lines) of the model-mode table."""
    head = ["model", "shape", "kiln ms", "eager ms", "compile ms", "compile-RO ms", "kiln/eager",
            "kiln/compile", "kiln/compile-RO", "kiln compile s", "kernels", "max rel err", "result"]
    body = []
    for r in rows:
        def ratio(peer):
            return fmt(r["kiln"] / r[peer], "%.2f") if r[peer] and math.isfinite(r[peer]) else "-"
        compile_s = fmt(r["compile_s"], "%.1f")
        if "compile_2core_s" in r:
            compile_s += " (2 cores: %s)" % fmt(r["compile_2core_s"], "%.1f")
        body.append([MODELS[r["model"]]["title"], r["shape"], fmt(r["kiln"]), fmt(r["eager"]),
                     fmt(r["compile"]), fmt(r["compile_ro"]), ratio("eager"), ratio("compile"),
                     ratio("compile_ro"), compile_s, fmt(r["kernels"], "%d"), fmt(r["err"], "%.2e"),
                     r["result"] + ("" if not r["notes"] else " (" + "; ".join(r["notes"]) + ")")])
    if args.tensor_parallel > 1 or args.tp_loopback:
        n = args.tensor_parallel
        extra_head = []
        if n > 1:
            extra_head += ["kiln TP=%d ms" % n, "TP=1/TP=%d" % n, "TP=%d err" % n,
                           "TP=%d vs TP=1" % n, "all-reduce us/layer (share)"]
        extra_head += ["loopback %d err (vs TP=1)" % k for k in args.tp_loopback]
        head = head[:-1] + extra_head + head[-1:]
        for line, r in zip(body, rows):
            extra = []
            if n > 1:
                tp = r.get("tp", float("nan"))
                extra += [fmt(tp), fmt(r["kiln"] / tp, "%.2f") if tp and math.isfinite(tp) else "-",
                          fmt(r.get("tp_err", float("nan")), "%.2e"),
                          fmt(r.get("tp_vs_tp1", float("nan")), "%.2e"),
                          "%s (%s%%)" % (fmt(r.get("ar_layer_us", float("nan")), "%.1f"),
                                         fmt(r.get("ar_share", float("nan")), "%.1f"))]
            for k in args.tp_loopback:
                lb = r.get("loop", {}).get(k, {})
                extra.append("%s (%s)" % (fmt(lb.get("err", float("nan")), "%.2e"),
                                          fmt(lb.get("vs_tp1", float("nan")), "%.2e")))
            line[-1:-1] = extra
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    text = ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip() for line in [head] + body]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(str(x) for x in line) + " |" for line in body]
    return text, md


# ----------------------------------------------------------------------------------------------
# GEMM mode


def gemm_shapes(models, quick):
    """Distinct GEMMs [(batch, M, K, N)] -> sorted list of dicts with the (model, size, what) uses.

    Linear layers: batch 1, M = batch*seq. Attention (HF eager/SDPA math; Llama's KV heads are
    repeated to all heads first): QK^T [b*h, s, d] x [b*h, d, s], PV [b*h, s, s] x [b*h, s, d].
    """
    found = {}
    for name in models:
        spec = MODELS[name]
        c = spec["config"]
        if spec["family"] == "gpt2":
            h, heads, inner = c["n_embd"], c["n_head"], c.get("n_inner") or 4 * c["n_embd"]
            linears = [(h, 3 * h, "fused QKV"), (h, h, "attn out"), (h, inner, "MLP up"),
                       (inner, h, "MLP down")]
        elif spec["family"] == "bert":
            h, heads, inner = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"]
            linears = [(h, h, "Q/K/V, attn out"), (h, inner, "MLP up"), (inner, h, "MLP down")]
        else:
            h, heads, inner = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"]
            kv = c["num_key_value_heads"] * (h // heads)
            linears = [(h, h, "Q, attn out"), (h, kv, "K/V"), (h, inner, "gate/up"),
                       (inner, h, "down")]
        d = h // heads
        for i, (b, s) in enumerate(spec["shapes"][:1] if quick else spec["shapes"]):
            size = "%dx%d" % (b, s)
            large = i > 0  # 8x512 (Llama: 4x512)
            uses = [((1, b * s, k, n), what) for k, n, what in linears]
            uses += [((b * heads, s, d, s), "attn QK^T"), ((b * heads, s, s, d), "attn PV")]
            for key, what in uses:
                entry = found.setdefault(key, dict(batch=key[0], m=key[1], k=key[2], n=key[3],
                                                   uses=[], large=False))
                entry["uses"].append("%s %s %s" % (name, size, what))
                entry["large"] = entry["large"] or large
    rows = [found[k] for k in sorted(found, key=lambda k: (k[0] > 1, k[0] * k[1] * k[2] * k[3], k))]
    if not quick:
        for (b, m, k, n), what in GEMM_EXTRA_SHAPES:
            rows.append(dict(batch=b, m=m, k=k, n=n, uses=[what], large=False, extra=True))
    return rows


def to_bf16_bits(x):
    """float32 array -> bfloat16 bit patterns (uint16), rounded to nearest even (NaN kept)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), rounded)


def from_bf16_bits(bits):
    """bfloat16 bit patterns (uint16 or numpy 'V2', as kiln-run writes bf16) -> float32."""
    u16 = np.frombuffer(np.ascontiguousarray(bits).tobytes(), dtype=np.uint16).reshape(bits.shape)
    return (u16.astype(np.uint32) << 16).view(np.float32)


def gemm_operands(shape, repeat, seed=0):
    """A [batch?, M, K] and `repeat` distinct B_i [batch?, K, N], fp16, entries ~ N(0, 1) and
    N(0, 1/K) so every output is ~ N(0, 1)."""
    batch, m, k, n = shape["batch"], shape["m"], shape["k"], shape["n"]
    lead = (batch,) if batch > 1 else ()
    rng = np.random.default_rng([seed, batch, m, k, n])
    a = rng.standard_normal(lead + (m, k), dtype=np.float32).astype(np.float16)
    base = (rng.standard_normal(lead + (k, n), dtype=np.float32) / math.sqrt(k))
    # Distinct weights without R random draws: B_i = base * (1 + i/64), rolled by i along K.
    bs = [(np.roll(base, i, axis=-2) * (1.0 + i / 64.0)).astype(np.float16) for i in range(repeat)]
    return a, bs


def build_gemm_onnx(path, a, bs, io_dtype="fp16"):
    """An ONNX model of len(bs) independent MatMul(A, B_i) -> Y_i: A a graph input, B_i initializers.

    io_dtype fp16 keeps every tensor float16; bf16 bfloat16 (the fp16 values rounded to bf16);
    fp32 stores A, B_i and Y_i as float32 (the values are the fp16 ones) for a compiler that reads
    only fp32 graphs and lowers them with --precision.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    np_dtype, onnx_dtype = {"fp16": (np.float16, TensorProto.FLOAT16),
                            "bf16": (None, TensorProto.BFLOAT16),
                            "fp32": (np.float32, TensorProto.FLOAT)}[io_dtype]
    m, n = a.shape[-2], bs[0].shape[-1]
    lead = list(a.shape[:-2])
    inits, nodes, outputs = [], [], []
    for i, b in enumerate(bs):
        if io_dtype == "bf16":
            inits.append(helper.make_tensor("B%d" % i, TensorProto.BFLOAT16, list(b.shape),
                                            to_bf16_bits(b.astype(np.float32)).tobytes(), raw=True))
        else:
            inits.append(numpy_helper.from_array(b.astype(np_dtype), "B%d" % i))
        nodes.append(helper.make_node("MatMul", ["A", "B%d" % i], ["Y%d" % i], name="matmul_%d" % i))
        outputs.append(helper.make_tensor_value_info("Y%d" % i, onnx_dtype, lead + [m, n]))
    graph = helper.make_graph(nodes, "gemm_x%d" % len(bs),
                              [helper.make_tensor_value_info("A", onnx_dtype, list(a.shape))],
                              outputs, initializer=inits)
    model = helper.make_model(graph, producer_name="kiln bench_real_size.py",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what onnx 1.13 (Debian 12, kiln's libonnx_proto) reads
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def gemm_label(s):
    if s["batch"] > 1:
        return "%dx[%dx%d]x[%dx%d]" % (s["batch"], s["m"], s["k"], s["k"], s["n"])
    return "[%dx%d]x[%dx%d]" % (s["m"], s["k"], s["k"], s["n"])


def bench_gemm(args, log, torch, shapes):
    """Times every GEMM shape in kiln and cuBLAS; returns the rows."""
    rows = []
    tmp = os.path.join(args.work_dir, "gemm")
    os.makedirs(tmp, exist_ok=True)
    io = args.gemm_io
    tolerance = GEMM_TOLERANCE[io]
    for s in shapes:
        label = gemm_label(s)
        row = dict(s, label=label, kiln_us=float("nan"), cublas_us=float("nan"), err=float("nan"),
                   kernels=None, result="FAIL", notes=[])
        rows.append(row)
        flop = 2.0 * s["batch"] * s["m"] * s["k"] * s["n"]
        weight_bytes = 2 * s["batch"] * s["k"] * s["n"]
        repeat = max(1, min(args.gemm_repeat, GEMM_WEIGHT_BYTES // weight_bytes))
        if repeat != args.gemm_repeat:
            row["notes"].append("R = %d" % repeat)
        a, bs = gemm_operands(s, repeat)
        if io == "bf16":  # the values both sides use: the fp16 operands rounded to bf16
            a = from_bf16_bits(to_bf16_bits(a.astype(np.float32)))
            bs = [from_bf16_bits(to_bf16_bits(b.astype(np.float32))) for b in bs]
        tag = "gemm-" + re.sub(r"[^0-9x]+", "_", label).strip("_")  # 12x_128x64_x_64x128
        onnx_path, art = os.path.join(tmp, tag + ".onnx"), os.path.join(tmp, tag + ".kiln")
        y0 = None
        try:
            build_gemm_onnx(onnx_path, a, bs, io)
            c = kiln_compile(args, log, onnx_path, art, None, tag)
            row["kernels"] = c["kernels"]
            if c["ok"]:
                if c["kernels"] != repeat:
                    row["notes"].append("%s launches, not %d" % (c["kernels"], repeat))
                a_path, y_path = os.path.join(tmp, tag + ".A.npy"), os.path.join(tmp, tag + ".Y0.npy")
                if io == "bf16":  # kiln-run reads and writes bf16 as NumPy 'V2' (docs/runtime.md)
                    np.save(a_path, to_bf16_bits(a).view("V2"))
                else:
                    np.save(a_path, a.astype(np.float16 if io == "fp16" else np.float32))
                # Kernel against kernel: the R GEMMs of a graph are independent, so programmatic
                # launch would overlap one GEMM's launch with the previous one's tail, which the
                # cuBLAS graph does not do (--gemm-pdl keeps it).
                p50, ok = kiln_run(args, log, art, {"A": a_path}, {"Y0": y_path}, tag, args.iters,
                                   env=None if args.gemm_pdl else {"KILN_PROGRAMMATIC_LAUNCH": "0"})
                if ok:
                    y0 = np.load(y_path)
                    y0 = from_bf16_bits(y0) if io == "bf16" else y0.astype(np.float32)
                    row["kiln_us"] = p50 * 1e3 / repeat
            else:
                row["notes"].append("kiln-compile failed")
        except Exception as e:  # noqa: BLE001 - this shape fails, the others go on
            log("  kiln side of %s: %s: %s" % (label, type(e).__name__, e))
            row["notes"].append("error: %s" % type(e).__name__)
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))

        # cuBLAS: the same R matmuls, captured in one CUDA graph.
        try:
            tdt = torch.bfloat16 if io == "bf16" else torch.float16
            ta = torch.from_numpy(np.asarray(a, dtype=np.float32)).to(tdt).cuda()
            tbs = [torch.from_numpy(np.asarray(b, dtype=np.float32)).to(tdt).cuda() for b in bs]
            if y0 is not None:
                ref = torch.matmul(ta.float(), tbs[0].float()).cpu().numpy()
                row["err"] = max_rel_err(y0, ref)
                if row["err"] <= tolerance:
                    row["result"] = "PASS"
                else:
                    row["notes"].append("error above %.0e" % tolerance)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    [torch.matmul(ta, tb) for tb in tbs]
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                outs = [torch.matmul(ta, tb) for tb in tbs]
            row["cublas_us"] = cuda_median_ms(torch, graph.replay, args.iters, warmup=5) * 1e3 / repeat
            del graph, outs, ta, tbs
        except Exception as e:  # noqa: BLE001 - a peer that fails is reported and fails the run
            log("  cuBLAS FAILED on %s: %s: %s" % (label, type(e).__name__, e))
            row["notes"].append("cuBLAS failed")
        free_gpu(torch)
        row["kiln_tflops"] = flop / (row["kiln_us"] * 1e6)
        row["cublas_tflops"] = flop / (row["cublas_us"] * 1e6)
        row["ratio"] = row["cublas_us"] / row["kiln_us"]
        log.step("gemm %-26s kiln %9s us %7s TFLOP/s | cuBLAS %9s us %7s TFLOP/s | cuBLAS/kiln %5s | err %s %s" % (
            label, fmt(row["kiln_us"], "%.2f"), fmt(row["kiln_tflops"], "%.1f"),
            fmt(row["cublas_us"], "%.2f"), fmt(row["cublas_tflops"], "%.1f"), fmt(row["ratio"], "%.2f"),
            fmt(row["err"], "%.1e"), row["result"]))
    shutil.rmtree(tmp, ignore_errors=True)
    return rows


def geomean(values):
    values = [v for v in values if math.isfinite(v) and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def gemm_table(rows):
    head = ["GEMM (batch x [MxK]x[KxN])", "kiln us", "kiln TFLOP/s", "cuBLAS us", "cuBLAS TFLOP/s",
            "cuBLAS/kiln", "max rel err", "result", "used by"]
    body = []
    for r in rows:
        body.append([r["label"], fmt(r["kiln_us"], "%.2f"), fmt(r["kiln_tflops"], "%.1f"),
                     fmt(r["cublas_us"], "%.2f"), fmt(r["cublas_tflops"], "%.1f"), fmt(r["ratio"], "%.2f"),
                     fmt(r["err"], "%.1e"),
                     r["result"] + ("" if not r["notes"] else " (" + "; ".join(r["notes"]) + ")"),
                     "; ".join(r["uses"])])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    text = ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip() for line in [head] + body]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(str(x) for x in line) + " |" for line in body]
    models = [r for r in rows if not r.get("extra")]
    summary = [
        "geometric mean of cuBLAS/kiln (>= 1: kiln as fast as cuBLAS): all %d shapes %s; "
        "the %d shapes of 8x512 (Llama 4x512) %s" % (
            len(models), fmt(geomean([r["ratio"] for r in models]), "%.3f"),
            sum(r["large"] for r in models),
            fmt(geomean([r["ratio"] for r in models if r["large"]]), "%.3f"))]
    for r in rows:
        if r.get("extra"):
            summary.append("%s (not in the means): kiln %s TFLOP/s, cuBLAS %s TFLOP/s" % (
                r["label"], fmt(r["kiln_tflops"], "%.0f"), fmt(r["cublas_tflops"], "%.0f")))
    return text, md, summary


# ----------------------------------------------------------------------------------------------
# main


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln-compile", default=os.path.join(REPO, "build", "bin", "kiln-compile"))
    p.add_argument("--kiln-run", default=os.path.join(REPO, "build", "bin", "kiln-run"))
    p.add_argument("--models", default="gpt2,bert,llama", help="comma-separated: gpt2, bert, llama")
    p.add_argument("--precision", default="fp16", choices=sorted(TOLERANCE),
                   help="kiln-compile --precision (default fp16); PyTorch peers are always fp16")
    p.add_argument("--iters", type=int, default=50, help="timed runs per measurement (>= 50)")
    p.add_argument("--gemm", action="store_true", help="GEMM mode instead of whole models")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="also run kiln-run --profile N per artifact and print time per kernel function")
    p.add_argument("--peers", default="all",
                   help="PyTorch peers to time: all, or a comma list of eager,compile,compile_ro "
                        "(a run without all three is for development; its table has gaps)")
    p.add_argument("--profile-top", type=int, default=15, help="functions listed per profile")
    p.add_argument("--gemm-repeat", type=int, default=GEMM_REPEAT, help="R: MatMuls per GEMM graph")
    p.add_argument("--gemm-pdl", action="store_true",
                   help="GEMM mode: keep kiln's programmatic dependent launch (default: off there, "
                        "KILN_PROGRAMMATIC_LAUNCH=0, so kernels are compared with cuBLAS's alone)")
    p.add_argument("--gemm-only", default="", metavar="LIST",
                   help="GEMM mode: only the shapes whose label contains one of these comma-separated "
                        "strings, e.g. '[4096x768]x[768x3072],128x[512x64]' (a development run: the "
                        "geometric means then cover those shapes only)")
    p.add_argument("--gemm-io", choices=["fp16", "bf16", "fp32"], default=None,
                   help="tensor type of the GEMM ONNX graphs and of the cuBLAS peer (default: bf16 "
                        "with --precision bf16, else fp16; fp32: same values, kiln lowers them "
                        "with --precision)")
    p.add_argument("--quick", action="store_true", help="only the 1x128 shapes; no 2-core compile")
    p.add_argument("--keep-artifacts", action="store_true",
                   help="keep each compiled artifact (<work-dir>/run-<model>/<model>-<B>x<S>-<precision>"
                        ".kiln) for later steps, e.g. the Python package's GPU check; by default each "
                        "is removed after it is timed (0.2-3 GB each)")
    p.add_argument("--long-prompts", action="store_true",
                   help="Llama only at the long-prompt shapes 1x4096 and 4x2048 (exported with "
                        "max_position_embeddings 4096), against the same peers")
    p.add_argument("--tensor-parallel", type=int, default=1, metavar="N",
                   help="also compile with --tensor-parallel N and time kiln-run --tensor-parallel N "
                        "(N GPUs) against TP=1 in the same run")
    p.add_argument("--tp-loopback", default="", metavar="LIST",
                   help="comma-separated N: also check kiln-compile --tensor-parallel N --tp-loopback "
                        "(all ranks on one GPU) against TP=1 and the reference, at each model's first shape")
    p.add_argument("--peer-attn", default="sdpa", choices=["sdpa", "eager"],
                   help="attention implementation of the PyTorch fp16 peers (default sdpa, HF's default)")
    p.add_argument("--target", default="sm_90")
    p.add_argument("--kiln-flags", default="", metavar="FLAGS",
                   help="more kiln-compile flags for every compile (A/B runs); give it with '=' "
                        "since the value starts with '--', e.g. "
                        "--kiln-flags=--attention-key-rotary=fused")
    p.add_argument("--work-dir", default=os.environ.get("KILN_BENCH_WORK", os.path.join(REPO, ".bench-work")),
                   help="exports (cached between runs) and temporary files")
    p.add_argument("--log-dir", default=os.environ.get("KILN_LOG_DIR", os.path.join(REPO, ".carry-bench", "logs")))
    args = p.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    bad = [m for m in args.models if m not in MODELS]
    if bad or not args.models:
        p.error("--models takes a comma-separated subset of %s, got %s" % (",".join(MODELS), bad or "none"))
    try:
        args.tp_loopback = [int(x) for x in args.tp_loopback.split(",") if x]
    except ValueError:
        p.error("--tp-loopback takes comma-separated integers, got %r" % args.tp_loopback)
    if args.tensor_parallel < 1 or any(n < 2 for n in args.tp_loopback):
        p.error("--tensor-parallel must be >= 1 and every --tp-loopback N >= 2")
    if args.gemm_io is None:
        args.gemm_io = "bf16" if args.precision == "bf16" else "fp16"
    if args.iters < 1 or args.gemm_repeat < 1:
        p.error("--iters and --gemm-repeat must be positive")
    return args


def versions(torch):
    out = ["torch %s (CUDA %s)" % (torch.__version__, torch.version.cuda)]
    for mod in ("transformers", "onnx"):
        try:
            out.append("%s %s" % (mod, __import__(mod).__version__))
        except Exception:  # noqa: BLE001
            out.append("%s missing" % mod)
    out.append("numpy %s" % np.__version__)
    return ", ".join(out)


def main(argv):
    args = parse_args(argv)
    from e2e_test import has_gpu  # one GPU check for every GPU test script

    if not has_gpu():
        print("SKIP: no GPU (nvidia-smi -L found none); this benchmark needs an NVIDIA GPU (docs/gpu.md)")
        return EXIT_SKIP
    for tool in (args.kiln_compile, args.kiln_run):
        if not os.access(tool, os.X_OK):
            print("ERROR: %s is not executable (scripts/bench_real_size.sh sets both up)" % tool)
            return EXIT_USAGE
    os.makedirs(args.work_dir, exist_ok=True)
    if args.long_prompts:
        # Long-context prefill: attention is most of the time at these lengths.
        MODELS["llama"] = dict(MODELS["llama"], shapes=[(1, 4096), (4, 2048)],
                               config=dict(MODELS["llama"]["config"], max_position_embeddings=4096))
        args.models = ["llama"]
    run = ("bench-gemm-" if args.gemm else "bench-real-size-") + "-".join(args.models) + \
        "-" + args.precision + ("-quick" if args.quick else "") + \
        ("-long" if args.long_prompts else "")
    log = Log(args.log_dir, run)
    try:
        torch = import_torch()
    except ImportError as e:
        log("ERROR: PyTorch is needed for the peers: %s" % e)
        return EXIT_USAGE
    if not torch.cuda.is_available():
        log("SKIP: torch sees no CUDA device")
        return EXIT_SKIP
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    log("GPU %s; %s; %d CPU cores" % (gpu, versions(torch), os.cpu_count() or 0))
    log("kiln-compile %s; kiln-run %s; work dir %s; logs %s/%s{.log,.md,/}" % (
        args.kiln_compile, args.kiln_run, args.work_dir, args.log_dir, run))
    log("kiln-compile flags: %s; KILN_PROGRAMMATIC_LAUNCH=%s" % (
        args.kiln_flags or "(none)", os.environ.get("KILN_PROGRAMMATIC_LAUNCH", "(unset: on)")))
    cmdline = "test/bench/bench_real_size.py " + " ".join(argv)
    md = ["# %s" % run, "", "`%s`" % cmdline, "", "GPU %s; %s" % (gpu, versions(torch)), ""]

    if args.gemm:
        shapes = gemm_shapes(args.models, args.quick)
        if args.gemm_only:
            wanted = [w.strip() for w in args.gemm_only.split(",") if w.strip()]
            shapes = [s for s in shapes if any(w in gemm_label(s) for w in wanted)]
            if not shapes:
                log("--gemm-only %s matches none of the GEMM shapes (labels like "
                    "[4096x768]x[768x3072] or 12x[128x64]x[64x128])" % args.gemm_only)
                return EXIT_USAGE
        log("GEMM mode: %d distinct shapes, R = %d MatMuls per graph, kiln --precision %s, ONNX %s, "
            "%d timed runs, kiln programmatic launch %s" % (
                len(shapes), args.gemm_repeat, args.precision, args.gemm_io, args.iters,
                "on" if args.gemm_pdl else "off"))
        rows = bench_gemm(args, log, torch, shapes)
        text, md_rows, summary = gemm_table(rows)
        failed = [r for r in rows if r["result"] != "PASS" or not math.isfinite(r["cublas_us"])]
    else:
        log("model mode: %s; kiln --precision %s (tolerance %.0e); PyTorch peers fp16, %s attention; "
            "%d timed runs each" % (",".join(args.models), args.precision, TOLERANCE[args.precision],
                                    args.peer_attn, args.iters))
        rows = []
        for name in args.models:
            try:
                bench_model(args, log, torch, name, MODELS[name], rows)
            except Exception as e:  # noqa: BLE001 - an unexpected error fails this model's rows only
                log("  %s: unexpected %s: %s" % (name, type(e).__name__, e))
                for r in rows:
                    if r["model"] == name:
                        r["result"] = "FAIL"
                        r["notes"].append("error: %s" % type(e).__name__)
                reset_compiled(torch)
            text, md_rows = model_table(args, rows)
            with open(log.md_path, "w", encoding="utf-8") as f:  # partial results survive a timeout
                f.write("\n".join(md + md_rows) + "\n")
        text, md_rows = model_table(args, rows)
        summary = ["kiln/peer < 1 means kiln is faster. Peers: PyTorch fp16, %s attention; "
                   "compile = torch.compile(dynamic=False), compile-RO = mode=\"reduce-overhead\"." % args.peer_attn]
        measured = ["kiln"] + [k for k in ("eager", "compile", "compile_ro")
                               if args.peers == "all" or k in args.peers.split(",")]
        if args.tensor_parallel > 1:
            measured.append("tp")
        failed = [r for r in rows if r["result"] != "PASS" or
                  not all(math.isfinite(r.get(k, float("nan"))) for k in measured)]
    log()
    for line in text + [""] + summary:
        log(line)
    with open(log.md_path, "w", encoding="utf-8") as f:
        f.write("\n".join(md + md_rows + [""] + summary) + "\n")
    log()
    log("%s: %d rows, %d failed or incomplete; %.0f s; tables in %s" % (
        run, len(rows), len(failed), time.time() - log.t0, log.md_path))
    return EXIT_FAIL if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
