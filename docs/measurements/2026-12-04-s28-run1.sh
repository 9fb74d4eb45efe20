#!/usr/bin/env bash
# Session 28, run 1 (planned for the next device call, H200; session 28 had no device lent).
# 1. persistent_decode_bench: how close a persistent batch-1 decode step of the 0.8B Llama gets
#    to the copy bandwidth (ring depths 4/8/11, with and without loading the next stage's weights
#    before the grid barrier), and its logits against one plain kernel per GEMV.
# 2. small_models_test: rotary_angles at --precision fp16 with positions up to 4095 (the angles
#    now stay f32), with every other small model.
# 3. the kv-cache checks (the decode attention now computes the rotary tables itself; prefill
#    chunks have them in one kernel: kiln-fuse-pointwise).
# 4. sample_test and decode_attention_test: session 27's device code after its review (run 3 of
#    session 27 was never lent a device).
# Carry .carry-bench (KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh) and .carry-gpu with
# persistent_decode_bench.xz, sample_test.xz, decode_attention_test.xz (test/gpu/build_*.sh, then
# xz -T2 -kc) and build/test's kv_cache_decode_test, kv_cache_programs_test, kiln_runtime_gpu_tests.
mkdir -p $OUT/r
for t in persistent_decode_bench sample_test decode_attention_test; do xz -dkc .carry-gpu/$t.xz > /tmp/$t && chmod +x /tmp/$t; done
timeout 60 stdbuf -oL /tmp/persistent_decode_bench > $OUT/r/persistent-decode-bench.txt 2>&1; echo "persistent_decode_bench rc $?"
cat $OUT/r/persistent-decode-bench.txt
KILN_LOG_DIR=$OUT/r/checks timeout 150 scripts/device_checks.sh small-models > $OUT/r/small-models.txt 2>&1; echo "small-models rc $?"
grep -E "rotary_angles|passed|failed" $OUT/r/checks/small-models.log | tail -4
KILN_LOG_DIR=$OUT/r/checks KILN_KV_ONLY=fp16-b1,fp16-b8,bf16-b3,programs-fp16 timeout 130 scripts/device_checks.sh kv-cache > $OUT/r/kv-cache.txt 2>&1; echo "kv-cache rc $?"
tail -1 $OUT/r/kv-cache.txt
timeout 40 stdbuf -oL /tmp/sample_test > $OUT/r/sample-test.txt 2>&1; echo "sample_test rc $?"; tail -1 $OUT/r/sample-test.txt
timeout 200 stdbuf -oL /tmp/decode_attention_test --no-timing > $OUT/r/decode-attention-test.txt 2>&1; echo "decode_attention_test rc $?"
grep -E "^FAIL|cases failed|passed" $OUT/r/decode-attention-test.txt | tail -3
tar czf $OUT/run1.tgz -C $OUT r && rm -rf $OUT/r
exit 0
