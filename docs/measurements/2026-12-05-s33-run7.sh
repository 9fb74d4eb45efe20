#!/usr/bin/env bash
# Session 33, run 7: the weight preload above 2 rows in the 0.8B Llama's decode steps. The
# benchmark's export and artifact (no peers, P = 128, batch 1 and 8), then the same compile with
# --skinny-preload-rows=16 (batch 2-8 GEMMs preloaded, A in chunks); batch-8 and batch-1
# generate (256 tokens) alternated twice, the first 12 tokens of row 0 printed (greedy: the same
# tokens or a near-tie), and decode_b8 / decode_b1 as CUDA graphs. Batch 8 / batch 1 was 4.87
# on the H200 (run 2; target 5). Carry .carry-bench (KILN_SKIP_BUILD=1
# scripts/prepare_bench_carry.sh, with the compiler of this session).
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
mkdir -p $OUT/r
KILN_LOG_DIR=$OUT/r/logs timeout 300 $S --generate --prompts 128 --batches 1,8 --peers "" > $OUT/r/bench.txt 2>&1; echo "bench rc $?"
grep -E "kiln P=|copy bandwidth" $OUT/r/bench.txt | tail -4
cp .bench-work/llama_gen.kiln /tmp/a.kiln
timeout 120 python3 -c "
import json, subprocess
c = json.load(open('.bench-work/llama_gen.kiln.stamp.json'))['cmd']
c[c.index('-o') + 1] = '/tmp/p.kiln'
subprocess.run(c + ['--skinny-preload-rows=16', '--quiet'], check=True)" > $OUT/r/compile-p.txt 2>&1; echo "compile p rc $?"
P=.bench-work/prompt-128.npy
for round in 1 2; do
  for art in a p; do
    for b in 8 1; do
      timeout 60 $R /tmp/$art.kiln --generate 256 --prompt-ids $P --batch $b --warmup 1 --json > /tmp/g.json 2>/dev/null
      python3 -c "import json; d = json.load(open('/tmp/g.json')); print('round $round artifact $art batch $b: step p50 %.3f p99 %.3f ms, %.1f tokens/s, tokens %s' % (d['decode_step_p50_ms'], d['decode_step_p99_ms'], d['decode_tokens_per_s'], d['sequences'][0]['tokens'][:12]))" 2>&1 | tee -a $OUT/r/ab.txt
    done
  done
done
for art in a p; do for p in decode_b8 decode_b1; do echo "graph $art $p: $($R /tmp/$art.kiln --program $p --inputs-generate random:1 --bench 300 2>&1 | grep -E 'latency_ms' | head -1)"; done; done 2>&1 | tee -a $OUT/r/ab.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run7.tgz -C $OUT r && rm -rf $OUT/r
exit 0
