#!/usr/bin/env python3
"""Compares the greedy tokens of two test/bench/bench_generate.py runs (an A/B of compiler
options or versions): for each `generate-p<P>-b<B>.log` (kiln-run --generate --json) present in
both log folders, the number of leading tokens each row shares with the other run's same row, and
whether the rows of one run are identical to each other (B copies of one prompt). Prompts are the
same only for prompt lengths drawn in the same order (bench_generate draws them from one
generator in --prompts order).

    compare_generate_tokens.py A/bench-generate B/bench-generate
    compare_generate_tokens.py --across-batches A/bench-generate

--across-batches compares, within one run, row 0 of each batch with the batch-1 tokens of the
same prompt (different decode programs: different GEMM kernels and rounding).
"""
import glob
import json
import os
import sys


def sequences(path):
    text = open(path, encoding="utf-8").read()
    doc = json.loads(text[text.index("{"):text.rindex("}") + 1])
    return [s["tokens"] for s in doc["sequences"]]


def leading_equal(x, y):
    n = 0
    for u, v in zip(x, y):
        if u != v:
            break
        n += 1
    return n


def across_batches(folder):
    for p1 in sorted(glob.glob(os.path.join(folder, "generate-p*-b1.log"))):
        one = sequences(p1)[0]
        for pb in sorted(glob.glob(p1[:-len("b1.log")] + "b*.log")):
            if pb != p1:
                print("%s row 0 vs %s: leading equal %d of %d" % (
                    os.path.basename(pb), os.path.basename(p1),
                    leading_equal(sequences(pb)[0], one), len(one)))


def main(argv):
    if len(argv) == 2 and argv[0] == "--across-batches":
        return across_batches(argv[1])
    if len(argv) != 2:
        sys.exit(__doc__)
    a_dir, b_dir = argv
    for pa in sorted(glob.glob(os.path.join(a_dir, "generate-p*-b*.log"))):
        pb = os.path.join(b_dir, os.path.basename(pa))
        if not os.path.exists(pb):
            continue
        sa, sb = sequences(pa), sequences(pb)
        print("%s: rows %d, tokens %d; leading equal per row %s; rows identical within a %s, "
              "within b %s" % (os.path.basename(pa), len(sa), len(sa[0]),
                               [leading_equal(x, y) for x, y in zip(sa, sb)],
                               all(s == sa[0] for s in sa), all(s == sb[0] for s in sb)))


if __name__ == "__main__":
    main(sys.argv[1:])
