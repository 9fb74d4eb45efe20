#!/usr/bin/env python3
"""Scores prefill plans with measured program latencies (no GPU): how long the prompts 1..N take
to prefill when cut by the least padding (kiln before session 22), by the compiler's estimates
(Program.estimated_us, what kiln_generate uses now), and by the measured latencies themselves
(the best plan). A model of runtime/src/Generate.cpp's planPrefill, for predicting what the plan
by time gains before it is measured on a GPU (docs/generation.md).

    kiln-run steps.kiln --info --json > info.json      # the estimates, build machine
    prefill_plan_model.py --info info.json --measured 1:830,32:1114,256:1946,2048:8000

--measured gives each chunk size's latency in us (1: the decode_b1 step), e.g. from
`kiln-run steps.kiln --program NAME --inputs-generate random:1 --bench 50` on the GPU.

    prefill_plan_model.py --hbm P:B:STEP_MS,... --bandwidth GBPS

prints the HBM fraction of decode steps instead: bytes a step of batch B at context P + 128 reads
(test/bench/bench_generate.py's step_bytes for the benchmark's 0.8B Llama: every weight but the
embedding once, and each sequence's K and V) over STEP_MS and the copy bandwidth.
"""

def llama_step_bytes(batch, context):
    """bench_generate.step_bytes for the benchmark's Llama (bench_real_size.MODELS["llama"]) at
    fp16, from its config's shapes instead of a torch model (untied lm_head)."""
    from bench_real_size import MODELS  # noqa: E402 - numpy only at import

    c = MODELS["llama"]["config"]
    h, d = c["hidden_size"], c["hidden_size"] // c["num_attention_heads"]
    kv, layers = c["num_key_value_heads"], c["num_hidden_layers"]
    layer = 2 * h * h + 2 * h * kv * d + 3 * h * c["intermediate_size"] + 2 * h
    weights = (layers * layer + h + c["vocab_size"] * h) * 2
    return weights + 2 * layers * kv * d * 2 * context * batch
import argparse
import json
import math
import sys


def plan_by_time(cost, prompt, capacity, price=0.0):
    """Chunk sizes of the least summed cost plus `price` per padded token; only the last chunk
    padded, inside `capacity`; ties to less padding (planPrefill's rule)."""
    full = [math.inf] * (prompt + 1)
    first = [None] * (prompt + 1)
    full[0] = 0.0
    for m in range(1, prompt + 1):
        for t in sorted(cost, reverse=True):
            if t <= m and cost[t] + full[m - t] < full[m] * (1 - 1e-9):
                full[m], first[m] = cost[t] + full[m - t], t
    best = None
    for t in sorted(cost, reverse=True):
        for n in range(min(t, prompt), 0, -1):
            start = prompt - n
            if start + t > capacity or full[start] == math.inf:
                continue
            key = (cost[t] + full[start] + price * (t - n), t - n)
            if best is None or key[0] < best[0][0] * (1 - 1e-9) or (
                    key[0] <= best[0][0] * (1 + 1e-9) and key[1] < best[0][1]):
                best = (key, t, start)
    chunks, m = [], best[2]
    while m > 0:
        chunks.append(first[m])
        m -= first[m]
    return sorted(chunks, reverse=True) + [best[1]]


