#!/usr/bin/env python3
"""Compile an ONNX model with kiln from Python, inspect the artifact, run it and compare.

    python examples/python/compile_and_run.py [MODEL.onnx] [--shape input_ids=1x128]
        [--precision fp32|tf32|fp16|bf16] [--target sm_90] [-o OUT.kiln]

Defaults to the shipped examples/models/gpt2_tiny.onnx at input_ids=1x128. Compiles (no GPU
needed), prints the inputs, outputs and the kernel table, then on a machine with a GPU runs the
artifact on random token ids (NumPy in and out, and torch CUDA tensors bound in place when torch
is installed) and compares the result with onnxruntime. Without a GPU the run is skipped with the
runtime's reason and the script still exits 0. Needs the kiln package (scripts/build.sh makes
.venv import it) and onnxruntime for the comparison (docs/python.md).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

import kiln

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_MODEL = HERE.parent / "models" / "gpt2_tiny.onnx"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default=str(DEFAULT_MODEL))
    parser.add_argument("--shape", default="input_ids=1x128")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("-o", "--output", help="also save the artifact here")
    args = parser.parse_args(argv)

    # 1. Compile. Errors are kiln.CompileError / CompileOptionError with kiln-compile's message.
    try:
        artifact = kiln.compile(args.model, shapes=args.shape, precision=args.precision,
                                target=args.target)
    except kiln.CompileError as error:
        print(f"compile failed:\n{error}", file=sys.stderr)
        return 1
    if args.output:
        try:
            artifact.save(args.output)
        except kiln.FileError as error:
            print(f"save failed: {error}", file=sys.stderr)
            return 1
    report = artifact.report
    print(f"compiled {args.model} in {report['total_ms']:.0f} ms: {len(artifact.kernels)} kernels, "
          f"arena {artifact.arena_bytes} bytes, weights {artifact.weights_bytes} bytes")
    for info in artifact.inputs:
        print(f"  input  {info.name}: {info.dtype}{list(info.shape)}")
    for info in artifact.outputs:
        print(f"  output {info.name}: {info.dtype}{list(info.shape)}")
    for k in artifact.kernels[:8]:
        print(f"  {k.function:8s} grid {k.grid} block {k.block}  {k.name}")
    if len(artifact.kernels) > 8:
        print(f"  ... {len(artifact.kernels) - 8} more")

    # 2. Inputs: random ids inside the range the artifact records for them (the embedding rows).
    rng = np.random.default_rng(0)
    inputs = {}
    for info in artifact.inputs:
        lo, hi = info.value_range or (0, 100)
        inputs[info.name] = rng.integers(lo, hi + 1, size=info.shape).astype(info.numpy_dtype)

    # 3. Run, if there is a GPU.
    try:
        session = kiln.Session(artifact)
    except kiln.UnavailableError as error:
        print(f"SKIP run: no GPU here ({error})")
        return 0
    outputs = session.run(inputs)

    # 4. Compare with onnxruntime (CPU), when installed.
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime not installed: no comparison")
    else:
        ref = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"])
        names = [o.name for o in artifact.outputs]
        for name, expected in zip(names, ref.run(names, inputs)):
            got = outputs[name].astype(np.float64)
            err = np.linalg.norm(got - expected) / max(np.linalg.norm(expected), 1e-30)
            print(f"  {name}: relative error vs onnxruntime {err:.2e}")

    # 5. The same run with torch CUDA tensors bound in place, on torch's current stream.
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        dev_inputs = {n: torch.from_numpy(v).cuda() for n, v in inputs.items()}
        dev_outputs = {o.name: torch.empty(o.shape, device="cuda",
                                           dtype=getattr(torch, {"f32": "float32",
                                                                 "f16": "float16",
                                                                 "bf16": "bfloat16"}[o.dtype]))
                       for o in artifact.outputs if o.dtype in ("f32", "f16", "bf16")}
        session.run(dev_inputs, outputs=dev_outputs, stream=torch.cuda.current_stream())
        torch.cuda.current_stream().synchronize()
        for name, tensor in dev_outputs.items():
            same = np.array_equal(tensor.float().cpu().numpy(),
                                  outputs[name].astype(np.float32))
            print(f"  {name}: torch in-place run {'equals' if same else 'DIFFERS from'} the "
                  f"NumPy run")

    # 6. The slowest kernels.
    for record in sorted(session.profile(iterations=20), key=lambda r: -r.ms)[:5]:
        print(f"  {record.ms * 1e3:8.1f} us  {record.function:8s} {record.name}")
    print(f"median latency: {np.median(session.benchmark(iterations=100)):.4f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
