#!/usr/bin/env bash
# Session 29, run 1 (planned for the next device call, H200; sessions 28 and 29 had no device lent).
# With run 2, replaces 2026-12-04-s28-run1.sh, and adds session 29's checks:
# 1. persistent_decode_bench: how close a persistent batch-1 decode step of the 0.8B Llama gets
#    to the copy bandwidth (ring depths 4/8/11, with and without loading the next stage's weights
#    before the grid barrier), and its logits against one plain kernel per GEMV.
# 2. small_models_test (rotary_angles at --precision fp16, positions up to 4095) and the
#    kv-cache checks.
# 3. kv-cache-ops: the decoders whose cache is ONNX Attention-23 past_key/past_value or a
#    TensorScatter-24 static cache (session 29), decode steps, programs and kiln-run --generate
#    against onnxruntime.
# (torch's opset-23 export, sample_test and decode_attention_test: 2026-12-05-s29-run2.sh; the
# benchmark: 2026-12-04-s28-run2.sh.)
# Carry .carry-bench (KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh) and .carry-gpu with
# persistent_decode_bench.xz, sample_test.xz, decode_attention_test.xz (test/gpu/build_*.sh, then
# xz -T2 -kc) and build/test's kv_cache_decode_test, kv_cache_programs_test, kiln_runtime_gpu_tests.
mkdir -p $OUT/r
for t in persistent_decode_bench; do xz -dkc .carry-gpu/$t.xz > /tmp/$t && chmod +x /tmp/$t; done
timeout 60 stdbuf -oL /tmp/persistent_decode_bench > $OUT/r/persistent-decode-bench.txt 2>&1; echo "persistent_decode_bench rc $?"
cat $OUT/r/persistent-decode-bench.txt
KILN_LOG_DIR=$OUT/r/checks timeout 150 scripts/device_checks.sh small-models > $OUT/r/small-models.txt 2>&1; echo "small-models rc $?"
grep -E "rotary_angles|passed|failed" $OUT/r/checks/small-models.log | tail -4
KILN_LOG_DIR=$OUT/r/checks KILN_KV_ONLY=fp16-b1,fp16-b8,bf16-b3,programs-fp16 timeout 130 scripts/device_checks.sh kv-cache > $OUT/r/kv-cache.txt 2>&1; echo "kv-cache rc $?"
tail -1 $OUT/r/kv-cache.txt
KILN_LOG_DIR=$OUT/r/checks KILN_KV_ONLY=fp32-b1,fp16-b1,fp16-b8,programs-fp32,programs-fp16 timeout 120 scripts/device_checks.sh kv-cache-ops > $OUT/r/kv-cache-ops.txt 2>&1; echo "kv-cache-ops rc $?"
tail -3 $OUT/r/checks/kv-cache-ops.log
tar czf $OUT/run1.tgz -C $OUT r && rm -rf $OUT/r
exit 0
