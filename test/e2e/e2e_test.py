#!/usr/bin/env python3
"""kiln end-to-end test: real exported transformer models on a GPU against onnxruntime.

For every model (GPT-2, BERT from two exporters, Llama) and every shape (batch 1 x seq 16 and
batch 2 x seq 128), the test draws fresh random token ids, computes the reference with onnxruntime
(CPU) on the same ONNX file and inputs, compiles the model with kiln-compile (or takes a precompiled
artifact), runs it with kiln-run and compares:

    max_rel_err = max|out - ref| / max|ref|      pass if <= 1e-4 (--tol)

BERT models are also run with a padded attention_mask (zeros at the tail of some rows) besides the
all-ones mask. Inputs are new every run; the seed is printed so that a failure can be replayed
with --seed.

Modes:
  (default)              compile here if needed, run on this machine's GPU. Without a GPU it prints
                         "SKIP: no GPU" and exits 77 (ctest's SKIP_RETURN_CODE).
  --compile-only OUTDIR  compile every artifact (<model>_<b>x<s>.kiln, incl. the 1x128 bench shape)
                         into OUTDIR; needs no GPU. Carry OUTDIR to the GPU machine.
  --artifacts DIR        run precompiled artifacts from DIR (the GPU machine has no compiler).
  --bench                also report kiln-run's latency p50/p90 at batch 1 x seq 128.

Tensor parallelism (either mode also runs the TP=1 artifact on the same inputs and adds a column
"vs TP=1" = max_rel_err(out, TP=1 out); a case passes only if both errors are within the tolerance):
  --tensor-parallel N    kiln-compile --tensor-parallel N (one artifact per rank,
                         <model>_<b>x<s>[_<p>]_tpN.rank<r>.kiln), run with
                         `kiln-run --tensor-parallel N` on N GPUs of this machine; with fewer GPUs
                         it prints "SKIP: --tensor-parallel N needs N GPUs, ..." and exits 77.
  --tp-loopback N        kiln-compile --tensor-parallel N --tp-loopback (all N shards in one
                         artifact, <model>_<b>x<s>[_<p>]_loopN.kiln, sums for the all-reduces),
                         run as an ordinary artifact on one GPU.
  A model whose heads / KV heads / MLP width do not allow N (kiln-compile: "... not divisible by",
  "... fewer than") is reported as "n/a (heads)" with the compiler's reason, not as a failure;
  --compile-only records it in <artifact>.na, which --artifacts reads. --compile-only also
  compiles the TP=1 artifacts that "vs TP=1" needs. The closing line per mode,
  `e2e <mode> <precision>: N passed, N failed, N n/a` (mode tp1, tpN or loopN), and one
  `e2e-model <mode> <precision> <model>: ...` line per model are made for tables
  (test/e2e/tp_correctness.sh collects them).

Exit codes: 0 all passed (n/a included), 1 a failure, 2 usage or setup error, 77 skipped (no GPU,
or fewer GPUs than --tensor-parallel N).
Models come from --models-dir, else $KILN_MODELS_DIR, else <repo>/../shared/models; GPT-2 falls
back to the shipped examples/models/gpt2_tiny.onnx; missing models are skipped with a message.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["gpt2_tiny_dynamo", "bert_tiny_dynamo", "bert_tiny_legacy", "llama_tiny_dynamo"]
# Shipped copies of shared models, used when the shared folder lacks them.
SHIPPED = {"gpt2_tiny_dynamo": os.path.join(REPO, "examples", "models", "gpt2_tiny.onnx")}
SHAPES = [(1, 16), (2, 128)]
BENCH_SHAPE = (1, 128)
VOCAB = 1000  # token ids must be < 1000 for the shared models
EXIT_FAIL, EXIT_USAGE, EXIT_SKIP = 1, 2, 77
RUN_TIMEOUT_S = 600


def log(msg=""):
    print(msg, flush=True)


def gpu_count():
    """GPUs that `nvidia-smi -L` lists (0 when it is missing or fails), capped by the number of
    entries in CUDA_VISIBLE_DEVICES when that is set."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    try:
        res = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return 0
    if res.returncode != 0:
        return 0
    count = sum(1 for line in res.stdout.splitlines() if line.startswith("GPU"))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        count = min(count, len([d for d in visible.split(",") if d.strip()]))
    return count


