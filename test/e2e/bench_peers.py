#!/usr/bin/env python3
"""Latency of kiln against peers, measured in the same run on the same GPU machine.

For each shared model at batch 1 x seq 128:
  kiln      kiln-run --bench N (device events around each run; CUDA graph replay), p50
  ort-cpu   onnxruntime (CPUExecutionProvider) on the same ONNX file, median of N runs
  torch     PyTorch eager on the GPU, the same Hugging Face architecture and config as the
            exported model (random weights; latency does not depend on the values), median of
            N runs timed with CUDA events, fp32, torch.inference_mode
Prints one row per model with the ratios peer/kiln (> 1 means kiln is faster).

  bench_peers.py --kiln-run BIN (--artifacts DIR | --kiln-compile BIN) [--models-dir DIR]
                 [--iterations N]

Artifacts are <model>_1x128.kiln in --artifacts, or compiled into a temporary directory with
--kiln-compile. Exit: 0 done, 2 usage, 77 no GPU (ctest's skip code).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

from e2e_test import default_models_dir, has_gpu  # one GPU check for every GPU test script

CONFIGS = {
    "gpt2_tiny_dynamo": ("GPT2Config", "GPT2Model",
                         dict(vocab_size=1000, n_embd=128, n_layer=2, n_head=4, n_positions=128)),
    "bert_tiny_dynamo": ("BertConfig", "BertModel",
                         dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2,
                              num_attention_heads=4, intermediate_size=512)),
    "bert_tiny_legacy": ("BertConfig", "BertModel",
                         dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2,
                              num_attention_heads=4, intermediate_size=512)),
    "llama_tiny_dynamo": ("LlamaConfig", "LlamaModel",
                          dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2,
                               num_attention_heads=4, num_key_value_heads=2, intermediate_size=344,
                               max_position_embeddings=128)),
}


def kiln_p50(kiln_run, art, feeds, n, tmp):
    cmd = [kiln_run, art, "--bench", str(n)]
    for k, v in feeds.items():
        p = os.path.join(tmp, k + ".npy")
        np.save(p, v)
        cmd += ["--input", f"{k}={p}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"p50=([0-9.]+)", out).group(1))


def ort_median(model, feeds, n):
    import onnxruntime as ort
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    for _ in range(10):
        sess.run(None, feeds)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def torch_median(name, feeds, n):
    import torch
    import transformers
    cfg_cls, model_cls, kw = CONFIGS[name]
    cfg = getattr(transformers, cfg_cls)(**kw)
    model = getattr(transformers, model_cls)(cfg).cuda().eval()
    tf = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.inference_mode():
        for _ in range(10):
            model(**tf)
        times = []
        for _ in range(n):
            start.record()
            model(**tf)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--artifacts")
    ap.add_argument("--kiln-compile")
    ap.add_argument("--models-dir", default=default_models_dir(),
                    help="the shared models (default: $KILN_MODELS_DIR, else ../shared/models)")
    ap.add_argument("--iterations", type=int, default=500)
    args = ap.parse_args()
    if not (args.artifacts or args.kiln_compile):
        ap.error("need --artifacts or --kiln-compile")
    if not has_gpu():
        print("SKIP: no GPU")
        return 77
    rng = np.random.default_rng(0)
    versions = {"onnxruntime": "onnxruntime", "torch": "torch", "transformers": "transformers"}
    for label, module in versions.items():
        try:
            versions[label] = __import__(module).__version__
        except Exception:  # noqa: BLE001 - a missing peer is reported in its row
            versions[label] = "missing"
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    print(f"GPU {gpu}; " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"{'model':20s} {'kiln p50 ms':>12s} {'ort-cpu ms':>11s} {'torch ms':>9s} {'ort/kiln':>9s} {'torch/kiln':>11s}")
    measured, incomplete = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in CONFIGS:
            model = os.path.join(args.models_dir, name + ".onnx")
            art = os.path.join(args.artifacts or tmp, name + "_1x128.kiln")
            if not args.artifacts and os.path.exists(model):
                spec = "input_ids=1x128" + (",attention_mask=1x128" if name.startswith("bert") else "")
                subprocess.run([args.kiln_compile, model, "--shape", spec, "-o", art], check=True,
                               stdout=subprocess.DEVNULL)
            if not (os.path.exists(model) and os.path.exists(art)):
                print(f"{name:20s} skipped (missing {model if not os.path.exists(model) else art})")
                incomplete += 1
                continue
            feeds = {"input_ids": rng.integers(0, 1000, (1, 128), dtype=np.int64)}
            if name.startswith("bert"):
                feeds["attention_mask"] = np.ones((1, 128), np.int64)
            k = kiln_p50(args.kiln_run, art, feeds, args.iterations, tmp)
            o = ort_median(model, feeds, min(args.iterations, 200))
            try:
                t = torch_median(name, feeds, args.iterations)
            except Exception as e:  # torch/transformers missing or failing: report, keep going
                print(f"  torch peer unavailable: {e}")
                t = float("nan")
            print(f"{name:20s} {k:12.4f} {o:11.4f} {t:9.4f} {o / k:9.2f} {t / k:11.2f}", flush=True)
            measured += 1
            incomplete += not all(np.isfinite([k, o, t]))
    # Fails (exit 1) when a model or a peer could not be measured: a benchmark that
    # measured nothing must not pass.
    print(f"bench-peers: {measured} models measured, {incomplete} incomplete")
    return 0 if measured and not incomplete else 1


if __name__ == "__main__":
    sys.exit(main())
