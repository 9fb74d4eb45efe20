#!/usr/bin/env bash
# Session 25, run 4 (one device call, H200): the Hopper attention's softmax without per-element
# branches (attention_sm90.cuh): correctness (decode_attention_test --sm90, attention_test
# --filter sm90), standalone timings, the 2-layer model's prefill profile. Carry .carry-bench,
# .carry-gpu.
export KILN_LOG_DIR=$OUT/logs
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
timeout 150 .carry-gpu/decode_attention_test --sm90 > $OUT/decode-attention-sm90.txt 2>&1; echo "decode_attention_test --sm90 rc $?"
xz -dkc .carry-gpu/attention_test.xz > /tmp/attention_test; chmod +x /tmp/attention_test
timeout 150 /tmp/attention_test --filter sm90 > $OUT/attention-sm90.txt 2>&1; echo "attention_test --filter sm90 rc $?"
cuobjdump -sass -fun prefillSm90Kernel .carry-gpu/decode_attention_test 2>/dev/null | grep -c BSSY
$S --generate --layers 2 --prompts 2048 --batches 1 --new-tokens 8 --peers '' > $OUT/bench-l2.txt 2>&1
cp .bench-work/llama_gen.kiln /tmp/a.kiln
$R /tmp/a.kiln --program prefill_b1_s2048 --inputs-generate random:1 --input kv_cache.seq_lens=zeros --profile 10 > $OUT/prof-l2-empty.txt 2>&1
$R /tmp/a.kiln --program prefill_b1_s2048 --inputs-generate random:1 --profile 10 > $OUT/prof-l2-random.txt 2>&1
exit 0
