#!/usr/bin/env python3
"""kiln on the ONNX backend node tests: the conformance suite, generated from the installed onnx wheel.

`onnx.backend.test.case.node.collect_testcases()` builds every node test in memory (a one-node or
small model, its inputs and the expected outputs; the wheel ships no data folder). This script

1. selects the tests in kiln's scope: every node of the test's graph is an op of SCOPE_OPS (the
   transformer op set of the design notes plus the further ops kiln's importer supports; `--all`
   takes every test, for the full report);
2. makes parameter operands constant where kiln needs constants: a graph input that feeds a
   parameter operand (PARAMETER_OPERANDS: Reshape/Expand shape, Squeeze/Unsqueeze/Reduce* axes,
   Slice starts/ends/axes/steps, Split split, Tile repeats, Trilu k, Range start/limit/delta, CumSum
   axis, ...) becomes an initializer holding the test's own value and leaves the graph inputs (and
   the inputs given at run time); each such test records `constantized: [names]`;
3. writes each test's model, inputs and expected outputs to a folder and compiles it with
   kiln-compile (shapes from the test's inputs); a clean rejection is grouped by kind (opset,
   unsupported operator, dtype, ...), a crash (a signal or an unexpected exit status) or a hang is a
   failure;
4. with a GPU (or --artifacts on the GPU machine) runs every compiled test with kiln-run and checks
   each output: equal shape and dtype; integers and bools exactly; floats elementwise
   numpy.allclose(rtol=1e-3, atol=1e-4, equal_nan=True) (so NaN positions must match). Whether the
   test's own rtol/atol also holds is reported beside it (`own tolerance`), not required;
5. with --expected FILE compares the in-scope compile results with the checked-in list (test name
   -> "compiles" or the rejection kind): a test expected to compile that is now rejected, crashes
   or hangs fails; a test that now compiles but was expected to be rejected is reported as newly
   compiling (not a failure); --update-expected rewrites FILE from this run.

  onnx_node_tests.py --compile-only DIR --expected [-j N]     (CI: the compile half vs the list)
  onnx_node_tests.py --compile-only DIR --update-expected     (rewrite test/e2e/onnx_node_expected.json)
  onnx_node_tests.py --compile-only DIR --all [-j N]          (every test, e.g. for a GPU run)
  onnx_node_tests.py --artifacts DIR [--kiln-run BIN]         (on the GPU machine: run what was compiled)
  onnx_node_tests.py [--all] [--kiln-compile BIN] [--kiln-run BIN]   (both, on one GPU machine)

Prints `node tests: T total, S in scope` and, for each selection, `C compile (...)` with the
rejection kinds; after a run `node tests run (...): P passed, F failed (own tolerance: ...)`; with
--json FILE every test's outcome. Exit: 0 when nothing failed, 1 a failure (a crash, a hang, a wrong
value, a test expected to compile that does not), 2 usage, 77 skipped (the onnx wheel is not
importable, or a run without a GPU after --artifacts).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

try:
    import numpy as np
except ImportError as _e:  # no numpy: no onnx either; skipped, like a missing onnx wheel
    print("SKIP: numpy is not importable (%s)" % _e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
EXPECTED_DEFAULT = os.path.join(HERE, "onnx_node_expected.json")
COMPILE_TIMEOUT_S = 120
RUN_TIMEOUT_S = 120

# The comparison of a run (item 3 of the conformance issue): floats elementwise within these,
# integers and bools exactly.
RTOL, ATOL = 1e-3, 1e-4

# ---- the scope: the one place that says which node tests are kiln's ----------------------------
# A test is in scope when every node of its graph is one of these ops (default ONNX domain).
# TRANSFORMER_OP_SET is the "Transformer op set" of the design notes (docs: import and conformance
# scope); KILN_EXTRA_OPS are the further ops kiln's ONNX importer supports. When the importer gains
# an op, add it here and regenerate the expected list (--update-expected).
TRANSFORMER_OP_SET = frozenset("""
    MatMul Gemm Add Sub Mul Div Pow Sqrt Reciprocal Neg Exp Log Tanh Erf Sigmoid Relu Gelu Softmax
    LayerNormalization RMSNormalization ReduceMean ReduceSum ReduceMax Cast Where Equal Less
    LessOrEqual Greater GreaterOrEqual And Or Not IsNaN Max Min Clip Gather GatherElements GatherND
    Reshape Transpose Concat Split Slice Squeeze Unsqueeze Expand Flatten Shape Size Range CumSum
    ConstantOfShape Constant Identity Trilu Einsum Attention RotaryEmbedding""".split())
KILN_EXTRA_OPS = frozenset("""
    Abs ArgMax ArgMin CastLike Celu Cos Dropout Elu HardSigmoid HardSwish LeakyRelu LogSoftmax Mish
    Mod PRelu ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMin ReduceSumSquare Selu Sign Sin
    Pad Softplus Softsign TensorScatter ThresholdedRelu Tile Xor""".split())
SCOPE_OPS = TRANSFORMER_OP_SET | KILN_EXTRA_OPS

# Parameter operands (ONNX input positions): values that fix an output shape, an axis or a mode,
# which kiln takes only as constants. A graph input feeding one of these is made an initializer
# with the test's value. Clip's min/max are not here: kiln takes them as runtime scalars.
_REDUCE_OPS = ("ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd ReduceSumSquare ReduceL1 "
               "ReduceL2 ReduceLogSum ReduceLogSumExp").split()
PARAMETER_OPERANDS = dict(
    {op: (1,) for op in _REDUCE_OPS},
    Reshape=(1,), Expand=(1,), Squeeze=(1,), Unsqueeze=(1,), Slice=(1, 2, 3, 4), Split=(1,),
    Tile=(1,), TopK=(1,), Trilu=(1,), Range=(0, 1, 2), CumSum=(1,), ConstantOfShape=(0,),
    Dropout=(1, 2), Pad=(1, 3), OneHot=(1,), Resize=(1, 2, 3), Upsample=(1,), CenterCropPad=(1,))

# Rejection kinds, first match wins (pattern on kiln-compile's error text).
KINDS = [
    ("opset", r"opset \d+ of the default domain|is not in opset|does not import the default ONNX opset"),
    ("unsupported operator", r"unsupported operator"),
    ("dtype", r"data type|element type|unsupported: .* on (i|ui|f64)|cast to|bool reduction"),
    ("operand must be constant", r"must be a constant"),
    ("attribute", r"attribute '"),
    ("empty tensor", r"empty|zero-size|non-empty"),
    ("dynamic or symbolic shape", r"symbolic|dynamic|--shape"),
    ("codegen", r"no CUDA emitter|CUDA code generation"),
    ("non-tensor inputs/outputs", r"only tensor inputs"),
    ("unsupported mode or feature", r"unsupported:"),
]
FAILURE_KINDS = ("crash", "hang")
MAX_NOTES = 20  # notes (not failures) printed per check; the rest are counted


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


def in_scope(model):
    """Every node of the graph is a default-domain op of SCOPE_OPS."""
    nodes = model.graph.node
    return bool(nodes) and all(n.domain in ("", "ai.onnx") and n.op_type in SCOPE_OPS for n in nodes)


def constantize(model, values):
    """Graph inputs feeding a PARAMETER_OPERANDS operand become initializers holding `values`
    (the test's data, in graph-input order). Returns (model, remaining values, names made constant);
    the model is a copy when something changed."""
    import onnx
    from onnx import helper, numpy_helper
    names = [i.name for i in model.graph.input]
    value_of = dict(zip(names, values))
    chosen = []
    for node in model.graph.node:
        for k in PARAMETER_OPERANDS.get(node.op_type, ()) if node.domain in ("", "ai.onnx") else ():
            if k < len(node.input) and node.input[k] in value_of and node.input[k] not in chosen:
                chosen.append(node.input[k])
    if not chosen:
        return model, list(values), []
    out = onnx.ModelProto()
    out.CopyFrom(model)
    declared = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    for name in chosen:
        value = as_array(value_of[name])
        if declared.get(name):
            value = value.astype(helper.tensor_dtype_to_np_dtype(declared[name]), copy=False)
        out.graph.initializer.append(numpy_helper.from_array(value, name))
    kept = [i for i in model.graph.input if i.name not in chosen]
    del out.graph.input[:]
    out.graph.input.extend(kept)
    if out.ir_version < 4:  # before IR 4 every initializer also had to be a graph input
        out.ir_version = 4
    return out, [value_of[i.name] for i in kept if i.name in value_of], chosen


def as_array(value):
    """A data-set value as a numpy array: the generators give most as arrays, some (the Cast
    tests of 16-bit and 8-bit floats) as TensorProto."""
    from onnx import TensorProto, numpy_helper
    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    return np.asarray(value)


def write_case(case, folder, scoped):
    """Saves the (constantized) model and the first data set's inputs/outputs; returns the meta."""
    import onnx
    os.makedirs(folder, exist_ok=True)
    inputs, outputs = case.data_sets[0] if case.data_sets else ([], [])
    model, inputs, constant = constantize(case.model, list(inputs))
    onnx.save(model, os.path.join(folder, "model.onnx"))
    in_names = [i.name for i in model.graph.input]
    out_names = [o.name for o in model.graph.output]
    tensor_io = True
    for k, value in enumerate(inputs):
        try:
            np.save(os.path.join(folder, "in_%d.npy" % k), np.require(as_array(value), requirements="C"))
        except (ValueError, TypeError):  # sequences, optionals, maps
            tensor_io = False
    for k, value in enumerate(outputs):
        try:
            np.save(os.path.join(folder, "ref_%d.npy" % k), np.require(as_array(value), requirements="C"))
        except (ValueError, TypeError):
            tensor_io = False
    if not tensor_io:
        inputs = []
    meta = dict(tensor_io=tensor_io, name=case.name, rtol=float(case.rtol), atol=float(case.atol),
                inputs=in_names, outputs=out_names, in_scope=scoped, constantized=constant,
                shapes={n: list(as_array(v).shape) for n, v in zip(in_names, inputs)} if tensor_io else {},
                ops=sorted({n.op_type for n in model.graph.node}),
                opset=max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                          default=0))
    with open(os.path.join(folder, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f)
    return meta


def compile_case(kiln_compile, folder, meta):
    artifact = os.path.join(folder, "model.kiln")
    if os.path.exists(artifact):
        os.remove(artifact)  # a stale artifact must never run
    if not meta.get("tensor_io", True):
        return dict(compiled=False, kind="non-tensor inputs/outputs",
                    error="sequence, optional or map values (kiln takes tensors)")
    shapes = ",".join("%s=%s" % (n, "x".join(map(str, s))) for n, s in meta["shapes"].items() if s)
    cmd = [kiln_compile, os.path.join(folder, "model.onnx"), "-o", artifact, "-j", "1"]
    if shapes:
        cmd += ["--shape", shapes]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return dict(compiled=False, kind="hang", error="kiln-compile ran over %d s" % COMPILE_TIMEOUT_S)
    except OSError as e:  # the binary vanished mid-run (a relink): never a clean rejection
        return dict(compiled=False, kind="crash", error="could not start kiln-compile: %s" % e)
    if r.returncode == 0:
        return dict(compiled=True)
    text = (r.stderr + r.stdout).replace(folder + os.sep, "")  # test names in paths match no kind
    if r.returncode < 0 or r.returncode not in (1, 2):  # a signal or an unexpected exit: a crash
        return dict(compiled=False, kind="crash", error="exit %d: %s" % (r.returncode, first_error(text)))
    return dict(compiled=False, kind=kind_of(text), error=first_error(text))


def dtype_name(a):
    """bfloat16 as one name whether kiln-run wrote it (2-byte void, '|V2') or onnx's generator did
    (ml_dtypes.bfloat16); any other dtype by numpy's name."""
    if a.dtype.itemsize == 2 and (a.dtype.kind == "V" or a.dtype.name == "bfloat16"):
        return "bfloat16"
    return a.dtype.name


def as_float_if_bf16(a):
    """bfloat16 arrays as float32; anything else unchanged."""
    if dtype_name(a) == "bfloat16":
        return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a


def compare(out, ref, rtol, atol):
    """(passed, passed with the test's own rtol/atol, detail) for one output against its reference:
    equal shape and dtype; integers and bools exactly; floats elementwise allclose with NaN
    matching NaN only."""
    if out.shape != ref.shape or dtype_name(out) != dtype_name(ref):
        msg = "kiln %s %s, expected %s %s" % (dtype_name(out), out.shape, dtype_name(ref), ref.shape)
        return False, False, msg
    out, ref = as_float_if_bf16(out), as_float_if_bf16(ref)
    if ref.dtype.kind not in "fc":
        ok = bool(np.array_equal(out, ref))
        return ok, ok, "" if ok else "%d of %d elements differ" % (int(np.sum(out != ref)), ref.size)
    a, b = out.astype(np.complex128 if ref.dtype.kind == "c" else np.float64), \
        ref.astype(np.complex128 if ref.dtype.kind == "c" else np.float64)
    ok = bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))
    own = bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    if ok:
        return ok, own, ""
    with np.errstate(invalid="ignore"):
        nan_mismatch = int(np.sum(np.isnan(a) != np.isnan(b)))
        d = np.abs(a - b)
        worst = float(np.nanmax(d - RTOL * np.abs(b), initial=0.0))
        rel = float(np.nanmax(d / np.maximum(np.abs(b), 1e-30), initial=0.0))
    return ok, own, "not allclose(rtol=%g, atol=%g): worst |d| - rtol|ref| = %.3g, max rel %.3g%s" % (
        RTOL, ATOL, worst, rel, ", NaN positions differ at %d" % nan_mismatch if nan_mismatch else "")


