#!/usr/bin/env python3
"""Prepares what the GPU check of the Python package needs on a machine without the compiler.

    .venv/bin/python test/python/prepare_gpu_check.py OUT_DIR [--target sm_90]

Writes into OUT_DIR (with the build tree's kiln package on the path: scripts/build.sh's .venv):
  gpt2_tiny_1x128.kiln, gpt2_tiny_1x128_fp16.kiln   examples/models/gpt2_tiny.onnx at 1x128
  ids_1x128.npy, ref_1x128.npy                       random token ids and onnxruntime's
                                                     last_hidden_state for them (fp32)
  gpt2_tiny_2x8.kiln, gpt2_causal_decode.kiln        the pytest fixtures' artifacts
                                                     (KILN_TEST_CARRY=OUT_DIR)
  gpt2_tiny.onnx, gpt2_tiny_causal_dynamo.onnx       the models, for the onnxruntime references
  gpt2_causal_prompt.npy, gpt2_causal_greedy.npy     a prompt and its greedy tokens (onnxruntime;
                                                     up to 16, fewer at a near tie)
Then copy OUT_DIR, the kiln-runtime wheel and test/python/ to the GPU machine (READY_FOR_GPU.txt).
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import sys

import numpy as np
import onnxruntime as ort

import kiln

ROOT = pathlib.Path(__file__).resolve().parents[2]
GPT2 = ROOT / "examples" / "models" / "gpt2_tiny.onnx"
GPT2_CAUSAL = ROOT / "test" / "models" / "gpt2_tiny_causal_dynamo.onnx"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--target", default="sm_90")
    args = parser.parse_args(argv)
    out: pathlib.Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    for precision, name in (("fp32", "gpt2_tiny_1x128.kiln"), ("fp16", "gpt2_tiny_1x128_fp16.kiln")):
        kiln.compile(GPT2, shapes="input_ids=1x128", precision=precision, target=args.target,
                     output=out / name)
        print(f"wrote {out / name}")
    ids = np.random.default_rng(0).integers(0, 1000, size=(1, 128), dtype=np.int64)
    ref = ort.InferenceSession(str(GPT2), providers=["CPUExecutionProvider"]).run(
        ["last_hidden_state"], {"input_ids": ids})[0]
    np.save(out / "ids_1x128.npy", ids)
    np.save(out / "ref_1x128.npy", ref)

    kiln.compile(GPT2, shapes="input_ids=2x8", target=args.target, output=out / "gpt2_tiny_2x8.kiln")
    kiln.compile(GPT2_CAUSAL, shapes="input_ids=1x1", kv_cache=True, max_seq_len=64,
                 target=args.target, output=out / "gpt2_causal_decode.kiln")
    shutil.copyfile(GPT2, out / GPT2.name)
    shutil.copyfile(GPT2_CAUSAL, out / GPT2_CAUSAL.name)

    prompt = [5, 17, 300, 42]
    sess = ort.InferenceSession(str(GPT2_CAUSAL), providers=["CPUExecutionProvider"])
    tokens = list(prompt)
    for _ in range(16):  # stops after a step whose top-2 logits are within 1e-3 (fp32 rounding)
        logits = sess.run(None, {"input_ids": np.array([tokens], np.int64)})[0][0, -1]
        tokens.append(int(np.argmax(logits)))
        top2 = np.sort(logits)[-2:]
        if top2[1] - top2[0] < 1e-3:
            break
    np.save(out / "gpt2_causal_prompt.npy", np.array(prompt, np.int64))
    np.save(out / "gpt2_causal_greedy.npy", np.array(tokens[len(prompt):], np.int64))
    print(f"wrote the references into {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
