#!/usr/bin/env bash
# Session 29, run 2 (planned, H200; after run 1 and session 28's run 2, the benchmark):
# 1. torch's own ONNX Attention: the tiny Llama exported by torch.onnx (dynamo) at opset 23 with
#    cache I/O (SDPA becomes the Attention op), its node types, check_export.py against torch
#    (writing the .ref.npz), then its --kv-cache decode steps and programs against that reference.
# 2. sample_test and decode_attention_test: session 27's device code after its review (run 3 of
#    session 27 was never lent a device).
# Carry .carry-bench and, of .carry-gpu, sample_test.xz, decode_attention_test.xz,
# kv_cache_decode_test and kv_cache_programs_test (the tree, .carry-bench and all of .carry-gpu
# are over the 64 MiB a call carries). Run 5 is its first part alone.
mkdir -p $OUT/r
for t in sample_test decode_attention_test; do xz -dkc .carry-gpu/$t.xz > /tmp/$t && chmod +x /tmp/$t; done
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
tar czf $OUT/run2.tgz -C $OUT r && rm -rf $OUT/r
exit 0
