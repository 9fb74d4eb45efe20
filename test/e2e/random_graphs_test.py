#!/usr/bin/env python3
"""Random transformer-like ONNX graphs: kiln vs onnxruntime on a GPU (fusion legality fuzzing).

Each graph chains 6-14 ops drawn from what fusion treats specially: MatMul with weight or
activation operands (behind transposes, slices, reshapes and scalar scaling: GEMM prologues),
bias/residual adds and activations (epilogues), Softmax over random axes, LayerNormalization,
ReduceMean/ReduceMax with keepdims broadcast back, broadcasting binary ops, and values read by
several ops. Shapes are small and odd (1..9 x 4..17) so tiles are partial. A second output
exposes an intermediate, so fused values must also be materialized correctly.

  random_graphs_test.py --generate DIR [--count N] [--seed S] --kiln-compile BIN
      writes DIR/g<i>.onnx and compiles DIR/g<i>.kiln (no GPU needed)
  random_graphs_test.py --run DIR --kiln-run BIN
      runs each g<i>.kiln on the GPU against onnxruntime in float64 (float32 where onnxruntime
      lacks a double kernel); pass if max|out-ref|/max|ref| <= 1e-4, or (ill-conditioned
      graphs) no more than twice onnxruntime's own float32 error against float64
  random_graphs_test.py --generate DIR --kiln-compile BIN --kiln-run BIN
      both (ctest random-graphs-gpu)

Exit: 0 pass, 1 failure, 2 usage, 77 no GPU (--run only).
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np

from e2e_test import has_gpu  # one GPU check for every GPU test script


def build_graph(rng, index):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    counter = [0]

    def name(prefix):
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    def const(array):
        n = name("c")
        inits.append(numpy_helper.from_array(np.asarray(array, np.float32), n))
        return n

    def const_i64(values):
        n = name("i")
        inits.append(numpy_helper.from_array(np.asarray(values, np.int64), n))
        return n

    def op(kind, inputs, **attrs):
        out = name("t")
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    b, s, h = int(rng.integers(1, 4)), int(rng.integers(1, 10)), int(rng.integers(4, 18))
    cur, shape = "x", [b, s, h]
    pool = [(cur, list(shape))]
    steps = int(rng.integers(6, 15))
    for _ in range(steps):
        choice = rng.choice(["matmul_w", "matmul_act", "bias_act", "softmax", "layernorm",
                             "reduce", "transpose", "reshape_slice", "scale", "multi_use",
                             "residual"])
        if choice == "matmul_w":  # GEMM with a weight, bias and activation epilogue
            n2 = int(rng.integers(3, 20))
            w = const(rng.standard_normal((shape[-1], n2)) / np.sqrt(shape[-1]))
            cur = op("MatMul", [cur, w])
            shape = shape[:-1] + [n2]
            if rng.random() < 0.7:
                cur = op("Add", [cur, const(rng.standard_normal(n2))])
            if rng.random() < 0.5:
                cur = op(str(rng.choice(["Tanh", "Relu", "Sigmoid", "Erf"])), [cur])
        elif choice == "matmul_act" and len(shape) == 3:  # attention-like: x @ (scaled x)^T
            k = op("Mul", [cur, const(np.float32(rng.uniform(0.2, 0.9)))])
            kt = op("Transpose", [k], perm=[0, 2, 1])
            cur = op("MatMul", [cur, kt])
            shape = [shape[0], shape[1], shape[1]]
        elif choice == "bias_act":
            cur = op("Add", [cur, const(rng.standard_normal(shape[-1]))])
            cur = op(str(rng.choice(["Tanh", "Relu", "Neg", "Sigmoid"])), [cur])
        elif choice == "softmax":
            axis = int(rng.integers(-len(shape), len(shape)))
            cur = op("Softmax", [cur], axis=axis)
        elif choice == "layernorm":
            cur = op("LayerNormalization", [cur, const(rng.standard_normal(shape[-1])),
                                            const(rng.standard_normal(shape[-1]))],
                     axis=-1, epsilon=1e-5)
        elif choice == "reduce":
            axis = int(rng.integers(0, len(shape)))
            kind = str(rng.choice(["ReduceMean", "ReduceMax"]))
            r = op(kind, [cur, const_i64([axis])], keepdims=1)
            cur = op("Sub", [cur, r])  # broadcast back
        elif choice == "transpose" and len(shape) == 3:
            cur = op("Transpose", [cur], perm=[1, 0, 2])
            shape = [shape[1], shape[0], shape[2]]
        elif choice == "reshape_slice" and shape[-1] >= 4:
            half = shape[-1] // 2
            cur = op("Slice", [cur, const_i64([1]), const_i64([1 + half]), const_i64([-1])])
            shape = shape[:-1] + [half]
            flat = int(np.prod(shape[:-1]))
            cur = op("Reshape", [cur, const_i64([flat, shape[-1]])])
            cur = op("Reshape", [cur, const_i64(shape)])
        elif choice == "scale":
            cur = op("Mul", [cur, const(np.float32(rng.uniform(0.5, 2.0)))])
        elif choice == "multi_use":  # x * tanh(x) + x: one value read three times
            t = op("Tanh", [cur])
            m = op("Mul", [cur, t])
            cur = op("Add", [m, cur])
        elif choice == "residual":
            same = [p for p in pool if p[1] == shape and p[0] != cur]
            if same:
                cur = op("Add", [cur, same[int(rng.integers(0, len(same)))][0]])
        pool.append((cur, list(shape)))
    mid = pool[len(pool) // 2]
    outputs = [helper.make_tensor_value_info(cur, TensorProto.FLOAT, shape)]
    if mid[0] not in ("x", cur):
        outputs.append(helper.make_tensor_value_info(mid[0], TensorProto.FLOAT, mid[1]))
    graph = helper.make_graph(nodes, f"g{index}",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [b, s, h])],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, [b, s, h]


def generate(args):
    import onnx
    os.makedirs(args.generate, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    for i in range(args.count):
        model, _ = build_graph(rng, i)
        path = os.path.join(args.generate, f"g{i}.onnx")
        onnx.save(model, path)
        r = subprocess.run([args.kiln_compile, path, "-o", path[:-5] + ".kiln"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"g{i}: kiln-compile failed:\n{r.stderr}")
            return 1
    print(f"generated and compiled {args.count} graphs (seed {args.seed}) into {args.generate}")
    return 0


def to_float64(path):
    """The model with every float32 tensor turned into float64 (a higher-precision reference)."""
    import onnx
    from onnx import TensorProto, numpy_helper
    model = onnx.load(path)
    g = model.graph
    for t in list(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name))
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.DOUBLE
    return model.SerializeToString()


def run(args):
    if not has_gpu():
        print("SKIP: no GPU")
        return 77
    import onnxruntime as ort
    input_seed = args.input_seed if args.input_seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"input seed {input_seed} (replay with --input-seed {input_seed})")
    rng = np.random.default_rng(input_seed)
    failures = 0
    models = sorted(glob.glob(os.path.join(args.run, "g*.onnx")),
                    key=lambda p: int(os.path.basename(p)[1:-5]))
    if not models:
        print(f"no graphs (g*.onnx) in {args.run}: FAIL")
        return 1
    worst, errors, via_peer = 0.0, [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in models:
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            shape = sess.get_inputs()[0].shape
            x = rng.standard_normal(shape).astype(np.float32)
            refs32 = sess.run(None, {"x": x})
            # Reference in float64 where onnxruntime has double kernels for every op
            # (it lacks some, e.g. Erf); else onnxruntime's float32 result.
            try:
                sess64 = ort.InferenceSession(to_float64(path), providers=["CPUExecutionProvider"])
                refs = sess64.run(None, {"x": x.astype(np.float64)})
                ref_kind = "f64"
            except Exception:  # noqa: BLE001 - any missing double kernel
                refs, ref_kind = refs32, "f32"
            names = [o.name for o in sess.get_outputs()]
            np.save(os.path.join(tmp, "x.npy"), x)
            cmd = [args.kiln_run, path[:-5] + ".kiln", "--input", f"x={tmp}/x.npy"]
            for o in names:
                # Output names repeat across graphs: never read an earlier graph's file.
                if os.path.exists(f"{tmp}/{o}.npy"):
                    os.remove(f"{tmp}/{o}.npy")
                cmd += ["--output", f"{o}={tmp}/{o}.npy"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            tag = os.path.basename(path)[:-5]
            if r.returncode != 0:
                print(f"{tag}: FAIL kiln-run exit {r.returncode}: {r.stderr.strip()}")
                failures += 1
                continue
            def rel_err(out, ref):
                return float(np.max(np.abs(out.astype(np.float64) - ref)) /
                             max(float(np.max(np.abs(ref))), 1e-30))

            for o, ref, ref32 in zip(names, refs, refs32):
                out = np.load(f"{tmp}/{o}.npy")
                err = rel_err(out, ref)
                # Random graphs can be ill-conditioned (softmax then mean subtraction
                # cancels): then no float32 evaluation gets within 1e-4 of float64.
                # Bar: 1e-4, or no worse than twice onnxruntime's own float32 error.
                peer = rel_err(ref32, ref) if ref_kind == "f64" else 0.0
                ok = (out.shape == ref.shape and np.isfinite(out).all() and
                      (err <= 1e-4 or err <= 2 * peer))
                if ok and err > 1e-4:
                    via_peer += 1
                    print(f"{tag} {o}: pass via the onnxruntime-float32 bar: max_rel_err={err:.3e} "
                          f"<= 2 x {peer:.3e}")
                worst = max(worst, err)
                errors.append((err, tag, o, ref_kind, peer))
                if not ok:
                    failures += 1
                    print(f"{tag} {o}: FAIL max_rel_err={err:.3e} shape {out.shape} vs {ref.shape} "
                          f"(onnxruntime float32: {peer:.3e})")
    for err, tag, o, kind, peer in sorted(errors, reverse=True)[:3]:
        print(f"  largest: {tag} {o} max_rel_err={err:.3e} (reference: onnxruntime {kind}; "
              f"onnxruntime float32 against it: {peer:.3e})")
    print(f"  references: {sum(e[3] == 'f64' for e in errors)} float64, "
          f"{sum(e[3] == 'f32' for e in errors)} float32 (no double kernel for some op)")
    print(f"  passed via the onnxruntime-float32 bar (error > 1e-4): {via_peer}")
    print(f"{len(models)} graphs, worst max_rel_err={worst:.3e}: " +
          ("PASS" if failures == 0 else f"FAIL ({failures})"))
    return 0 if failures == 0 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--generate")
    ap.add_argument("--run")
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1, help="graph generation seed")
    ap.add_argument("--input-seed", type=int, help="replay the random inputs of an earlier run")
    ap.add_argument("--kiln-compile")
    ap.add_argument("--kiln-run")
    args = ap.parse_args()
    if args.generate and args.kiln_compile and args.kiln_run:  # both, as ctest runs it
        if not has_gpu():
            print("SKIP: no GPU")
            return 77
        args.run = args.generate
        return generate(args) or run(args)
    if args.generate and args.kiln_compile:
        return generate(args)
    if args.run and args.kiln_run:
        return run(args)
    ap.error("need --generate DIR --kiln-compile BIN, or --run DIR --kiln-run BIN")


if __name__ == "__main__":
    sys.exit(main())
