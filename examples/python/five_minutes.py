#!/usr/bin/env python3
"""docs/python.md's "Five minutes: export, compile, run, compare", as a script.

    python examples/python/five_minutes.py [--out DIR]
    python examples/python/five_minutes.py --artifact DIR

1. Exports a small random GPT-2 (torch.manual_seed(0), so the weights and token ids are the same
   every time) with torch.onnx (dynamo) to DIR/gpt2.onnx, and saves the token ids (DIR/ids.npy)
   and PyTorch's last_hidden_state for them (DIR/ref.npy, float32).
2. Compiles it with kiln.compile for input_ids (1, 128), fp16, sm_90, to DIR/gpt2.kiln (no GPU
   needed).
3. Runs the artifact with NumPy arrays, and with torch CUDA tensors bound in place on
   torch.cuda.current_stream().
4. Compares both runs with PyTorch (relative error; exit status 1 above 2e-2) and prints the
   slowest kernels.

DIR is --out's directory, or a temporary one removed at the end. Without a CUDA device, steps 3
and 4 print one SKIP line with the runtime's reason and the script exits 0. --artifact DIR runs
steps 3 and 4 only, from DIR's gpt2.kiln, ids.npy and ref.npy as --out wrote them: for a GPU host
with only the runtime wheel kiln-runtime (no kiln.compile), where torch is optional (without a
CUDA torch the in-place run is skipped). Steps 1 and 2 need torch, transformers and onnxscript:
`pip install -r examples/export/requirements.txt` (docs/python.md). Exit status 2: a missing file
or package, or no compiler in this kiln.
"""

from __future__ import annotations

import argparse
import contextlib
import pathlib
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:  # reported by main(), in one line
    np = None

SHAPE = (1, 128)
MAX_REL_ERROR = 2e-2
FILES = ("gpt2.kiln", "ids.npy", "ref.npy")  # what --artifact reads


class Fail(Exception):
    """A one-line error for the user, and the exit status."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


def import_kiln():
    try:
        import kiln
    except ImportError as error:
        raise Fail(f"cannot import kiln ({error}): in the repository run scripts/build.sh and use "
                   f".venv/bin/python, elsewhere pip install a kiln wheel (docs/python.md)")
    return kiln


def import_torch(what: str):
    try:
        import torch
        import transformers
        import onnxscript  # noqa: F401  (torch.onnx.export(dynamo=True) needs it)
    except ImportError as error:
        raise Fail(f"{what} needs torch, transformers and onnxscript ({error}): "
                   f"pip install -r examples/export/requirements.txt")
    return torch, transformers


def step(text: str, start: float) -> None:
    print(f"{text} ({time.perf_counter() - start:.1f} s)")


def export_and_compile(out: pathlib.Path) -> None:
    """Steps 1 and 2: gpt2.onnx, ids.npy, ref.npy, gpt2.kiln in `out`."""
    kiln = import_kiln()
    if not kiln.has_compiler():
        raise Fail("this kiln is the runtime-only package kiln-runtime (no kiln.compile): run "
                   "steps 1-2 on a build host with --out DIR, then here with --artifact DIR")
    torch, transformers = import_torch("step 1 (export)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise Fail(f"--out {out}: {error.strerror}")

    # 1. Export a Hugging Face model with torch.onnx (a small random GPT-2 here).
    start = time.perf_counter()
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1000,
                                     bos_token_id=0, eos_token_id=0)
    config._attn_implementation = "eager"  # the exporter's attention graph, not an SDPA call
    model = transformers.GPT2Model(config).eval()

    class Hidden(torch.nn.Module):  # returns the tensor instead of the ModelOutput
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids):
            return self.m(input_ids).last_hidden_state

    ids = torch.randint(0, 1000, SHAPE)
    auto = torch.export.Dim.AUTO
    with torch.no_grad():
        program = torch.onnx.export(Hidden(model).eval(), (ids,), dynamo=True, opset_version=18,
                                    input_names=["input_ids"], output_names=["last_hidden_state"],
                                    dynamic_shapes={"input_ids": {0: auto, 1: auto}})
        ref = model(ids).last_hidden_state.numpy()  # step 4's reference, saved for --artifact
    program.save(str(out / "gpt2.onnx"))
    np.save(out / "ids.npy", ids.numpy())
    np.save(out / "ref.npy", ref.astype(np.float32))
    step(f"1. exported {out / 'gpt2.onnx'}; ids.npy, ref.npy beside it", start)

    # 2. Compile for one shape (no GPU needed).
    start = time.perf_counter()
    artifact = kiln.compile(out / "gpt2.onnx", shapes={"input_ids": SHAPE}, precision="fp16",
                            target="sm_90")
    print(artifact.inputs, artifact.outputs, len(artifact.kernels), "kernels")
    artifact.save(out / "gpt2.kiln")
    step(f"2. compiled {out / 'gpt2.kiln'}", start)


def run_and_compare(directory: pathlib.Path) -> int:
    """Steps 3 and 4 from directory's gpt2.kiln, ids.npy, ref.npy."""
    kiln = import_kiln()
    for name in FILES:
        if not (directory / name).is_file():
            raise Fail(f"{directory / name}: no such file (--artifact needs {', '.join(FILES)}, "
                       f"as --out writes them)")
    try:
        artifact = kiln.load(directory / "gpt2.kiln")
    except kiln.Error as error:  # the message names the file
        raise Fail(str(error))
    ids = np.load(directory / "ids.npy")
    ref = np.load(directory / "ref.npy")

    try:
        session = kiln.Session(artifact)  # CUDA device 0
    except kiln.UnavailableError as error:
        print(f"SKIP steps 3-4 (run, compare): no CUDA device: {error}")
        return 0
    try:
        return run_steps(session, ids, ref)
    except kiln.Error as error:
        raise Fail(f"run failed: {error}", 1)
    finally:
        session.close()


