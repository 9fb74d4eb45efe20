#!/usr/bin/env python3
"""Where the eager peer of bench_generate.py spends a decode step.

bench_generate.py's eager peer (transformers generate, dynamic cache, fp16, SDPA) took 50-83 ms per
step for the 0.8B Llama on the H100 and H200, where a forward of 16 layers is a few hundred kernel
launches (a few ms from Python). This script times, on the same model and prompt length, in a
process where nothing was compiled before:

  1. generate (greedy, dynamic cache) with the benchmark's streamer: per-step p50 from its stamps;
  2. the same without a streamer (whole call over new tokens);
  3. a hand-written loop: model(next token, past_key_values=the cache), argmax, per step;
  4. torch.profiler over a few generate steps: the ops with the most host time.

Usage: eager_generate_probe.py [--layers N] [--hidden H] [--prompt P] [--new-tokens N]
                               [--device cuda|cpu]
(--layers 2 --device cpu checks the script itself on a machine without a GPU; --hidden 64
--device cpu keeps the 16 layers and 32000 words but makes the model's arithmetic small, so the
times are mostly generate's own host work).
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "export"))

import bench_generate as bg  # noqa: E402 - CONFIG and the streamer of the benchmark
import bench_real_size as brs  # noqa: E402


def sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, default=0, help="override num_hidden_layers (0: the 0.8B's)")
    p.add_argument("--hidden", type=int, default=0,
                   help="override hidden_size (4 query / 2 KV heads, intermediate 2 x hidden; 0: the 0.8B's)")
    p.add_argument("--prompt", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--device", default="cuda")
    args = p.parse_args(argv)

    import torch
    import export_hf
    from transformers import DynamicCache, GenerationConfig

    config = dict(bg.CONFIG)
    if args.layers:
        config["num_hidden_layers"] = args.layers
    if args.hidden:
        config.update(hidden_size=args.hidden, num_attention_heads=4, num_key_value_heads=2,
                      intermediate_size=2 * args.hidden)
    ns = argparse.Namespace(pretrained=None, family="llama", config=config, seed=0, task="causal-lm")
    model, _, vocab = export_hf.build(ns)
    dtype = torch.float16 if args.device == "cuda" else torch.float32
    model = brs.set_attention(model.to(dtype).to(args.device).eval(), "sdpa")
    model.generation_config.eos_token_id = None
    rng = np.random.default_rng(bg.PROMPT_SEED)
    ids = torch.tensor(rng.integers(0, vocab, size=(1, args.prompt)), device=args.device)
    gen = GenerationConfig(max_new_tokens=args.new_tokens, do_sample=False, eos_token_id=None, pad_token_id=0)
    print("torch %s, device %s, layers %d, prompt %d, new tokens %d"
          % (torch.__version__, torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
             config["num_hidden_layers"], args.prompt, args.new_tokens), flush=True)

    with torch.inference_mode():
        for rnd in range(2):  # the first round warms up
            streamer = bg.StampStreamer()
            sync(torch, args.device)
            t0 = time.perf_counter()
            model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), streamer=streamer,
                           generation_config=gen)
            sync(torch, args.device)
            t1 = time.perf_counter()
            steps = np.diff(streamer.times[1:]) * 1e3
            print("round %d generate with streamer: %.1f ms in all, step p50 %.3f ms, min %.3f ms"
                  % (rnd, (t1 - t0) * 1e3, np.percentile(steps, 50), steps.min()), flush=True)

            sync(torch, args.device)
            t0 = time.perf_counter()
            model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=gen)
            sync(torch, args.device)
            print("round %d generate without streamer: %.3f ms per token (whole call)"
                  % (rnd, (time.perf_counter() - t0) * 1e3 / args.new_tokens), flush=True)

            cache = DynamicCache()
            out = model(input_ids=ids, past_key_values=cache, use_cache=True)
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
            times = []
            for _ in range(args.new_tokens - 1):
                sync(torch, args.device)
                t0 = time.perf_counter()
                out = model(input_ids=nxt, past_key_values=out.past_key_values, use_cache=True)
                nxt = out.logits[:, -1].argmax(-1, keepdim=True)
                nxt.cpu()
                times.append((time.perf_counter() - t0) * 1e3)
            print("round %d hand loop (forward + argmax + token to host): step p50 %.3f ms, min %.3f ms"
                  % (rnd, np.percentile(times, 50), min(times)), flush=True)

        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.device == "cuda" else [])
        short = GenerationConfig(max_new_tokens=4, do_sample=False, eos_token_id=None, pad_token_id=0)
        with profile(activities=acts) as prof:
            model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=short)
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=25), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