def has_gpu():
    """True when `nvidia-smi -L` succeeds and lists a GPU."""
    return gpu_count() > 0


def default_models_dir():
    return os.environ.get("KILN_MODELS_DIR") or os.path.join(REPO, "..", "shared", "models")


def find_model(models_dir, name):
    """Path of `name`.onnx in models_dir, or the shipped copy, or None."""
    path = os.path.join(models_dir, name + ".onnx")
    if os.path.isfile(path):
        return os.path.abspath(path)
    shipped = SHIPPED.get(name)
    if shipped and os.path.isfile(shipped):
        return os.path.abspath(shipped)
    return None


def model_input_names(path):
    """Graph inputs that are not initializers, in graph order."""
    try:
        import onnx

        graph = onnx.load(path, load_external_data=False).graph
        inits = {i.name for i in graph.initializer}
        return [i.name for i in graph.input if i.name not in inits]
    except ImportError:
        import onnxruntime as ort

        return [i.name for i in ort.InferenceSession(path, providers=["CPUExecutionProvider"]).get_inputs()]


# max|err| / max|ref| allowed against the fp32 onnxruntime reference, per --precision.
TOLERANCE = {"fp32": 1e-4, "tf32": 2e-3, "fp16": 1e-2, "bf16": 3e-2,
             # the model itself rewritten as an fp16 export (test/e2e/to_fp16.py), compiled as is
             "fp16-model": 1e-2}


def artifact_name(model, b, s, precision="fp32", mode="tp1"):
    """<model>_<b>x<s>[_<precision>][_<mode>].kiln; mode tp1 (plain), tpN (the base name of the
    rank artifacts, see rank_paths) or loopN (one artifact)."""
    suffix = "" if precision == "fp32" else "_" + precision
    suffix += "" if mode == "tp1" else "_" + mode
    return "%s_%dx%d%s.kiln" % (model, b, s, suffix)


def rank_paths(base, tp):
    """The files kiln-compile --tensor-parallel N -o BASE writes: BASE.rank<r>.kiln (the .kiln of
    BASE dropped); [base] itself when tp is 1."""
    if tp <= 1:
        return [base]
    stem = base[:-len(".kiln")] if base.endswith(".kiln") else base
    return ["%s.rank%d.kiln" % (stem, r) for r in range(tp)]


# kiln-compile's messages for a model whose heads / KV heads / MLP width do not allow the tp-size.
HEADS_RE = re.compile(r"not divisible by|are fewer than")


def heads_reason(text):
    """The compiler's one-line reason when it refused the tp-size for the model's head counts."""
    for line in text.splitlines():
        if HEADS_RE.search(line):
            return line.split("unsupported: ", 1)[-1].strip()
    return None


def fp16_model(model_path, out_dir):
    """The model rewritten as an fp16 export next to the artifacts (made once)."""
    out = os.path.join(out_dir, os.path.basename(model_path)[:-len(".onnx")] + "_fp16model.onnx")
    if not os.path.isfile(out):
        os.makedirs(out_dir, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "to_fp16.py"), model_path, out], check=True)
    return out


