#!/usr/bin/env python3
"""Interleaved A/B timing of kiln artifacts on one GPU: kiln-run --bench of each variant in turn,
for several rounds, so that the variants share the machine's state (clocks, temperature, other
work); the PyTorch peers of scripts/bench_real_size.sh moved by up to 35% between calls of one day
on the H200, far more than most kiln changes.

Each VARIANT is LABEL=ARTIFACT or LABEL=ENV=VALUE[,ENV=VALUE...]:ARTIFACT (environment for that
kiln-run, e.g. KILN_PROGRAMMATIC_LAUNCH=0). Inputs are generated (--inputs-generate random), so any
artifact runs without input files. Prints every round's p50 (ms), then per variant the median of
the rounds and its ratio to the first variant; exit 0 when every run succeeded, 1 otherwise, 77 when
kiln-run reports no GPU.

  python3 test/bench/ab_kiln_run.py --kiln-run build/bin/kiln-run --rounds 3 --iters 200 \\
      base=gpt2-a.kiln new=gpt2-b.kiln pdl-off=KILN_PROGRAMMATIC_LAUNCH=0:gpt2-b.kiln
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def parse_variant(text):
    label, sep, rest = text.partition("=")
    if not sep or not label or not rest:
        raise argparse.ArgumentTypeError("expected LABEL=ARTIFACT or LABEL=ENV=V[,ENV=V]:ARTIFACT, got %r" % text)
    env = {}
    if ":" in rest and "=" in rest.split(":", 1)[0]:
        assignments, rest = rest.split(":", 1)
        for a in assignments.split(","):
            k, eq, v = a.partition("=")
            if not eq or not k:
                raise argparse.ArgumentTypeError("bad environment assignment %r in %r" % (a, text))
            env[k] = v
    return label, env, rest


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln-run", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "bin", "kiln-run"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=200, help="kiln-run --bench N (timed runs per round)")
    p.add_argument("--timeout", type=int, default=120, help="seconds per kiln-run")
    p.add_argument("variants", nargs="+", type=parse_variant, metavar="VARIANT")
    args = p.parse_args(argv)
    for _, _, artifact in args.variants:
        if not os.path.isfile(artifact):
            print("ab_kiln_run: no artifact %s" % artifact)
            return 2
    results = {label: [] for label, _, _ in args.variants}
    failed = False
    for r in range(1, args.rounds + 1):
        for label, env, artifact in args.variants:
            cmd = [args.kiln_run, artifact, "--inputs-generate", "random", "--bench", str(args.iters)]
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                                     env=dict(os.environ, **env))
                text, rc = out.stdout + out.stderr, out.returncode
            except (OSError, subprocess.TimeoutExpired) as e:
                text, rc = str(e), -1
            m = re.search(r"p50=([0-9.]+)", text)
            if rc != 0 or not m:
                if "CUDA driver not found" in text or "CUDA_ERROR_NO_DEVICE" in text:
                    print("SKIP: no GPU (%s)" % text.strip().splitlines()[-1])
                    return 77
                print("round %d %-16s FAILED (exit %d): %s" % (r, label, rc, text.strip()[-300:]))
                failed = True
                continue
            results[label].append(float(m.group(1)))
            print("round %d %-16s p50 %.4f ms" % (r, label, results[label][-1]), flush=True)
    first = args.variants[0][0]
    base = statistics.median(results[first]) if results[first] else float("nan")
    print("\n%-16s %12s %10s  %s" % ("variant", "median ms", "/ " + first, "rounds"))
    for label, env, artifact in args.variants:
        v = results[label]
        med = statistics.median(v) if v else float("nan")
        print("%-16s %12.4f %10.3f  %s" % (label, med, med / base if base == base else float("nan"),
                                           " ".join("%.4f" % x for x in v)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
