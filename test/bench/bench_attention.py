#!/usr/bin/env python3
"""Times PyTorch SDPA (flash backend) at the shapes of test/gpu/attention_test.cu --bench and
prints kiln's attention kernel (its fastest configuration per shape) against it.

Usage (GPU machine, after building the test with test/gpu/build_attention_test.sh):
    ATTN=build/attention_test python3 test/bench/bench_attention.py [--out results.md]

Both sides run the same shapes, f16, contiguous [B, H, S, D], each launch captured 20 times in a
CUDA graph, median of 20 replays / 20 (the same method as kiln's test/gpu/gpu_test_util.h). FLOPs:
4 * B * H * S * S * D, halved for causal. Ratio = kiln time / SDPA time (below 1: kiln faster).
"""
import argparse
import os
import statistics
import subprocess
import sys


def time_graph(fn, torch, launches=20, replays=20, warmup=3):
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(3):  # compile / select kernels outside the capture
            fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(launches):
            fn()
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0 / launches)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", default=os.environ.get("ATTN", "build/attention_test"),
                    help="attention_test binary (run with --bench)")
    ap.add_argument("--out", help="also write the table here (markdown)")
    args = ap.parse_args()

    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F

    out = subprocess.run([args.kiln, "--bench"], check=True, capture_output=True, text=True).stdout
    best = {}  # shape name -> fastest kiln configuration
    for line in out.splitlines():
        if not line.startswith("attn "):
            continue
        _, name, B, H, S, D, causal, us, tflops, cfg = line.split()
        row = (int(B), int(H), int(S), int(D), bool(int(causal)), float(us), float(tflops), cfg)
        print("kiln", name, cfg, us, "us", tflops, "TFLOP/s")
        if name not in best or row[5] < best[name][5]:
            best[name] = row
    rows = []
    for name, (B, H, S, D, causal, us, tflops, cfg) in best.items():
        q = torch.randn(B, H, S, D, device="cuda", dtype=torch.float16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            t = time_graph(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), torch)
        flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
        rows.append((name, B, H, S, D, causal, us, tflops, t, flops / t * 1e-6, cfg))
    dev = torch.cuda.get_device_name()
    lines = [f"Attention, f16, {dev}, torch {torch.__version__}; CUDA graph of 20 launches, median of 20 replays",
             "",
             "| shape | B | H | S | D | causal | kiln config | kiln µs | kiln TFLOP/s | SDPA flash µs | SDPA TFLOP/s | kiln / SDPA time |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, B, H, S, D, causal, us, tf, t, stf, cfg in rows:
        lines.append(f"| {name} | {B} | {H} | {S} | {D} | {int(causal)} | {cfg} | {us:.1f} | {tf:.0f} | {t:.1f} | {stf:.0f} | {us / t:.2f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
