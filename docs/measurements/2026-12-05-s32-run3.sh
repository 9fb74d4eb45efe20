#!/usr/bin/env bash
# Session 32, run 3: what session 29's run 2 planned (never lent a device since).
# 1. torch's own ONNX Attention: the tiny Llama exported by torch.onnx (dynamo) at opset 23 with
#    cache I/O, its node types, check_export.py against torch (writing the .ref.npz), then its
#    --kv-cache decode steps and programs against that reference.
# 2. sample_test (and --bench) and decode_attention_test with its timings (issue 19's target:
#    valid length 1024 within 10% whether the cache holds 2048 or 8192 tokens).
# Argument export (part 1: carry .carry-bench and .carry-gpu's kv_cache_decode_test and
# kv_cache_programs_test) or kernels (part 2: carry .carry-gpu's sample_test.xz and
# decode_attention_test.xz); both over 64 MiB with the tree.
mkdir -p $OUT/r
if [ "$1" != kernels ]; then
M=test/models/llama_tiny_causal_past_dynamo_opset23
KC=$(scripts/bench_real_size.sh --setup-only); chmod +x .carry-gpu/* 2>/dev/null
timeout 150 python3 examples/export/export_hf.py llama --task causal-lm --with-past --opset 23 -o $M.onnx > $OUT/r/export23.txt 2>&1; echo "export opset 23 rc $?"
python3 -c "import collections, onnx; m = onnx.load('$M.onnx'); print(sorted(collections.Counter(n.op_type for n in m.graph.node).items()))" >> $OUT/r/export23.txt 2>&1
timeout 120 python3 examples/export/check_export.py llama --task causal-lm --with-past $M.onnx --save-ref $M.ref.npz >> $OUT/r/export23.txt 2>&1; echo "check_export rc $?"
tail -4 $OUT/r/export23.txt
timeout 150 python3 test/e2e/kv_cache_decode_test.py --exports llama_tiny_causal_past_dynamo_opset23 --only fp32-b1,fp16-b1,fp16-b8,programs-fp16 --kiln-compile $KC --decode-test .carry-gpu/kv_cache_decode_test --programs-test .carry-gpu/kv_cache_programs_test --kiln-run .carry-bench/bin/kiln-run > $OUT/r/kv-cache-opset23.txt 2>&1; echo "kv-cache opset 23 rc $?"
tail -5 $OUT/r/kv-cache-opset23.txt
fi
if [ "$1" != export ]; then
for t in sample_test decode_attention_test; do xz -dkc .carry-gpu/$t.xz > /tmp/$t && chmod +x /tmp/$t; done
timeout 40 stdbuf -oL /tmp/sample_test > $OUT/r/sample-test.txt 2>&1; echo "sample_test rc $?"; tail -1 $OUT/r/sample-test.txt
timeout 40 stdbuf -oL /tmp/sample_test --bench > $OUT/r/sample-bench.txt 2>&1; echo "sample_test --bench rc $?"
timeout 240 stdbuf -oL /tmp/decode_attention_test > $OUT/r/decode-attention-test.txt 2>&1; echo "decode_attention_test rc $?"
grep -E "^FAIL|cases failed|passed|L1024-cap" $OUT/r/decode-attention-test.txt | tail -8
nvidia-smi --query-gpu=name --format=csv,noheader
fi
tar czf $OUT/run3.tgz -C $OUT r && rm -rf $OUT/r
exit 0