def run_steps(session, ids: "np.ndarray", ref: "np.ndarray") -> int:
    # 3. Run: NumPy in, NumPy out ...
    start = time.perf_counter()
    out = session.run(input_ids=ids)["last_hidden_state"]
    errors = {"NumPy run": np.linalg.norm(out - ref) / np.linalg.norm(ref)}

    # ... or torch tensors bound in place, on torch's current stream.
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("SKIP the in-place torch run: "
              + ("torch is not installed" if torch is None else "torch has no CUDA device "
                 f"(torch {torch.__version__})"))
    else:
        ids_gpu = torch.from_numpy(ids).cuda()
        hidden = torch.empty(ref.shape, device="cuda")
        session.run(input_ids=ids_gpu, outputs={"last_hidden_state": hidden},
                    stream=torch.cuda.current_stream())
        got = hidden.cpu().numpy()  # .cpu() waits on the current stream
        errors["torch in-place run"] = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    step("3. ran the artifact", start)

    # 4. Compare with PyTorch.
    for what, error in errors.items():
        print(f"4. {what}: rel error {error:.2e} vs PyTorch (limit {MAX_REL_ERROR:g})")
    print("slowest kernels:")
    for k in sorted(session.profile(), key=lambda k: -k.ms)[:5]:
        print(f"  {k.ms * 1e3:8.1f} us  {k.function:8s} {k.name}")
    if max(errors.values()) > MAX_REL_ERROR:
        print(f"FAIL: rel error above {MAX_REL_ERROR:g}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--out", type=pathlib.Path, metavar="DIR",
                       help="write gpt2.onnx, gpt2.kiln, ids.npy, ref.npy here and keep them "
                            "(default: a temporary directory)")
    where.add_argument("--artifact", type=pathlib.Path, metavar="DIR",
                       help="steps 3-4 only, from DIR's gpt2.kiln, ids.npy, ref.npy")
    args = parser.parse_args(argv)
    try:
        if np is None:
            raise Fail("numpy is not installed (kiln needs it): use the .venv that "
                       "scripts/build.sh makes, or pip install numpy")
        if args.artifact is not None:
            if not args.artifact.is_dir():
                raise Fail(f"{args.artifact}: no such directory (--artifact DIR)")
            return run_and_compare(args.artifact)
        with contextlib.ExitStack() as stack:
            out = args.out
            if out is None:
                out = pathlib.Path(stack.enter_context(tempfile.TemporaryDirectory()))
            export_and_compile(out)
            return run_and_compare(out)
    except Fail as error:
        print(f"five_minutes.py: {error}", file=sys.stderr)
        return error.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