def plan_by_padding(sizes, prompt, capacity):
    """planPrefillFrom's rule (prefill chunks only; no chunk past `capacity`)."""
    steps = sorted((s for s in sizes if s > 1), reverse=True)
    start, chunks = 0, []
    while start < prompt:
        rest = prompt - start
        fits = [s for s in steps if start + s <= capacity]
        chosen = next((s for s in sorted(fits) if s >= rest and s - rest <= rest // 7), None)
        chosen = chosen or next((s for s in fits if s <= rest), None)
        chosen = chosen or next((s for s in sorted(fits) if s >= rest), None)
        chosen = chosen or 1
        chunks.append(chosen)
        start += min(rest, chosen)
    return chunks


def mean_padding(plans):
    """(padded / run averaged over the prompts, all padded / all run) of {prompt: chunks}."""
    per = [(sum(c) - p) / sum(c) for p, c in plans.items()]
    return sum(per) / len(per), sum(sum(c) - p for p, c in plans.items()) / sum(
        sum(c) for c in plans.values())


def padding_price(cost, capacity, bound=0.125, prefix=None):
    """prefillPaddingPrice (runtime/src/Generate.cpp): the least price per padded token, found
    by bisection to 1%, whose plans over prompts 1..capacity and over 1..prefix (since session
    34 the longest chunk; None: capacity only, the rule before) keep both mean paddings within
    `bound`; 0 when the plans of least time already do."""
    def worst(price):
        plans = {q: plan_by_time(cost, q, capacity, price) for q in range(1, capacity + 1)}
        ranges = [plans] + ([{q: plans[q] for q in range(1, min(prefix, capacity) + 1)}]
                            if prefix else [])
        return max(max(mean_padding(r)) for r in ranges)
    if worst(0) <= bound:
        return 0.0
    most = max(cost.values())
    low, high = 0.0, max(most, 1.0)
    while worst(high) > bound and high < most * 1000:
        high *= 4
    while high - low > 0.01 * high:
        mid = 0.5 * (low + high)
        if worst(mid) <= bound:
            high = mid
        else:
            low = mid
    return high


def parse_sizes(text):
    return {int(k): float(v) for k, v in (item.split(":") for item in text.split(","))}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--info", help="kiln-run --info --json of the artifact (its estimated_us)")
    p.add_argument("--estimated", help="instead of --info: SIZE:US,... of the estimates")
    p.add_argument("--measured", help="SIZE:US,... measured (1: decode_b1)")
    p.add_argument("--hbm", help="P:B:STEP_MS,... decode steps (prompt, batch, p50 ms)")
    p.add_argument("--bandwidth", type=float, help="copy bandwidth, GB/s (with --hbm)")
    p.add_argument("--prompts", type=int, default=2048, help="prompt lengths 1..N")
    p.add_argument("--capacity", type=int, default=2304, help="tokens a sequence holds")
    args = p.parse_args(argv)
    if args.hbm:
        if not args.bandwidth:
            p.error("--hbm needs --bandwidth")
        for item in args.hbm.split(","):
            prompt, batch, ms = item.split(":")
            step = llama_step_bytes(int(batch), int(prompt) + 128)
            print("P=%s B=%s: %.2f GB per step, HBM fraction %.3f" % (
                prompt, batch, step / 1e9, step / (float(ms) / 1e3) / (args.bandwidth * 1e9)))
        return 0
    if not args.measured:
        p.error("--measured is required (or --hbm)")
    measured = parse_sizes(args.measured)
    if args.info:
        with open(args.info, encoding="utf-8") as f:
            info = json.load(f)
        estimated = {}
        for prog in info["artifact"]["programs"]:
            name = prog["name"]
            if name == "decode_b1":
                estimated[1] = prog["estimated_us"]
            elif name.startswith("prefill_b1_s"):
                estimated[int(name.rsplit("_s", 1)[1])] = prog["estimated_us"]
    else:
        estimated = parse_sizes(args.estimated)
    if set(estimated) != set(measured):
        sys.exit("estimated sizes %s differ from measured %s" % (sorted(estimated), sorted(measured)))
    print("estimates us: %s" % ", ".join("%d: %.1f" % kv for kv in sorted(estimated.items())))
    n = args.prompts
    score = lambda chunks: sum(measured[c] for c in chunks)  # noqa: E731
    padding = [score(plan_by_padding(measured, q, args.capacity)) for q in range(1, n + 1)]
    by_estimate = [score(plan_by_time(estimated, q, args.capacity)) for q in range(1, n + 1)]
    longest = max(c for c in estimated if c > 1)
    price = padding_price(estimated, args.capacity, prefix=longest)
    priced_plans = {q: plan_by_time(estimated, q, args.capacity, price)
                    for q in range(1, args.capacity + 1)}
    priced = [score(priced_plans[q]) for q in range(1, n + 1)]
    # The rule before session 34: the bound over 1..capacity only.
    old_price = padding_price(estimated, args.capacity)
    old_plans = {q: plan_by_time(estimated, q, args.capacity, old_price)
                 for q in range(1, args.capacity + 1)}
    unpriced = mean_padding({q: plan_by_time(estimated, q, args.capacity)
                             for q in range(1, args.capacity + 1)})
    best = [score(plan_by_time(measured, q, args.capacity)) for q in range(1, n + 1)]
    worse = [q for q in range(1, n + 1) if by_estimate[q - 1] > padding[q - 1] * 1.001]
    print("mean prefill over prompts 1..%d, scored with the measured latencies: by padding %.2f ms, "
          "by the estimates %.2f ms, best %.2f ms" % (
              n, sum(padding) / n / 1e3, sum(by_estimate) / n / 1e3, sum(best) / n / 1e3))
    print("padding over prompts 1..%d by the estimates: %.1f%% per prompt, %.1f%% of the tokens "
          "run; priced at %.2f us per padded token (the bound 12.5%%): %.1f%% and %.1f%%, mean "
          "prefill over 1..%d %.2f ms" % (
              args.capacity, 100 * unpriced[0], 100 * unpriced[1], price,
              *(100 * x for x in mean_padding(priced_plans)), n, sum(priced) / n / 1e3))
    for name, pr, plans in (("over 1..%d and 1..%d (now)" % (args.capacity, longest), price,
                             priced_plans),
                            ("over 1..%d only (before session 34)" % args.capacity, old_price,
                             old_plans)):
        print("price %.2f us, bound %s: padding over prompts 1..%d %.1f%% per prompt, %.1f%% of "
              "the tokens; mean prefill over 1..%d %.3f ms" % (
                  pr, name, n, *(100 * x for x in mean_padding({q: plans[q] for q in range(1, n + 1)})),
                  n, sum(score(plans[q]) for q in range(1, n + 1)) / n / 1e3))
    if worse:
        print("%d lengths slower by the estimates than by padding (%d..%d)" % (
            len(worse), worse[0], worse[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
