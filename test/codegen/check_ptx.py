#!/usr/bin/env python3
"""ptxas check: every PTX that kiln-compile emits must assemble with CUDA's ptxas.

Compiles the shipped example (examples/models/gpt2_tiny.onnx) and each shared model that is present
at a couple of shapes and precisions (fp32, and fp16, whose GEMMs on sm_90 are the Hopper TMA +
wgmma kernels) with `kiln-compile --dump-cuda DIR`, then runs
`ptxas -arch=<target> -o /dev/null` on every DIR/*.ptx. No GPU needed. Fails on any compile or
ptxas error, or when a compile emits no PTX at all; prints per-model counts.

Programmatic dependent launch: the runtime may start a kernel while the previous one still runs
(docs/runtime.md), so every kernel must execute `griddepcontrol.wait` before its first access to
global memory. With --arch sm_90 or newer the check fails any `.entry` whose first global or
generic load, store, atomic or async copy (from global memory), or any call or branch, comes
before its first griddepcontrol.wait; below sm_90 it fails any PTX that holds a griddepcontrol
instruction (it does not exist there). Three exceptions: `cp.async.cg.shared.global.L2::128B`, the
form kiln::gemmSkinnyTcPreloadB alone uses, which the code generator emits only to copy a constant
weight (no kernel writes it) before the wait; `cp.async.bulk.prefetch.L2.global`
(kiln::l2PrefetchShare: the next decode GEMM's weight into L2, nothing into the SM); and a kernel whose PTX carries READS_MARKER before
any memory access (kiln::decodeAttentionPartial with a wait of its own: it reads the sequence
lengths, the block table and cached rows, which no kernel of the step writes, before the wait),
where control flow may come first and, of the accesses to global memory, only scalar 32-bit
integer loads (the lengths and the table: MARKED_READ) and 16-byte copies into shared memory
(`cp.async.cg.shared.global`, the cached rows); anything else that touches global memory there
fails: a write, a bulk or tensor copy, a load of another type (Q and the new keys and values are
16-bit or fp32 loads, or copies only where Q is a plain view). Besides the models at the shapes
below, the check compiles the tiny causal Llama of test/models as generation steps (--kv-cache,
fp16), so that the decode kernels are checked too. --arch takes one architecture.

Usage: check_ptx.py --kiln-compile build/bin/kiln-compile [--cuda-home /usr/local/cuda]
                    [--models-dir DIR] [--shapes 1x16,2x128,1x1] [--precisions fp32,fp16]
                    [--arch sm_90] [--work-dir DIR]
"""

import argparse
import filecmp
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = ["gpt2_tiny_dynamo", "bert_tiny_dynamo", "bert_tiny_legacy", "llama_tiny_dynamo"]
TIMEOUT_S = 600


def input_names(path):
    """Graph inputs that are not initializers (onnx if importable, else by model family)."""
    try:
        import onnx

        graph = onnx.load(path, load_external_data=False).graph
        inits = {i.name for i in graph.initializer}
        return [i.name for i in graph.input if i.name not in inits]
    except ImportError:
        name = os.path.basename(path)
        return ["input_ids", "attention_mask"] if "bert" in name else ["input_ids"]


def count_entries(ptx_path):
    """Number of kernels (`.entry` directives) in a PTX file."""
    with open(ptx_path, errors="replace") as f:
        return sum(1 for line in f if re.match(r"\s*(\.visible\s+|\.weak\s+)?\.entry\s", line))


# A memory instruction (optionally predicated): ld, ldu, st, atom, red, cp.async[.bulk],
# cp.reduce.async, multimem. It may touch global memory when one of its state spaces is .global
# (cp.async's source: cp.async.cg.shared.global, cp.async.bulk.tensor...shared::cluster.global) or
# when it names none (generic addressing); only ld/st/atom/red confined to .shared, .param, .local
# or .const are not.
MEMORY_OP = re.compile(r"^\s*(@!?%\w+\s+)?(ld|ldu|st|atom|red|cp\.async|cp\.reduce\.async|multimem)\b([\w.:]*)")
STATE_SPACE = re.compile(r"\.(global|shared|param|local|const)\b")
# Allowed before the wait: the weight preload's copy (gemm_skinny.cuh, gemmSkinnyTcPreloadB), the
# next weight's bulk L2 prefetch (l2PrefetchShare: nothing reaches the SM), and
# cp.async.commit_group / wait_group / wait_all, which order the copies and access no memory.
ALLOWED_BEFORE_WAIT = re.compile(r"^\s*(@!?%\w+\s+)?cp\.async\.(cg\.shared\.global\.L2::128B\s|"
                            r"bulk\.prefetch\.L2\.global\s|commit_group|wait_group|wait_all)")