def run_case(kiln_run, folder, meta):
    """kiln-run writes every output (stale files removed first); each is compared with compare()."""
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
        return dict(passed=False, own_tolerance=False, detail="kiln-run ran over %d s" % RUN_TIMEOUT_S)
    except OSError as e:
        return dict(passed=False, own_tolerance=False, detail="could not start kiln-run: %s" % e)
    if r.returncode != 0:
        lines = (r.stderr + r.stdout).strip().splitlines()
        return dict(passed=False, own_tolerance=False,
                    detail="kiln-run exit %d: %s" % (r.returncode, " | ".join(lines[-2:])[:300]))
    passed, own, details = True, True, []
    for k, (name, path) in enumerate(zip(meta["outputs"], outs)):
        ok, own_ok, detail = compare(np.load(path), np.load(os.path.join(folder, "ref_%d.npy" % k)),
                                     meta["rtol"], meta["atol"])
        passed, own = passed and ok, own and own_ok
        if detail:
            details.append("%s: %s" % (name, detail))
    return dict(passed=passed, own_tolerance=own, detail="; ".join(details))


def has_gpu():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    except OSError:
        return False
    return "GPU" in out


def expected_status(result):
    return "compiles" if result["compiled"] else result["kind"]


def print_compile_summary(label, results):
    compiled = sum(1 for r in results.values() if r["compiled"])
    constant = sum(1 for r in results.values() if r["meta"].get("constantized"))
    print("%s: %d tests, %d compile (%.0f%%), %d with parameter inputs made constant" % (
        label, len(results), compiled, 100.0 * compiled / max(len(results), 1), constant))
    kinds = {}
    for n, r in sorted(results.items()):
        if not r["compiled"]:
            kinds.setdefault(r["kind"], []).append(n)
    for kind, names in sorted(kinds.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print("  %-26s %4d  e.g. %s: %s" % (kind, len(names), names[0], results[names[0]]["error"]))


def check_expected(path, results, onnx_version, selected, complete):
    """Compares the in-scope results with the list at `path`; returns the number of failures.
    `selected` holds the in-scope test names of this run; `complete` is False under --filter (then
    listed tests outside the selection are not reported missing)."""
    try:
        with open(path, encoding="utf-8") as f:
            tests = json.load(f).get("tests", {})
    except (OSError, ValueError) as e:
        print("FAIL expected list: %s (write it with --update-expected)" % e)
        return 1
    with open(path, encoding="utf-8") as f:
        listed_onnx = json.load(f).get("onnx")
    if listed_onnx != onnx_version:
        print("note: the expected list was made with onnx %s, this is onnx %s" % (listed_onnx, onnx_version))
    regressed, newly, changed, unlisted = [], [], [], []
    for name in sorted(selected):
        now, was = expected_status(results[name]), tests.get(name)
        if was is None:
            unlisted.append((name, now))
        elif was == "compiles" and now != "compiles":
            regressed.append((name, now, results[name].get("error", "")))
        elif was != "compiles" and now == "compiles":
            newly.append((name, was))
        elif was != now:
            changed.append((name, was, now))
    gone = sorted(n for n in tests if n not in selected) if complete else []
    for name, now, error in regressed:
        print("FAIL %s: expected to compile, now %s: %s" % (name, now, error))
    for name, was in newly:
        print("NEWLY COMPILES %s (expected: %s); record it with --update-expected" % (name, was))
    notes = ["%s is rejected as '%s' now, the list says '%s'" % c for c in changed]
    notes += ["%s is in scope but not in the expected list (now: %s)" % u for u in unlisted]
    notes += ["%s is in the expected list but not an in-scope test of this onnx wheel" % n for n in gone]
    for line in notes[:MAX_NOTES]:
        print("note: " + line)
    if len(notes) > MAX_NOTES:
        print("note: ... and %d more (--json FILE has every result)" % (len(notes) - MAX_NOTES))
    print("expected list: %d in-scope tests checked, %d regressed, %d newly compile, %d changed "
          "rejection kind, %d not listed, %d listed but gone" % (
              len(selected), len(regressed), len(newly), len(changed), len(unlisted), len(gone)))
    return len(regressed)


def update_expected(path, results, onnx_version, selected, complete):
    """Writes the in-scope compile results to `path` (under --filter: merged into the list)."""
    tests = {}
    if not complete and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            tests = json.load(f).get("tests", {})
    tests.update({name: expected_status(results[name]) for name in selected})
    listing = {
        "about": "Expected kiln-compile result of each in-scope ONNX backend node test: 'compiles' or "
                 "the rejection kind. Checked by test/e2e/onnx_node_tests.py --expected (ctest "
                 "onnx-node-tests); rewrite with --update-expected (docs/testing.md).",
        "onnx": onnx_version,
        "tests": dict(sorted(tests.items())),
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(listing, f, indent=1)
        f.write("\n")
    compiles = sum(1 for v in tests.values() if v == "compiles")
    print("wrote %s: %d tests, %d compile" % (path, len(tests), compiles))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln-compile", default=os.path.join(REPO, "build", "bin", "kiln-compile"))
    p.add_argument("--kiln-run", default=os.path.join(REPO, "build", "bin", "kiln-run"))
    p.add_argument("--compile-only", metavar="DIR", help="write and compile the tests into DIR, run nothing")
    p.add_argument("--artifacts", metavar="DIR", help="run the tests --compile-only compiled into DIR")
    p.add_argument("--work-dir", default="/tmp/kiln-node-tests", help="folder when compiling and running")
    p.add_argument("--all", action="store_true",
                   help="every node test, not only those in scope (the full report)")
    p.add_argument("--filter", default="", help="only tests whose name matches this regex")
    p.add_argument("--expected", metavar="FILE", nargs="?", const=EXPECTED_DEFAULT,
                   help="check the in-scope compile results against this list (default %s)"
                        % os.path.relpath(EXPECTED_DEFAULT, REPO))
    p.add_argument("--update-expected", action="store_true",
                   help="rewrite the --expected list from this run's in-scope results")
    p.add_argument("-j", type=int, default=os.cpu_count() or 2, help="parallel kiln-compile/kiln-run")
    p.add_argument("--json", metavar="FILE", help="write every test's outcome here")
    args = p.parse_args(argv)
    if args.update_expected and not args.expected:
        args.expected = EXPECTED_DEFAULT
    if args.artifacts and (args.compile_only or args.update_expected):
        p.error("--artifacts runs what --compile-only compiled; it compiles nothing")

    onnx_version = None
    if args.artifacts:
        folder = args.artifacts
        with open(os.path.join(folder, "compile.json"), encoding="utf-8") as f:
            saved = json.load(f)
        results, total, onnx_version = saved["results"], saved["total"], saved.get("onnx")
    else:
        try:
            import onnx
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from onnx.backend.test.case.node import collect_testcases
                cases = collect_testcases(None)
        except ImportError as e:
            print("SKIP: the onnx wheel is not importable (%s)" % e)
            return 77
        onnx_version = onnx.__version__
        if not os.access(args.kiln_compile, os.X_OK):
            print("FAIL: no kiln-compile at %s (build it, or pass --kiln-compile)" % args.kiln_compile)
            return 1
        total = len(cases)
        cases = [c for c in cases if re.search(args.filter, c.name)]
        scoped = {c.name: in_scope(c.model) for c in cases}
        cases = [c for c in cases if args.all or scoped[c.name]]
        folder = args.compile_only or args.work_dir
        metas = {c.name: write_case(c, os.path.join(folder, c.name), scoped[c.name]) for c in cases}

        def job(name):
            return name, dict(meta=metas[name], **compile_case(args.kiln_compile, os.path.join(folder, name),
                                                                metas[name]))
        with ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
            results = dict(pool.map(job, sorted(metas)))
        with open(os.path.join(folder, "compile.json"), "w", encoding="utf-8") as f:
            json.dump(dict(onnx=onnx_version, total=total, results=results), f)

    selected = {n for n, r in results.items() if r["meta"]["in_scope"]}
    print("node tests (onnx %s): %d total, %d in scope (every node an op of SCOPE_OPS)%s" % (
        onnx_version, total, len(selected), ", filter %r" % args.filter if args.filter else ""))
    print_compile_summary("in scope", {n: results[n] for n in selected})
    if len(selected) != len(results):
        print_compile_summary("all", results)
    crashed = sorted(n for n, r in results.items() if not r["compiled"] and r["kind"] in FAILURE_KINDS)
    for name in crashed:
        print("FAIL %s: kiln-compile %s: %s" % (name, results[name]["kind"], results[name]["error"]))
    failures = len(crashed)

    if args.update_expected:
        update_expected(args.expected, results, onnx_version, selected, not args.filter)
    elif args.expected:
        failures += check_expected(args.expected, results, onnx_version, selected, not args.filter)

    if not args.compile_only:
        if not has_gpu():
            print("SKIP run: no GPU (nvidia-smi -L found none)")
            return 77 if args.artifacts else (1 if failures else 0)
        compiled = sorted(n for n, r in results.items() if r["compiled"])

        def run(name):
            return name, run_case(args.kiln_run, os.path.join(folder, name), results[name]["meta"])
        with ThreadPoolExecutor(max_workers=max(1, min(args.j, 4))) as pool:
            runs = dict(pool.map(run, compiled))
        for name, r in runs.items():
            results[name]["run"] = r
        for label, names in (("in scope", [n for n in compiled if n in selected]), ("all", compiled)):
            if label == "all" and len(selected) == len(results):
                continue
            bad = [n for n in names if not runs[n]["passed"]]
            own = sum(1 for n in names if runs[n]["own_tolerance"])
            print("node tests run (%s): %d passed, %d failed of %d compiled (rtol %g, atol %g); "
                  "own tolerance: %d passed" % (label, len(names) - len(bad), len(bad), len(names),
                                                RTOL, ATOL, own))
        bad = [n for n in compiled if not runs[n]["passed"]]
        for name in bad:
            print("  FAIL %s: %s" % (name, runs[name]["detail"]))
        for name in compiled:
            if runs[name]["passed"] and not runs[name]["own_tolerance"]:
                print("  note %s: passes rtol %g/atol %g, not the test's own rtol %g/atol %g" % (
                    name, RTOL, ATOL, results[name]["meta"]["rtol"], results[name]["meta"]["atol"]))
        failures += len(bad)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
