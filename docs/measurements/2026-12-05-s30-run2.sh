#!/usr/bin/env bash
# Session 30, run 2 (H200): session 30's two decode changes, checked and timed.
# (Run 1, gemm_skinny_test --bench-layers, found both L2 prefetches slower: the default is now
# --weight-prefetch=off.)
# 1. kv-cache checks (fp16-b1 and the programs of a --shape range, whose generate checks now
#    include the chained steps against KILN_DECODE_CHAIN=0, greedy, sampled and with a stop
#    token) with the default compiler.
# 2. The generation benchmark without peers (the defaults: chained steps, no L2 prefetch).
# 3. A/B on the benchmark's export: a = the defaults, b = --weight-prefetch=own (session 29's
#    kernels), c = --weight-prefetch=next, d = --skinny-weight-preload=false; batch-1 and
#    batch-8 generate (P = 128, 256 tokens), and a with KILN_DECODE_CHAIN=0, alternated twice;
#    decode_b1 as a CUDA graph for each.
# Carry .carry-bench (KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh) and .carry-gpu's
# kv_cache_decode_test and kv_cache_programs_test (build/test).
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
mkdir -p $OUT/r
KILN_LOG_DIR=$OUT/r/checks KILN_KV_ONLY=fp16-b1,programs-fp16 timeout 150 scripts/device_checks.sh kv-cache > $OUT/r/kv-cache.txt 2>&1; echo "kv-cache rc $?"
grep -E "^(PASS|FAIL)|passed" $OUT/r/checks/kv-cache.log | tail -8
KILN_LOG_DIR=$OUT/r/logs timeout 330 $S --generate --prompts 128,2048 --batches 1,8 --peers "" > $OUT/r/bench.txt 2>&1; echo "bench rc $?"
grep -E "kiln P=|copy bandwidth" $OUT/r/bench.txt | tail -6
cp .bench-work/llama_gen.kiln /tmp/a.kiln
timeout 150 python3 -c "
import json, subprocess
c = json.load(open('.bench-work/llama_gen.kiln.stamp.json'))['cmd']
c[c.index('-o') + 1] = '/tmp/b.kiln'
subprocess.run(c + ['--weight-prefetch=own', '--quiet'], check=True)
c[c.index('-o') + 1] = '/tmp/c.kiln'
subprocess.run(c + ['--weight-prefetch=next', '--quiet'], check=True)
c[c.index('-o') + 1] = '/tmp/d.kiln'
subprocess.run(c + ['--skinny-weight-preload=false', '--quiet'], check=True)" > $OUT/r/compile-bcd.txt 2>&1; echo "compile b c d rc $?"
P=.bench-work/prompt-128.npy
for round in 1 2; do
  for run in a:1 b:1 c:1 d:1 a:0; do
    art=${run%:*}; chain=${run#*:}
    {
      for b in 1 8; do
        KILN_DECODE_CHAIN=$chain timeout 60 $R /tmp/$art.kiln --generate 256 --prompt-ids $P --batch $b --warmup 1 --json > /tmp/g.json 2>/dev/null
        python3 -c "import json; d = json.load(open('/tmp/g.json')); print('round $round artifact $art chain $chain batch $b: step p50 %.3f p99 %.3f ms, %.1f tokens/s' % (d['decode_step_p50_ms'], d['decode_step_p99_ms'], d['decode_tokens_per_s']))" 2>&1 | tee -a $OUT/r/ab.txt
      done
    }
  done
done
for art in a b c d; do echo "graph $art: $($R /tmp/$art.kiln --program decode_b1 --inputs-generate random:1 --bench 300 2>&1 | grep -E 'latency_ms' | head -1)"; done 2>&1 | tee -a $OUT/r/ab.txt
tar czf $OUT/run2.tgz -C $OUT r && rm -rf $OUT/r
exit 0
