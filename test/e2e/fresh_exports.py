#!/usr/bin/env python3
"""Fresh transformers exports against onnxruntime: OPT, RoBERTa and an fp16-exported Llama.

Exports tiny random-weight models from transformers configs with examples/export/export_hf.py
(both torch.onnx exporters), compiles each with kiln-compile, runs it with kiln-run on fresh random
inputs and compares with onnxruntime (CPU) on the same inputs:

    max_rel_err = max|kiln - ref| / max|ref|     pass if <= tol (fp32 models 1e-4, fp16 1e-2)

OPT takes its position ids from CumSum(attention_mask) and RoBERTa from CumSum(input_ids !=
padding_idx), both run-time values. Models with an attention_mask run with an all-ones mask and a
padded one (zeros at the tail of some rows). Inputs, the kiln-compile and kiln-run calls and the
error metric are e2e_test.py's. The fp16 Llama is compared with onnxruntime
on its float32 twin (the same weights, rounded to fp16, in a float32 graph), since onnxruntime's
CPU provider lacks fp16 kernels for some of the exported ops.

Needs torch, transformers, onnx, onnxruntime and a GPU (exit 77 without one); the GPU machine has
them. Usage:
    fresh_exports.py --kiln-compile BIN/kiln-compile --kiln-run BIN/kiln-run --work DIR
Prints one line per case and `fresh-exports: N passed, N failed`; exit 1 on any failure.
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_test as e2e  # noqa: E402  (inputs, kiln-compile/kiln-run calls, the error metric)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
EXPORT = os.path.join(REPO, "examples", "export", "export_hf.py")

# name: (family, exporter, dtype)
MODELS = {
    "opt_tiny_legacy": ("opt", "legacy", "float32"),
    "opt_tiny_dynamo": ("opt", "dynamo", "float32"),
    "roberta_tiny_legacy": ("roberta", "legacy", "float32"),
    "roberta_tiny_dynamo": ("roberta", "dynamo", "float32"),
    "llama_tiny_fp16_dynamo": ("llama", "dynamo", "float16"),
    "llama_tiny_fp16_legacy": ("llama", "legacy", "float16"),
}
TOL = {"float32": 1e-4, "float16": 1e-2}


def log(msg):
    print(msg, flush=True)


def run(cmd, timeout=600):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout


def export(name, work):
    family, exporter, dtype = MODELS[name]
    path = os.path.join(work, name + ".onnx")
    if os.path.exists(path) and (dtype != "float16" or os.path.exists(os.path.join(work, name + "_ref32.onnx"))):
        return path, path if dtype != "float16" else os.path.join(work, name + "_ref32.onnx"), "(exported before)"
    rc, out = run([sys.executable, EXPORT, family, "-o", path, "--exporter", exporter, "--dtype", dtype])
    if rc:
        return None, None, out
    ref = path
    if dtype == "float16":
        ref = os.path.join(work, name + "_ref32.onnx")
        rc, out2 = run([sys.executable, EXPORT, family, "-o", ref, "--exporter", exporter,
                        "--dtype", "float32-from-float16"])
        if rc:
            return None, None, out + out2
    return path, ref, out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln-compile", default=os.path.join(REPO, "build", "bin", "kiln-compile"))
    p.add_argument("--kiln-run", default=os.path.join(REPO, "build", "bin", "kiln-run"))
    p.add_argument("--work", required=True, help="folder for models, artifacts, inputs and outputs")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--shapes", default="1x16,2x64")
    p.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    p.add_argument("--dry-run", action="store_true",
                   help="export, compile and compute the references, run nothing (no GPU needed)")
    args = p.parse_args(argv)
    if not args.dry_run and not shutil.which("nvidia-smi"):
        log("SKIP: no GPU")
        return 77
    import onnx
    import onnxruntime as ort

    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    log("fresh-exports: seed %d" % args.seed)
    passed = failed = 0
    names = args.models.split(",")
    # The exports are independent processes: run them side by side.
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
        exported = dict(zip(names, pool.map(lambda n: export(n, args.work), names)))
    log("fresh-exports: %d exports in %.1f s" % (len(names), time.time() - t0))
    for name in names:
        model, ref_model, text = exported[name]
        if not model:
            log("%s: export FAILED\n%s" % (name, text[-3000:]))
            failed += 1
            continue
        graph = onnx.load(model, load_external_data=False).graph
        inputs = [i.name for i in graph.input]
        opset = [o.version for o in onnx.load(model, load_external_data=False).opset_import if o.domain in ("", "ai.onnx")]
        log("%s: opset %s, %d nodes, inputs %s" % (name, opset, len(graph.node), ",".join(inputs)))
        sess = ort.InferenceSession(ref_model, providers=["CPUExecutionProvider"])
        tol = TOL[MODELS[name][2]]
        for shape in args.shapes.split(","):
            b, s = (int(x) for x in shape.split("x"))
            art = os.path.join(args.work, "%s_%s.kiln" % (name, shape))
            ok, summary, out = e2e.compile_model(args.kiln_compile, model, inputs, b, s, art, target=None)
            if not ok:
                log("%s %s: compile FAILED\n%s" % (name, shape, out[-3000:]))
                failed += 1
                continue
            for padded in ([False, True] if "attention_mask" in inputs else [False]):
                mask = "padded" if padded else ("ones" if "attention_mask" in inputs else "-")
                feeds = e2e.make_inputs(rng, inputs, b, s, padded)
                ref = sess.run(None, feeds)[0]
                files = {}
                for n, v in feeds.items():
                    files[n] = os.path.join(args.work, "%s_%s_%s_%s.npy" % (name, shape, mask, n))
                    np.save(files[n], v)
                outf = os.path.join(args.work, "%s_%s_%s_out.npy" % (name, shape, mask))
                if args.dry_run:
                    log("%s %s mask=%s: compiled, reference %s" % (name, shape, mask, ref.shape))
                    continue
                rc, text = e2e.run_kiln(args.kiln_run, art, files, {graph.output[0].name: outf}, {}, tol)
                if rc:
                    log("%s %s mask=%s: kiln-run FAILED\n%s" % (name, shape, mask, text[-3000:]))
                    failed += 1
                    continue
                err = e2e.max_rel_err(np.load(outf), ref)
                ok = err <= tol
                passed += ok
                failed += not ok
                log("%s %s mask=%s: max_rel_err %.2e (tol %.0e, compile %.2f s) %s" % (
                    name, shape, mask, err, tol, summary["wall_s"], "PASS" if ok else "FAIL"))
    log("fresh-exports: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