def compile_model(kiln_compile, model_path, inputs, b, s, out_path, target, precision="fp32",
                  tp=1, loopback=False, extra=()):
    """Runs kiln-compile; returns (ok, summary dict, output text). Precision "fp16-model"
    compiles the model rewritten as an fp16 export, with no --precision. tp > 1 adds
    --tensor-parallel tp (and --tp-loopback): ok needs every rank file (or the one loopback file).
    `extra`: more kiln-compile flags (--compile-flag)."""
    shape = ",".join("%s=%dx%d" % (name, b, s) for name in inputs)
    if precision == "fp16-model":
        model_path = fp16_model(model_path, os.path.dirname(out_path))
        precision = "fp32"
    cmd = [kiln_compile, model_path, "-o", out_path, "--shape", shape, "--precision", precision]
    if target:
        cmd += ["--target", target]
    if tp > 1:
        cmd += ["--tensor-parallel", str(tp)] + (["--tp-loopback"] if loopback else [])
    cmd += list(extra)
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    files = rank_paths(out_path, 1 if loopback else tp)
    for f in files:
        if os.path.exists(f):
            os.remove(f)  # a stale artifact must never stand in for a failed compile
    start = time.time()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, {}, "timeout after %d s: %s" % (RUN_TIMEOUT_S, " ".join(cmd))
    text = res.stdout + res.stderr
    summary = {"wall_s": time.time() - start}
    m = re.search(r"kernels:\s*(\d+)", res.stdout)
    if m:
        summary["kernels"] = int(m.group(1))
    m = re.search(r"arena bytes:\s*(\d+)", res.stdout)
    if m:
        summary["arena"] = int(m.group(1))
    ok = res.returncode == 0 and all(os.path.isfile(f) for f in files)
    return ok, summary, "$ " + " ".join(cmd) + "\n" + text


