#!/usr/bin/env bash
# Session 25, run 5 (one device call, H200), compiler 68b4cb7 + the kv-cache test's
# "-separate-append" variant: the attention kernels' correctness after the softmax change, the
# generation benchmark with peers, and the kv-cache decode checks with the fused append as the
# default. Carry .carry-bench, .carry-gpu.
export KILN_LOG_DIR=$OUT/logs
for t in attention_test decode_attention_test; do xz -dkc .carry-gpu/$t.xz > .carry-gpu/$t; chmod +x .carry-gpu/$t; done
timeout 100 .carry-gpu/attention_test > $OUT/attention-test.txt 2>&1; echo "attention_test rc $?"
timeout 120 .carry-gpu/decode_attention_test --no-timing > $OUT/decode-attention.txt 2>&1; echo "decode_attention_test rc $?"
scripts/bench_real_size.sh --generate --prompts 128,2048 --batches 1,8 --peers static_compile,forward_ro > $OUT/bench.txt 2>&1; echo "bench rc $?"
KILN_LOG_DIR=$OUT/checks KILN_KV_ONLY=fp16-b1,fp16-b8,fp32-b3,bf16-b3,programs-fp16,programs-fp32,programs-fp16-separate-append \
  timeout 150 scripts/device_checks.sh kv-cache; echo "kv-cache rc $?"
rm -f .carry-gpu/attention_test .carry-gpu/decode_attention_test
exit 0
