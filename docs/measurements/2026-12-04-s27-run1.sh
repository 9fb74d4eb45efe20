#!/usr/bin/env bash
# Session 27, run 1 (one device call, H200): the decode attention's reads before its
# grid-dependency wait (--decode-attention-preload, default on; the QKV GEMM before it then
# triggers early). decode_attention_test (its pre-wait cases launch the kernel with PDL after a
# producer that writes Q and the new rows late); the generation benchmark of the default
# artifact and of --decode-attention-preload=false from one export, alternated twice; decode_b1
# as a CUDA graph; the kv-cache checks against transformers. Carry .carry-bench, .carry-gpu.
export KILN_LOG_DIR=$OUT/logs
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
mkdir -p $OUT/r
xz -dkc .carry-gpu/decode_attention_test.xz > /tmp/decode_attention_test && chmod +x /tmp/decode_attention_test
timeout 150 stdbuf -oL /tmp/decode_attention_test --no-timing > $OUT/r/decode-attention-test.txt 2>&1; echo "decode_attention_test rc $?"
grep -E "FAIL|failed" $OUT/r/decode-attention-test.txt | tail -5
$S --generate --prompts 128,2048 --batches 1,8 --new-tokens 128 --peers '' > $OUT/r/bench-preload.txt 2>&1; echo "bench preload rc $?"
cp .bench-work/llama_gen.kiln /tmp/pre.kiln
$S --generate --prompts 128,2048 --batches 1,8 --new-tokens 128 --peers '' --kiln-flags=--decode-attention-preload=false > $OUT/r/bench-base.txt 2>&1; echo "bench base rc $?"
cp .bench-work/llama_gen.kiln /tmp/base.kiln
J='import json,sys; d=json.load(sys.stdin); print("prefill %.3f ms, %.1f tok/s, p50 %.4f p99 %.4f" % (d["prefill_ms"], d["decode_tokens_per_s"], d["decode_step_p50_ms"], d["decode_step_p99_ms"]))'
for i in 1 2; do for v in base pre; do for b in 1 8; do for p in 128 2048; do
  echo -n "$i $v B$b P$p: "; $R /tmp/$v.kiln --generate 128 --prompt-ids .bench-work/prompt-$p.npy --batch $b --warmup 1 --json 2>/dev/null | python3 -c "$J"
done; done; done; done 2>&1 | tee $OUT/r/alternated.txt
for v in pre base pre base; do echo "$v: $($R /tmp/$v.kiln --program decode_b1 --inputs-generate random:1 --bench 300 2>&1 | grep -E 'latency_ms' | head -1 | tr '\n' ' ')"; done 2>&1 | tee $OUT/r/graph.txt
KILN_LOG_DIR=$OUT/r/checks KILN_KV_ONLY=fp16-b1,fp16-b8,bf16-b3,programs-fp16 timeout 150 scripts/device_checks.sh kv-cache > $OUT/r/kv-cache.txt 2>&1; echo "kv-cache rc $?"
tail -3 $OUT/r/kv-cache.txt
cp -r $OUT/logs $OUT/r/ 2>/dev/null; rm -rf $OUT/logs
tar czf $OUT/run1.tgz -C $OUT r && rm -rf $OUT/r
exit 0
