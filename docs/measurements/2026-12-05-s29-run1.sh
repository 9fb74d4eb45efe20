#!/usr/bin/env bash
# Session 29, run 1 (planned for the next device call, H200; sessions 28 and 29 had no device lent).
# Replaces 2026-12-04-s28-run1.sh (everything it runs, first), then adds session 29's checks:
# 1. persistent_decode_bench: how close a persistent batch-1 decode step of the 0.8B Llama gets
#    to the copy bandwidth (ring depths 4/8/11, with and without loading the next stage's weights
#    before the grid barrier), and its logits against one plain kernel per GEMV.
# 2. small_models_test (rotary_angles at --precision fp16, positions up to 4095), the kv-cache
#    checks, sample_test and decode_attention_test (session 27's device code after its review).
# 3. kv-cache-ops: the decoders whose cache is ONNX Attention-23 past_key/past_value or a
#    TensorScatter-24 static cache (session 29), decode steps, programs and kiln-run --generate
#    against onnxruntime.
# 4. torch's own ONNX Attention: the tiny Llama exported by torch.onnx (dynamo) at opset 23 with
#    cache I/O (SDPA becomes the Attention op), its node types, check_export.py against torch
#    (writing the .ref.npz), then its --kv-cache decode steps and programs against that reference.
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
KILN_LOG_DIR=$OUT/r/checks KILN_KV_ONLY=fp32-b1,fp16-b1,fp16-b8,programs-fp32,programs-fp16 timeout 120 scripts/device_checks.sh kv-cache-ops > $OUT/r/kv-cache-ops.txt 2>&1; echo "kv-cache-ops rc $?"
tail -3 $OUT/r/checks/kv-cache-ops.log
M=test/models/llama_tiny_causal_past_dynamo_opset23
KC=$(scripts/bench_real_size.sh --setup-only); chmod +x .carry-gpu/* 2>/dev/null
timeout 150 python3 examples/export/export_hf.py llama --task causal-lm --with-past --opset 23 -o $M.onnx > $OUT/r/export23.txt 2>&1; echo "export opset 23 rc $?"
python3 -c "import collections, onnx; m = onnx.load('$M.onnx'); print(sorted(collections.Counter(n.op_type for n in m.graph.node).items()))" >> $OUT/r/export23.txt 2>&1
timeout 120 python3 examples/export/check_export.py llama --task causal-lm --with-past $M.onnx --save-ref $M.ref.npz >> $OUT/r/export23.txt 2>&1; echo "check_export rc $?"
tail -4 $OUT/r/export23.txt
timeout 150 python3 test/e2e/kv_cache_decode_test.py --exports llama_tiny_causal_past_dynamo_opset23 --only fp32-b1,fp16-b1,fp16-b8,programs-fp16 --kiln-compile $KC --decode-test .carry-gpu/kv_cache_decode_test --programs-test .carry-gpu/kv_cache_programs_test --kiln-run .carry-bench/bin/kiln-run > $OUT/r/kv-cache-opset23.txt 2>&1; echo "kv-cache opset 23 rc $?"
tail -5 $OUT/r/kv-cache-opset23.txt
timeout 40 stdbuf -oL /tmp/sample_test > $OUT/r/sample-test.txt 2>&1; echo "sample_test rc $?"; tail -1 $OUT/r/sample-test.txt
timeout 200 stdbuf -oL /tmp/decode_attention_test --no-timing > $OUT/r/decode-attention-test.txt 2>&1; echo "decode_attention_test rc $?"
grep -E "^FAIL|cases failed|passed" $OUT/r/decode-attention-test.txt | tail -3
tar czf $OUT/run1.tgz -C $OUT r && rm -rf $OUT/r
exit 0
