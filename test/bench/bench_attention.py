#!/usr/bin/env python3
"""bench_attention.py - PyTorch SDPA at the shapes of test/gpu/attention_test.cu's benchmark.

Times torch.nn.functional.scaled_dot_product_attention (f16, [B, H, S, D] contiguous) the way
attention_test --bench times kiln's kernels: 20 launches captured into a CUDA graph, 3 warm-up
replays, the median of 20 timed replays divided by 20 (long rows: 2 launches, 6 replays), and
prints the same line format, "attn <name> B H S D causal us TFLOP/s sdpa-<backend>" (causal FLOPs
counted as half).

With --kiln BIN it also runs `BIN --bench` (or `--bench-long` with --long; `--filter F` passed on
with --kiln-filter F), keeps the fastest kiln configuration of every shape and prints a table
"name  kiln us (config)  sdpa us  speed-up" where speed-up = sdpa us / kiln us (> 1: kiln faster).

  python3 test/bench/bench_attention.py [--long] [--backend flash|efficient|cudnn|math]
                                        [--kiln build/attention_test [--kiln-filter sm90]]
"""
import argparse
import math
import re
import subprocess
import sys

# (name, B, H, S, D, causal): test/gpu/attention_test.cu main(), --bench.
SHAPES = [
    ("b4h32s2048d128c", 4, 32, 2048, 128, True),
    ("b4h32s2048d128", 4, 32, 2048, 128, False),
    ("gpt2-8x512", 8, 12, 512, 64, True),
    ("bert-8x512", 8, 12, 512, 64, False),
    ("gpt2-1x128", 1, 12, 128, 64, True),
    ("bert-1x128", 1, 12, 128, 64, False),
    ("llama-4x512", 4, 32, 512, 64, True),
    ("llama-1x128", 1, 32, 128, 64, True),
    ("llama-1x2048", 1, 32, 2048, 64, True),
]


def long_shapes():
    """--bench-long: batch 1, 4, 8 x 4k, 8k, 16k tokens, 32 heads of 128, causal and not."""
    out = []
    for b in (1, 4, 8):
        for s in (4096, 8192, 16384):
            name = f"b{b}h32s{s}d128"
            out.append((name + "c", b, 32, s, 128, True))
            out.append((name, b, 32, s, 128, False))
    return out


def flops(b, h, s, d, causal):
    return 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)


def time_sdpa(torch, backend, b, h, s, d, causal):
    """Median µs of one SDPA call inside a CUDA graph (attention_test's timeGraph)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "math": SDPBackend.MATH,
    }
    gen = torch.Generator(device="cuda").manual_seed(1)
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16, generator=gen)
               for _ in range(3))
    work = flops(b, h, s, d, causal)
    launches, replays = (2, 6) if work > 1e12 else (20, 20)
    f = torch.nn.functional.scaled_dot_product_attention
    with sdpa_kernel(backends[backend]):
        out = f(q, k, v, is_causal=causal)  # compile / select outside the capture
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                out = f(q, k, v, is_causal=causal)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(launches):
                out = f(q, k, v, is_causal=causal)
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    mid = len(times) // 2
    ms = 0.5 * (times[mid - 1] + times[mid]) if len(times) % 2 == 0 else times[mid]
    del out
    return ms * 1e3 / launches


def run_kiln(binary, long, filt):
    """Fastest kiln line per shape name: {name: (us, config)}."""
    cmd = [binary, "--bench-long" if long else "--bench"]
    if filt:
        cmd += ["--filter", filt]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    best = {}
    for line in text.splitlines():
        m = re.match(r"attn (\S+) \d+ \d+ \d+ \d+ \d+ ([\d.]+) [\d.]+ (\S+)", line)
        if not m:
            continue
        name, us, cfg = m.group(1), float(m.group(2)), m.group(3)
        if name not in best or us < best[name][0]:
            best[name] = (us, cfg)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--long", action="store_true", help="the --bench-long shapes")
    ap.add_argument("--backend", default="flash", choices=["flash", "efficient", "cudnn", "math"])
    ap.add_argument("--kiln", metavar="BIN", help="attention_test binary to compare with")
    ap.add_argument("--kiln-filter", metavar="F", help="--filter for the kiln binary (tc, sm90)")
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("bench_attention.py: no CUDA device", file=sys.stderr)
        return 2
    shapes = long_shapes() if args.long else SHAPES
    print(f"# device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("# kernel name B H S D causal us TFLOP/s config")
    sdpa = {}
    for name, b, h, s, d, causal in shapes:
        us = time_sdpa(torch, args.backend, b, h, s, d, causal)
        sdpa[name] = us
        print(f"attn {name} {b} {h} {s} {d} {int(causal)} {us:.2f} "
              f"{flops(b, h, s, d, causal) / us * 1e-6:.1f} sdpa-{args.backend}", flush=True)
    if args.kiln:
        kiln = run_kiln(args.kiln, args.long, args.kiln_filter)
        print(f"\n{'name':<18} {'kiln us':>10}  {'config':<26} {'sdpa us':>10} {'speed-up':>9}")
        ratios = []
        for name, *_ in shapes:
            if name not in kiln:
                continue
            us, cfg = kiln[name]
            ratios.append(sdpa[name] / us)
            print(f"{name:<18} {us:>10.2f}  {cfg:<26} {sdpa[name]:>10.2f} {ratios[-1]:>8.2f}x")
        if ratios:
            geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            print(f"geometric mean speed-up (sdpa us / kiln us): {geo:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
