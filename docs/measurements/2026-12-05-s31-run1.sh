#!/usr/bin/env bash
# Session 31, run 1 (planned; no device was lent in session 31): the session's checks and the
# batch-8 A/B, on an H200 (or H100).
# 1. kv-cache checks: onnxruntime-genai's exports under --kv-cache (kv-cache-genai, every
#    variant), and issue 19's 64-step rule (KILN_KV_STEPS=64: the torch exports' reference from
#    PyTorch itself) on fp16-b1, fp16-b8 and the programs with kiln-run --generate.
# 2. A/B of --skinny-tc-occupancy=3 (the tensor-core few-row GEMMs at 3 blocks per SM, A in
#    chunks of 512 K rows) on the benchmark's export: batch-8 and batch-1 generate at P = 128,
#    alternated twice with the defaults; decode_b8 and decode_b1 as CUDA graphs. Batch 8 /
#    batch 1 was 4.85 in session 30 (target 5).
# Carry .carry-bench (KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh) and .carry-gpu's
# kv_cache_decode_test and kv_cache_programs_test (build/test), not gemm_skinny_test (run 2).
# Argument: checks (part 1), ab (part 2) or all (the default); one device call holds 600 s.
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run; PART=${1:-all}
mkdir -p $OUT/r
if [ "$PART" != ab ]; then
KILN_LOG_DIR=$OUT/r/checks timeout 150 scripts/device_checks.sh kv-cache-genai > $OUT/r/genai.txt 2>&1; echo "kv-cache-genai rc $?"
grep -E "^(PASS|FAIL)|passed" $OUT/r/checks/kv-cache-genai.log | tail -4
KILN_LOG_DIR=$OUT/r/checks64 KILN_KV_STEPS=64 KILN_KV_ONLY=fp16-b1,fp16-b8,fp32-b3,programs-fp16 timeout 200 scripts/device_checks.sh kv-cache > $OUT/r/steps64.txt 2>&1; echo "kv-cache 64 steps rc $?"
grep -E "^(PASS|FAIL)|passed|SKIP" $OUT/r/checks64/kv-cache.log | tail -8
fi
if [ "$PART" != checks ]; then
# The benchmark's export and artifact (no peers), then the occupancy artifact from the same command.
KILN_LOG_DIR=$OUT/r/logs timeout 300 $S --generate --prompts 128 --batches 1,8 --peers "" > $OUT/r/bench.txt 2>&1; echo "bench rc $?"
grep -E "kiln P=|copy bandwidth" $OUT/r/bench.txt | tail -4
cp .bench-work/llama_gen.kiln /tmp/a.kiln
timeout 120 python3 -c "
import json, subprocess
c = json.load(open('.bench-work/llama_gen.kiln.stamp.json'))['cmd']
c[c.index('-o') + 1] = '/tmp/o.kiln'
subprocess.run(c + ['--skinny-tc-occupancy=3', '--quiet'], check=True)" > $OUT/r/compile-o.txt 2>&1; echo "compile o rc $?"
P=.bench-work/prompt-128.npy
for round in 1 2; do
  for art in a o; do
    for b in 8 1; do
      timeout 60 $R /tmp/$art.kiln --generate 256 --prompt-ids $P --batch $b --warmup 1 --json > /tmp/g.json 2>/dev/null
      python3 -c "import json; d = json.load(open('/tmp/g.json')); print('round $round artifact $art batch $b: step p50 %.3f p99 %.3f ms, %.1f tokens/s, tokens %s' % (d['decode_step_p50_ms'], d['decode_step_p99_ms'], d['decode_tokens_per_s'], d['sequences'][0]['tokens'][:12]))" 2>&1 | tee -a $OUT/r/ab.txt
    done
  done
done
for art in a o; do for p in decode_b8 decode_b1; do echo "graph $art $p: $($R /tmp/$art.kiln --program $p --inputs-generate random:1 --bench 300 2>&1 | grep -E 'latency_ms' | head -1)"; done; done 2>&1 | tee -a $OUT/r/ab.txt
fi
tar czf $OUT/run1-$PART.tgz -C $OUT r && rm -rf $OUT/r
exit 0
