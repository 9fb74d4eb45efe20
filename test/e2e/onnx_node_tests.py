#!/usr/bin/env python3
"""kiln on the ONNX backend node tests (the generators in the onnx wheel, no data folder needed).

`onnx.backend.test.case.node.collect_testcases()` builds every node test in memory: a one-node (or
small) model, its inputs and the expected outputs. This script writes each to a folder, compiles it
with kiln-compile (shapes from the test's inputs) and reports how many compile and why the others
do not (the first line of kiln-compile's error, grouped into kinds). With a GPU (or --artifacts on
the GPU machine) it also runs every compiled test with kiln-run and checks each output with the
test's own numpy.allclose(rtol, atol).

  onnx_node_tests.py --compile-only DIR [--kiln-compile BIN] [-j N] [--filter REGEX]
  onnx_node_tests.py --artifacts DIR --kiln-run BIN          (run what --compile-only compiled)
  onnx_node_tests.py [--kiln-compile BIN] --kiln-run BIN     (both, on a GPU machine)

Prints the summary lines `node tests: T total, C compile (...)` and `node tests run: P passed, F
failed` and, with --json FILE, every test's outcome. Exit: 0 when every compiled test that ran
passed (a test kiln rejects with a clean error is not a failure; a crash, a hang or a wrong value
is), 1 otherwise, 2 usage, 77 no GPU for a run.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
COMPILE_TIMEOUT_S = 120
RUN_TIMEOUT_S = 120

# Rejection kinds, first match wins (pattern on kiln-compile's error text).
KINDS = [
    ("opset", r"opset \d+ of the default domain|is not in opset"),
    ("unsupported operator", r"unsupported operator"),
    ("dtype", r"data type|element type|unsupported: .* on (i|ui|f64)|cast to"),
    ("operand must be constant", r"must be a constant"),
    ("attribute", r"attribute '"),
    ("empty tensor", r"empty|zero-size|non-empty"),
    ("dynamic or symbolic shape", r"symbolic|dynamic|--shape"),
    ("codegen", r"no CUDA emitter|CUDA code generation"),
]


def kind_of(text):
    for kind, pattern in KINDS:
        if re.search(pattern, text):
            return kind
    return "other"


def first_error(text):
    for line in text.splitlines():
        if "error:" in line and "kiln-compile: error: failed to import" not in line:
            return line.split("error:", 1)[1].strip()[:200]
    return text.strip().splitlines()[-1][:200] if text.strip() else "(no output)"


def write_case(case, folder):
    """Saves the model and the first data set's inputs/outputs; returns (inputs, outputs) names."""
    import onnx
    os.makedirs(folder, exist_ok=True)
    onnx.save(case.model, os.path.join(folder, "model.onnx"))
    inputs, outputs = case.data_sets[0] if case.data_sets else ([], [])
    in_names = [i.name for i in case.model.graph.input]
    out_names = [o.name for o in case.model.graph.output]
    tensor_io = True
    for name, value in zip(in_names, inputs):
        try:
            np.save(os.path.join(folder, "in_%d.npy" % in_names.index(name)), np.require(np.asarray(value), requirements="C"))
        except (ValueError, TypeError):  # sequences, optionals, maps
            tensor_io = False
    for k, value in enumerate(outputs):
        try:
            np.save(os.path.join(folder, "ref_%d.npy" % k), np.require(np.asarray(value), requirements="C"))
        except (ValueError, TypeError):
            tensor_io = False
    if not tensor_io:
        inputs = []
    meta = dict(tensor_io=tensor_io,name=case.name, rtol=float(case.rtol), atol=float(case.atol), inputs=in_names,
                outputs=out_names,
                shapes={n: list(np.asarray(v).shape) for n, v in zip(in_names, inputs)} if tensor_io else {},
                ops=sorted({n.op_type for n in case.model.graph.node}),
                opset=max((o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx")),
                          default=0))
    with open(os.path.join(folder, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f)
    return meta


def compile_case(kiln_compile, folder, meta):
    if not meta.get("tensor_io", True):
        return dict(compiled=False, kind="non-tensor inputs/outputs",
                    error="sequence, optional or map values (kiln takes tensors)")
    shapes = ",".join("%s=%s" % (n, "x".join(map(str, s))) for n, s in meta["shapes"].items() if s)
    cmd = [kiln_compile, os.path.join(folder, "model.onnx"), "-o", os.path.join(folder, "model.kiln"),
           "-j", "1"]
    if shapes:
        cmd += ["--shape", shapes]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return dict(compiled=False, kind="hang", error="kiln-compile ran over %d s" % COMPILE_TIMEOUT_S)
    if r.returncode == 0:
        return dict(compiled=True)
    text = r.stderr + r.stdout
    if r.returncode < 0 or r.returncode not in (1, 2):  # a signal or an unexpected exit: a crash
        return dict(compiled=False, kind="crash", error="exit %d: %s" % (r.returncode, first_error(text)))
    return dict(compiled=False, kind=kind_of(text), error=first_error(text))


def as_float_if_bf16(a):
    """bfloat16 arrays (kiln-run writes them as 2-byte void, '|V2'; onnx's generators may use
    ml_dtypes.bfloat16) as float32; anything else unchanged."""
    if a.dtype.itemsize == 2 and (a.dtype.kind == "V" or a.dtype.name == "bfloat16"):
        return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a


def run_case(kiln_run, folder, meta):
    """kiln-run writes every output; each must satisfy the node test's own check,
    numpy.allclose(out, ref, rtol, atol) element by element (NaN matching NaN), with equal
    shapes and dtypes."""
    cmd = [kiln_run, os.path.join(folder, "model.kiln")]
    for i, name in enumerate(meta["inputs"]):
        cmd += ["--input", "%s=%s" % (name, os.path.join(folder, "in_%d.npy" % i))]
    outs = [os.path.join(folder, "out_%d.npy" % k) for k in range(len(meta["outputs"]))]
    for name, path in zip(meta["outputs"], outs):
        if os.path.exists(path):
            os.remove(path)  # a stale output must never pass
        cmd += ["--output", "%s=%s" % (name, path)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return dict(passed=False, detail="kiln-run ran over %d s" % RUN_TIMEOUT_S)
    if r.returncode != 0:
        lines = (r.stderr + r.stdout).strip().splitlines()
        return dict(passed=False, detail="kiln-run exit %d: %s" % (r.returncode, " | ".join(lines[-2:])[:300]))
    for k, (name, path) in enumerate(zip(meta["outputs"], outs)):
        out, ref = as_float_if_bf16(np.load(path)), as_float_if_bf16(np.load(os.path.join(folder, "ref_%d.npy" % k)))
        if out.shape != ref.shape or out.dtype != ref.dtype:
            return dict(passed=False, detail="%s: kiln %s %s, expected %s %s" % (
                name, out.dtype, out.shape, ref.dtype, ref.shape))
        if ref.dtype.kind in "fc":
            a, b = out.astype(np.float64), ref.astype(np.float64)
            ok = np.allclose(a, b, rtol=meta["rtol"], atol=meta["atol"], equal_nan=True)
            worst = float(np.nanmax(np.abs(a - b) - meta["rtol"] * np.abs(b), initial=0.0))
        else:
            ok, worst = bool(np.array_equal(out, ref)), 0.0
        if not ok:
            return dict(passed=False, detail="%s: not allclose(rtol=%g, atol=%g); worst |d| - rtol|ref| = %.3g" % (
                name, meta["rtol"], meta["atol"], worst))
    return dict(passed=True, detail="")


def has_gpu():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    except OSError:
        return False
    return "GPU" in out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln-compile", default=os.path.join(REPO, "build", "bin", "kiln-compile"))
    p.add_argument("--kiln-run", default=os.path.join(REPO, "build", "bin", "kiln-run"))
    p.add_argument("--compile-only", metavar="DIR", help="write and compile every test into DIR")
    p.add_argument("--artifacts", metavar="DIR", help="run the tests --compile-only compiled into DIR")
    p.add_argument("--work-dir", default="/tmp/kiln-node-tests", help="folder when compiling and running")
    p.add_argument("--filter", default="", help="only tests whose name matches this regex")
    p.add_argument("-j", type=int, default=os.cpu_count() or 2, help="parallel kiln-compile/kiln-run")
    p.add_argument("--json", metavar="FILE", help="write every test's outcome here")
    args = p.parse_args(argv)

    results = {}
    if args.artifacts:
        folder = args.artifacts
        with open(os.path.join(folder, "compile.json"), encoding="utf-8") as f:
            results = json.load(f)
    else:
        folder = args.compile_only or args.work_dir
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from onnx.backend.test.case.node import collect_testcases
            cases = [c for c in collect_testcases(None) if re.search(args.filter, c.name)]
        metas = {c.name: write_case(c, os.path.join(folder, c.name)) for c in cases}

        def job(name):
            return name, dict(meta=metas[name], **compile_case(args.kiln_compile, os.path.join(folder, name),
                                                                metas[name]))
        with ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
            results = dict(pool.map(job, sorted(metas)))
        with open(os.path.join(folder, "compile.json"), "w", encoding="utf-8") as f:
            json.dump(results, f)

    total = len(results)
    compiled = [n for n, r in results.items() if r["compiled"]]
    kinds = {}
    for n, r in results.items():
        if not r["compiled"]:
            kinds.setdefault(r["kind"], []).append(n)
    print("node tests: %d total, %d compile (%.0f%%)" % (total, len(compiled), 100.0 * len(compiled) / max(total, 1)))
    for kind, names in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        example = results[names[0]]["error"]
        print("  %-26s %4d  e.g. %s: %s" % (kind, len(names), names[0], example))
    failures = len(kinds.get("crash", [])) + len(kinds.get("hang", []))

    if not args.compile_only:
        if not has_gpu():
            print("SKIP run: no GPU (nvidia-smi -L found none)")
            return 77 if args.artifacts else (1 if failures else 0)

        def run(name):
            return name, run_case(args.kiln_run, os.path.join(folder, name), results[name]["meta"])
        with ThreadPoolExecutor(max_workers=max(1, min(args.j, 4))) as pool:
            runs = dict(pool.map(run, sorted(compiled)))
        for name, r in runs.items():
            results[name]["run"] = r
        bad = sorted(n for n, r in runs.items() if not r["passed"])
        print("node tests run: %d passed, %d failed" % (len(runs) - len(bad), len(bad)))
        for name in bad:
            print("  FAIL %s: %s" % (name, runs[name]["detail"]))
        failures += len(bad)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