# Control flow before the wait (a call or a branch) could reach an access the scan does not see.
CONTROL = re.compile(r"^\s*(@!?%\w+\s+)?(call|bra)\b")
# A kernel that declares reads before its wait (cuda/decode_attention.cuh), and the writes it still
# may not do there.
READS_MARKER = "kiln: reads before the grid-dependency wait"
MARKED_READ = re.compile(r"^\s*(@!?%\w+\s+)?(ld\.global(\.nc)?\.[sub]32\s|"
                         r"cp\.async\.cg\.shared\.global\s)")
# Generation steps compiled besides the models (path under the repository, extra arguments).
KV_CACHE_COMPILES = [("llama_tiny_causal (kv-cache)", "test/models/llama_tiny_causal_dynamo.onnx",
                      ["--kv-cache", "--max-seq-len", "512", "--shape", "input_ids=1..8x1..32",
                       "--precision", "fp16"])]


def touches_global(qualifiers):
    spaces = STATE_SPACE.findall(qualifiers)
    return not spaces or "global" in spaces


def entries(ptx_path):
    """[(name, [lines])] of each `.entry` of a PTX file, its lines up to the next `.entry`."""
    out = []
    with open(ptx_path, errors="replace") as f:
        for line in f:
            m = re.match(r"\s*(\.visible\s+|\.weak\s+)?\.entry\s+(\w+)", line)
            if m:
                out.append((m.group(2), []))
            elif out:
                out[-1][1].append(line)
    return out


def dependency_wait_errors(ptx_path, arch_number):
    """Kernels of the file that break the griddepcontrol rule (see the module docstring)."""
    errors = []
    for name, lines in entries(ptx_path):
        waited = False
        reads_declared = False
        for line in lines:
            if READS_MARKER in line:
                reads_declared = True
                continue
            if "griddepcontrol" in line:
                if arch_number < 90:
                    errors.append("%s: %s below sm_90" % (name, line.strip()))
                    break
                if "griddepcontrol.wait" in line:
                    waited = True
                    break
            m = None if ALLOWED_BEFORE_WAIT.match(line) else MEMORY_OP.match(line)
            if reads_declared:  # the lengths, the table and cached rows only
                if arch_number >= 90 and m and touches_global(m.group(3)) and not MARKED_READ.match(line):
                    errors.append("%s: '%s' before griddepcontrol.wait (a kernel marked '%s' may only "
                                  "load 32-bit integers and cp.async rows there)"
                                  % (name, line.strip(), READS_MARKER))
                    break
                continue
            if arch_number >= 90 and ((m and touches_global(m.group(3))) or CONTROL.match(line)):
                errors.append("%s: '%s' before griddepcontrol.wait" % (name, line.strip()))
                break
        else:
            if arch_number >= 90 and not waited:
                errors.append("%s: no griddepcontrol.wait" % name)
    return errors


