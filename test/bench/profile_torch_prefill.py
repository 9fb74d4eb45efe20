#!/usr/bin/env python3
"""Where the peer's prefill time goes: the 0.8B Llama's forward over 1 x P under torch.compile.

The TTFT yardstick of the generation benchmark (test/bench/bench_generate.py) is
torch.compile(mode="reduce-overhead") of the plain forward over a 2048-token prompt. This script
compiles the same model (LlamaForCausalLM, the benchmark's config, random weights, fp16, SDPA) in
torch.compile's default mode (no CUDA graph, so every kernel shows in the profiler), runs the
forward under torch.profiler and prints the CUDA time per kernel name (summed over the layers,
per forward, in us), largest first, with the kernel's share of the forward. Compare with
`kiln-run steps.kiln --program prefill_b1_s2048 --inputs-generate random:1 --profile N`.

Usage (GPU machine): python3 test/bench/profile_torch_prefill.py [--prompt 2048] [--layers N]
Exit: 0 printed, 77 no GPU.
"""

import argparse
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_real_size as brs  # noqa: E402 - the 0.8B Llama config


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompt", type=int, default=2048, help="prompt length (tokens)")
    p.add_argument("--layers", type=int, help="override num_hidden_layers")
    p.add_argument("--iters", type=int, default=5, help="forwards profiled")
    args = p.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("SKIP: no GPU")
        return 77
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = dict(brs.MODELS["llama"]["config"], max_position_embeddings=4096)
    if args.layers:
        cfg["num_hidden_layers"] = args.layers
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**cfg, attn_implementation="sdpa")).half().cuda().eval()
    ids = torch.randint(0, cfg["vocab_size"], (1, args.prompt), device="cuda")
    fwd = torch.compile(model)
    with torch.inference_mode():
        for _ in range(3):
            fwd(input_ids=ids, use_cache=False)
        torch.cuda.synchronize()
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(args.iters):
                fwd(input_ids=ids, use_cache=False)
            torch.cuda.synchronize()
    per = defaultdict(lambda: [0.0, 0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name][0] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            per[e.name][1] += 1
    total = sum(v[0] for v in per.values()) / args.iters
    print("torch.compile forward 1x%d, %d layers: %.1f us of kernels per forward" % (
        args.prompt, cfg["num_hidden_layers"], total))
    print("%10s %6s %8s  %s" % ("us/fwd", "%", "launches", "kernel"))
    for name, (us, n) in sorted(per.items(), key=lambda kv: -kv[1][0]):
        print("%10.1f %6.1f %8d  %s" % (us / args.iters, 100 * us / args.iters / total,
                                       n // args.iters, name[:150]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