def make_inputs(rng, inputs, b, s, padded):
    """Random token ids (and attention_mask: all ones, or zeros at the tail of some rows)."""
    feeds = {}
    for name in inputs:
        if name == "attention_mask":
            mask = np.ones((b, s), dtype=np.int64)
            if padded:
                # Batch 1: pad the only row. Batch > 1: keep row 0 full, pad every other row.
                rows = [0] if b == 1 else list(range(1, b))
                for r in rows:
                    valid = int(rng.integers(max(2, s // 4), s))  # < s, so at least one zero
                    mask[r, valid:] = 0
            feeds[name] = mask
        elif name == "input_ids":
            feeds[name] = rng.integers(0, VOCAB, size=(b, s), dtype=np.int64)
        else:
            raise RuntimeError("e2e: unexpected model input '%s' (only input_ids, attention_mask)" % name)
    return feeds


def max_rel_err(out, ref):
    """max|out - ref| / max|ref| in float64; inf on NaN or shape mismatch."""
    if out.shape != ref.shape:
        return float("inf")
    out64, ref64 = out.astype(np.float64), ref.astype(np.float64)
    if not np.all(np.isfinite(out64)):
        return float("inf")
    denom = float(np.max(np.abs(ref64))) or 1.0
    return float(np.max(np.abs(out64 - ref64))) / denom


def run_kiln(kiln_run, artifact, input_files, output_files, compare_files, tol, extra=(), tp=1):
    """kiln-run (with --tensor-parallel tp when tp > 1: artifact is the base name of the rank
    files); returns (exit status, command line and output)."""
    cmd = [kiln_run] + (["--tensor-parallel", str(tp)] if tp > 1 else []) + [artifact]
    for name, path in input_files.items():
        cmd += ["--input", "%s=%s" % (name, path)]
    for name, path in output_files.items():
        cmd += ["--output", "%s=%s" % (name, path)]
    for name, path in compare_files.items():
        cmd += ["--compare", "%s=%s" % (name, path)]
    if compare_files:
        cmd += ["--rtol", repr(tol), "--atol", "0"]
    cmd += list(extra)
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 124, "timeout after %d s: %s" % (RUN_TIMEOUT_S, " ".join(cmd))
    return res.returncode, "$ " + " ".join(cmd) + "\n" + res.stdout + res.stderr


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models-dir", default=default_models_dir(), help="folder with the shared .onnx models")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated model names (default: all)")
    p.add_argument("--shapes", default=",".join("%dx%d" % s for s in SHAPES), help="comma-separated BxS")
    p.add_argument("--kiln-compile", default=os.path.join(REPO, "build", "bin", "kiln-compile"))
    p.add_argument("--kiln-run", default=os.path.join(REPO, "build", "bin", "kiln-run"))
    p.add_argument("--artifacts", metavar="DIR", help="use precompiled <model>_<b>x<s>[_<p>][_tpN|_loopN].kiln from DIR")
    p.add_argument("--compile-only", metavar="OUTDIR", help="only compile all artifacts into OUTDIR")
    p.add_argument("--target", default="sm_90", help="kiln-compile --target (default sm_90)")
    p.add_argument("--seed", type=int, help="replay the random inputs of an earlier run")
    p.add_argument("--compile-flag", action="append", default=[], metavar="FLAG",
                   help="one more kiln-compile flag, e.g. --compile-flag=--hopper-attention "
                        "(repeatable)")
    p.add_argument("--precision", default="fp32", choices=sorted(TOLERANCE),
                   help="kiln-compile --precision (default fp32); artifacts <model>_<b>x<s>_<p>.kiln")
    p.add_argument("--tol", type=float,
                   help="max relative error allowed (default per precision: %s)" %
                        ", ".join("%s %.0e" % kv for kv in TOLERANCE.items()))
    p.add_argument("--tensor-parallel", type=int, default=1, metavar="N",
                   help="shard over N GPUs: rank artifacts <...>_tpN.rank<r>.kiln, run with "
                        "kiln-run --tensor-parallel N (needs N GPUs), also compared with TP=1")
    p.add_argument("--tp-loopback", type=int, metavar="N",
                   help="all N shards in one artifact <...>_loopN.kiln on one GPU, also compared with TP=1")
    p.add_argument("--bench", action="store_true", help="also report kiln-run latency at 1x128")
    p.add_argument("--bench-iters", type=int, default=200)
    p.add_argument("--work-dir", help="folder for inputs/outputs (default: a new temporary folder)")
    p.add_argument("--require-models", action="store_true",
                   help="a model that is not found is a failure (exit 1), not a SKIP")
    args = p.parse_args(argv)
    if args.tol is None:
        args.tol = TOLERANCE[args.precision]
    try:
        args.shapes = [tuple(int(v) for v in t.lower().split("x")) for t in args.shapes.split(",") if t]
        assert all(len(t) == 2 for t in args.shapes)
    except (ValueError, AssertionError):
        p.error("--shapes expects BxS[,BxS...], e.g. 1x16,2x128")
    args.models = [m for m in args.models.split(",") if m]
    if args.artifacts and args.compile_only:
        p.error("--artifacts and --compile-only exclude each other")
    if args.tensor_parallel < 1:
        p.error("--tensor-parallel expects N >= 1")
    if args.tp_loopback is not None:
        if args.tensor_parallel != 1:
            p.error("--tensor-parallel and --tp-loopback exclude each other")
        if args.tp_loopback < 2:
            p.error("--tp-loopback expects N >= 2")
    # tp: the shard count; loopback: all shards in one artifact; run_tp: kiln-run --tensor-parallel.
    args.loopback = args.tp_loopback is not None
    args.tp = args.tp_loopback if args.loopback else args.tensor_parallel
    args.run_tp = 1 if args.loopback else args.tp
    args.mode = ("loop%d" % args.tp) if args.loopback else ("tp%d" % args.tp)
    return args


def available_models(args):
    """[(name, path, input names)] for the models found; prints a SKIP line for the others."""
    found = []
    args.missing = []
    for name in args.models:
        path = find_model(args.models_dir, name)
        if not path:
            log("%s %s: not found in %s (KILN_MODELS_DIR)" % (
                "MISSING" if args.require_models else "SKIP", name, os.path.abspath(args.models_dir)))
            args.missing.append(name)
            continue
        found.append((name, path, model_input_names(path)))
    return found


def compile_only(args, models):
    shapes = list(dict.fromkeys(args.shapes + [BENCH_SHAPE]))
    if not os.access(args.kiln_compile, os.X_OK):
        log("ERROR: kiln-compile not found at %s (build it with scripts/build.sh)" % args.kiln_compile)
        return EXIT_USAGE
    compiled, failures, na = 0, 0, 0
    log("%-20s %-8s %-6s %-8s %-12s %s" % ("model", "shape", "mode", "kernels", "arena bytes", "result"))

    def one(name, path, inputs, b, s, mode, tp, loopback):
        """Compiles one artifact (set); returns "ok", "n/a" or "FAIL"."""
        nonlocal compiled, failures, na
        out = os.path.join(args.compile_only, artifact_name(name, b, s, args.precision, mode))
        if os.path.exists(out + ".na"):
            os.remove(out + ".na")
        ok, summary, text = compile_model(args.kiln_compile, path, inputs, b, s, out, args.target,
                                          args.precision, tp, loopback, args.compile_flag)
        reason = None if ok or tp == 1 else heads_reason(text)
        result = "ok" if ok else ("n/a (heads): " + reason) if reason else "FAIL"
        log("%-20s %-8s %-6s %-8s %-12s %s" % (name, "%dx%d" % (b, s), mode, summary.get("kernels", "?"),
                                                summary.get("arena", "?"), result))
        if ok:
            compiled += 1
            return "ok"
        if reason:
            na += 1
            with open(out + ".na", "w") as f:  # --artifacts reads it: n/a, not a missing artifact
                f.write(reason + "\n")
            return "n/a"
        failures += 1
        log(text)
        return "FAIL"

    for name, path, inputs in models:
        for b, s in shapes:
            res = one(name, path, inputs, b, s, args.mode, args.tp, args.loopback)
            if res == "ok" and args.tp > 1 and (b, s) in args.shapes:
                # the TP=1 artifact that "vs TP=1" compares with
                one(name, path, inputs, b, s, "tp1", 1, False)
    log("compile-only: %d artifacts in %s, %d failed%s" % (
        compiled, args.compile_only, failures, ", %d n/a (heads)" % na if args.tp > 1 else ""))
    log("compile-only %s %s: %d compiled, %d failed, %d n/a" % (args.mode, args.precision, compiled,
                                                                failures, na))
    return EXIT_FAIL if failures else 0


def fmt_err(v):
    return "-" if v != v else "%.3e" % v  # NaN: not measured


def main(argv):
    args = parse_args(argv)
    models = available_models(args)
    if args.compile_only:
        return compile_only(args, models)

    mode_line = "e2e %s %s" % (args.mode, args.precision)
    if not has_gpu():
        log("SKIP: no GPU (nvidia-smi -L found none); the e2e tests need an NVIDIA GPU. "
            "See docs/gpu.md to run them on a GPU machine.")
        log("%s: skipped (no GPU)" % mode_line)
        return EXIT_SKIP
    if args.run_tp > 1:
        gpus = gpu_count()
        if gpus < args.run_tp:
            log("SKIP: --tensor-parallel %d needs %d GPUs, this machine has %d" % (args.run_tp, args.run_tp, gpus))
            log("%s: skipped (needs %d GPUs, this machine has %d)" % (mode_line, args.run_tp, gpus))
            return EXIT_SKIP
    if not os.access(args.kiln_run, os.X_OK):
        log("ERROR: kiln-run not found at %s" % args.kiln_run)
        return EXIT_USAGE
    if not args.artifacts and not os.access(args.kiln_compile, os.X_OK):
        log("ERROR: kiln-compile not found at %s; build it or pass --artifacts DIR" % args.kiln_compile)
        return EXIT_USAGE
    if not models:
        log("ERROR: no model found in %s" % os.path.abspath(args.models_dir))
        return EXIT_USAGE

    import onnxruntime as ort

    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    log("seed: %d (replay with --seed %d)" % (seed, seed))
    log("onnxruntime %s, numpy %s, precision %s, tolerance %.1e, mode %s" % (
        ort.__version__, np.__version__, args.precision, args.tol, args.mode))
    work = args.work_dir or tempfile.mkdtemp(prefix="kiln-e2e-")
    os.makedirs(work, exist_ok=True)
    art_dir = args.artifacts or os.path.join(work, "artifacts")
    tp_mode = args.tp > 1

    made = {}

    def artifact_for(name, path, inputs, b, s, reference=False):
        """(artifact path, error text or None, n/a reason or None) for this mode's artifact, or the
        TP=1 one with reference=True; compiles into the work dir unless --artifacts."""
        key = (name, b, s, reference)
        if key in made:
            return made[key]
        mode, tp, loopback = ("tp1", 1, False) if reference else (args.mode, args.tp, args.loopback)
        art = os.path.join(art_dir, artifact_name(name, b, s, args.precision, mode))
        files = rank_paths(art, 1 if loopback else tp)
        missing = [f for f in files if not os.path.isfile(f)]
        res = (art, None, None)
        if args.artifacts:
            if missing and tp > 1 and os.path.isfile(art + ".na"):
                with open(art + ".na") as f:
                    res = (art, None, f.read().strip() or "n/a")
            elif missing:
                res = (art, "missing artifact %s" % ", ".join(missing), None)
        elif missing:
            ok, _, text = compile_model(args.kiln_compile, path, inputs, b, s, art, args.target,
                                        args.precision, tp, loopback, args.compile_flag)
            reason = None if ok or tp == 1 else heads_reason(text)
            if reason:
                res = (art, None, reason)
            elif not ok:
                res = (art, "kiln-compile failed:\n" + text, None)
        made[key] = res
        return res

    def run_outputs(art, files_in, out_names, case, tag, tp):
        """Runs art with no comparison; returns ({output: array or None}, exit status, text)."""
        files = {k: os.path.join(work, "%s.%s.out.%s.npy" % (case, tag, k)) for k in out_names}
        for f in files.values():
            if os.path.exists(f):
                os.remove(f)
        rc, text = run_kiln(args.kiln_run, art, files_in, files, {}, args.tol, tp=tp)
        return {k: np.load(f) if os.path.isfile(f) else None for k, f in files.items()}, rc, text

    rows, failures = [], 0
    na_reasons = {}
    for name, path, inputs in models:
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        out_names = [o.name for o in sess.get_outputs()]
        masks = ["ones", "padded"] if "attention_mask" in inputs else ["-"]
        for b, s in args.shapes:
            art, err, na = artifact_for(name, path, inputs, b, s)
            ref_art, ref_err = None, None
            if na:
                na_reasons.setdefault(name, na)
                log("N/A %s %dx%d %s: %s" % (name, b, s, args.mode, na))
            elif tp_mode and not err:
                ref_art, ref_err, _ = artifact_for(name, path, inputs, b, s, reference=True)
            for mask_kind in masks:
                case = "%s_%dx%d_%s" % (name, b, s, mask_kind.strip("-") or "ids")
                row = {"model": name, "shape": "%dx%d" % (b, s), "mask": mask_kind,
                       "err": float("nan"), "vs": float("nan"), "tool": "", "result": "FAIL"}
                rows.append(row)
                if na:
                    row["result"] = "n/a (heads)"
                    continue
                if err:
                    failures += 1
                    row["tool"] = "no artifact"
                    log("FAIL %s: %s" % (case, err))
                    continue
                rng = np.random.default_rng([seed, zlib.crc32(name.encode()), b, s, masks.index(mask_kind)])
                feeds = make_inputs(rng, inputs, b, s, mask_kind == "padded")
                refs = dict(zip(out_names, sess.run(out_names, feeds)))
                files_in, files_out, files_ref = {}, {}, {}
                for k, v in feeds.items():
                    files_in[k] = os.path.join(work, "%s.in.%s.npy" % (case, k))
                    np.save(files_in[k], v)
                for k, v in refs.items():
                    files_ref[k] = os.path.join(work, "%s.ref.%s.npy" % (case, k))
                    files_out[k] = os.path.join(work, "%s.out.%s.npy" % (case, k))
                    np.save(files_ref[k], v)
                    if os.path.exists(files_out[k]):
                        os.remove(files_out[k])  # a stale output must never pass
                rc, text = run_kiln(args.kiln_run, art, files_in, files_out, files_ref, args.tol,
                                    tp=args.run_tp)
                tool_errs = dict(re.findall(r"compare (\S+):.*?max_rel_err=(\S+)", text))
                row["tool"] = ",".join(tool_errs.values()) or ("rc=%d" % rc)
                outs = {k: np.load(files_out[k]) if os.path.isfile(files_out[k]) else None for k in out_names}
                row["err"] = max(float("inf") if outs[k] is None else max_rel_err(outs[k], refs[k])
                                 for k in out_names)
                ok = rc == 0 and row["err"] <= args.tol
                why = "kiln-run exit %d, max_rel_err %.3e" % (rc, row["err"])
                if tp_mode:
                    # the same inputs through the TP=1 artifact: max_rel_err(out, TP=1 out)
                    ref_text = ""
                    if ref_err:
                        row["vs"] = float("inf")
                        ref_text = "TP=1 artifact: " + ref_err
                    else:
                        tp1, ref_rc, ref_text = run_outputs(ref_art, files_in, out_names, case, "tp1", 1)
                        row["vs"] = max(float("inf") if outs[k] is None or tp1[k] is None
                                        else max_rel_err(outs[k], tp1[k]) for k in out_names)
                        if ref_rc != 0:
                            row["vs"] = float("inf")
                    ok = ok and row["vs"] <= args.tol
                    why += ", vs TP=1 %.3e" % row["vs"]
                    if not row["vs"] <= args.tol:
                        text += "\n" + ref_text
                if ok:
                    row["result"] = "pass"
                else:
                    failures += 1
                    log("FAIL %s %s (%s):\n%s" % (args.mode, case, why, text))

    log()
    vs_head = " %-11s" % "vs TP=1" if tp_mode else ""
    log("%-20s %-8s %-7s %-13s%s %-13s %s" % ("model", "shape", "mask", "max_rel_err", vs_head,
                                              "kiln-run says", "result"))
    last = None
    for r in rows:
        if last and last != r["model"]:
            log()
        last = r["model"]
        vs = " %-11s" % fmt_err(r["vs"]) if tp_mode else ""
        log("%-20s %-8s %-7s %-13s%s %-13s %s" % (r["model"], r["shape"], r["mask"], fmt_err(r["err"]), vs,
                                                  r["tool"], r["result"]))
    if na_reasons:
        log()
        for name, reason in na_reasons.items():
            log("n/a (heads) %s: %s" % (name, reason))

    if args.bench:
        log()
        log("latency at %dx%d (kiln-run --bench %d, %s):" % (BENCH_SHAPE + (args.bench_iters, args.mode)))
        b, s = BENCH_SHAPE
        for name, path, inputs in models:
            art, err, na = artifact_for(name, path, inputs, b, s)
            if na:
                log("  %-20s n/a (heads): %s" % (name, na))
                continue
            if err:
                failures += 1
                log("  %-20s FAIL: %s" % (name, err))
                continue
            rng = np.random.default_rng([seed, zlib.crc32(name.encode()), b, s, 99])
            files_in = {}
            for k, v in make_inputs(rng, inputs, b, s, False).items():
                files_in[k] = os.path.join(work, "bench_%s.in.%s.npy" % (name, k))
                np.save(files_in[k], v)
            rc, text = run_kiln(args.kiln_run, art, files_in, {}, {}, args.tol,
                                ["--bench", str(args.bench_iters)], tp=args.run_tp)
            m = re.search(r"latency_ms p50=(\S+) p90=(\S+)", text)
            if rc != 0 or not m:
                failures += 1
                log("  %-20s FAIL (exit %d):\n%s" % (name, rc, text))
            else:
                log("  %-20s p50 %s ms  p90 %s ms" % (name, m.group(1), m.group(2)))

    passed = sum(r["result"] == "pass" for r in rows)
    na_rows = sum(r["result"].startswith("n/a") for r in rows)
    log()
    # One line per model, for tables (test/e2e/tp_correctness.sh): worst errors over its cases.
    for name in args.models:
        mine = [r for r in rows if r["model"] == name]
        if name in args.missing:
            log("e2e-model %s %s %s: missing" % (args.mode, args.precision, name))
            continue

        def worst(key):
            return max((r[key] for r in mine if r[key] == r[key]), default=float("nan"))
        log("e2e-model %s %s %s: %d passed, %d failed, %d n/a, max_rel_err %s, vs TP=1 %s" % (
            args.mode, args.precision, name, sum(r["result"] == "pass" for r in mine),
            sum(r["result"] == "FAIL" for r in mine), sum(r["result"].startswith("n/a") for r in mine),
            fmt_err(worst("err")), fmt_err(worst("vs"))))
    log("seed: %d" % seed)
    missing = len(args.missing)
    log("e2e: %d passed, %d failed, %d models %s" % (
        passed, failures, missing, "missing (required)" if args.require_models else "skipped"))
    log("%s: %d passed, %d failed, %d n/a" % (mode_line, passed, failures, na_rows))
    return EXIT_FAIL if failures or (missing and args.require_models) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