def ptx_target(ptx_path, default):
    """The `.target` of a PTX file when it names an arch-specific variant (sm_90a), else default."""
    with open(ptx_path, errors="replace") as f:
        for line in f:
            m = re.match(r"\s*\.target\s+(sm_\d+[af]?)", line)
            if m:
                return m.group(1) if m.group(1).startswith(default) else default
    return default


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln-compile", default=os.path.join(REPO, "build", "bin", "kiln-compile"))
    p.add_argument("--cuda-home", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    p.add_argument("--models-dir",
                   default=os.environ.get("KILN_MODELS_DIR") or os.path.join(REPO, "..", "shared", "models"))
    # 1x1: one-row GEMMs, the few-row GEMM with the weight preloaded before the wait.
    p.add_argument("--shapes", default="1x16,2x128,1x1")
    p.add_argument("--precisions", default="fp32,fp16", help="kiln-compile --precision values")
    p.add_argument("--arch", default="sm_90", help="ptxas -arch and kiln-compile --target")
    p.add_argument("--work-dir")
    args = p.parse_args(argv)

    ptxas = os.path.join(args.cuda_home, "bin", "ptxas")
    for tool in (args.kiln_compile, ptxas):
        if not os.access(tool, os.X_OK):
            print("ERROR: %s not found or not executable" % tool)
            return 2

    shipped = os.path.join(REPO, "examples", "models", "gpt2_tiny.onnx")
    models = [("gpt2_tiny (shipped)", shipped)]
    for name in SHARED:
        path = os.path.join(args.models_dir, name + ".onnx")
        if os.path.isfile(path):
            if filecmp.cmp(path, shipped, shallow=False):
                models[0] = (name, path)  # the shipped example is a copy of this model
            else:
                models.append((name, path))
        else:
            print("SKIP %s: not found in %s (KILN_MODELS_DIR)" % (name, os.path.abspath(args.models_dir)))
    shapes = [s for s in args.shapes.split(",") if s]
    precisions = [p for p in args.precisions.split(",") if p]

    work = args.work_dir or tempfile.mkdtemp(prefix="kiln-ptxas-")
    os.makedirs(work, exist_ok=True)
    failures, total_ptx, total_entries, rows = 0, 0, 0, []
    compiles = []  # (name, path, shape and precision label, extra kiln-compile arguments)
    for name, path in models:
        inputs = input_names(path)
        for shape, precision in [(s, p) for s in shapes for p in precisions]:
            compiles.append((name, path, shape + " " + precision,
                             ["--shape", ",".join("%s=%s" % (i, shape) for i in inputs),
                              "--precision", precision]))
    for name, rel, extra in KV_CACHE_COMPILES:
        path = os.path.join(REPO, rel)
        if os.path.isfile(path):
            compiles.append((name, path, "steps fp16", extra))
        else:
            print("SKIP %s: %s not found" % (name, path))
    for name, path, label, extra in compiles:
        tag = re.sub(r"\W+", "_", "%s_%s" % (name, label)).strip("_")
        dump = os.path.join(work, tag)
        shutil.rmtree(dump, ignore_errors=True)
        os.makedirs(dump)
        cmd = [args.kiln_compile, path, "-o", os.path.join(work, tag + ".kiln"),
               "--target", args.arch, "--dump-cuda", dump] + extra
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
            rc, text = res.returncode, res.stdout + res.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            rc, text = -1, str(e)
        if rc != 0:
            failures += 1
            rows.append((name, label, 0, 0, 0, "FAIL (kiln-compile exit %d)" % rc))
            print("$ " + " ".join(cmd) + "\n" + text)
            continue
        ptx_files = sorted(glob.glob(os.path.join(dump, "*.ptx")))
        if not ptx_files:
            failures += 1
            rows.append((name, label, 0, 0, 0, "FAIL (no PTX in --dump-cuda dir)"))
            continue
        bad = 0
        entries = sum(count_entries(ptx) for ptx in ptx_files)
        total_entries += entries
        for ptx in ptx_files:
            arch = ptx_target(ptx, args.arch)
            r = subprocess.run([ptxas, "-arch=" + arch, "-o", os.devnull, ptx],
                               capture_output=True, text=True, timeout=TIMEOUT_S)
            if r.returncode != 0:
                bad += 1
                print("ptxas -arch=%s FAILED on %s:\n%s%s" % (arch, ptx, r.stdout, r.stderr))
                continue
            wait_errors = dependency_wait_errors(ptx, int(re.sub(r"\D", "", arch)))
            if wait_errors:
                bad += 1
                print("griddepcontrol rule broken in %s:\n  %s" % (ptx, "\n  ".join(wait_errors)))
        total_ptx += len(ptx_files)
        failures += bad
        rows.append((name, label, len(ptx_files), entries, len(ptx_files) - bad, "ok" if not bad else "FAIL"))

    print("%-22s %-12s %6s %8s %6s  %s" % ("model", "shape", "ptx", "kernels", "ok", "result"))
    for row in rows:
        print("%-22s %-12s %6d %8d %6d  %s" % row)
    print("ptxas-check: %d PTX files (%d kernels) from %d compiles, %d failures (-arch=%s, dumps in %s)"
          % (total_ptx, total_entries, len(rows), failures, args.arch, work))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
