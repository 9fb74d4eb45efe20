#!/usr/bin/env bash
# Session 29, run 5 (H200): torch's own ONNX Attention. The tiny Llama exported by torch.onnx
# (dynamo) at opset 23 with cache I/O, its node types, check_export.py against torch (writing the
# .ref.npz), then its --kv-cache decode steps and programs against that reference (the first part
# of 2026-12-05-s29-run2.sh). Carry .carry-bench and .carry-gpu/kv_cache_{decode,programs}_test.
mkdir -p $OUT/r
M=test/models/llama_tiny_causal_past_dynamo_opset23
KC=$(scripts/bench_real_size.sh --setup-only); chmod +x .carry-gpu/* 2>/dev/null
timeout 100 python3 examples/export/export_hf.py llama --task causal-lm --with-past --opset 23 -o $M.onnx > $OUT/r/export23.txt 2>&1; echo "export opset 23 rc $?"
python3 -c "import collections, onnx; m = onnx.load('$M.onnx'); print(sorted(collections.Counter(n.op_type for n in m.graph.node).items()))" >> $OUT/r/export23.txt 2>&1
timeout 80 python3 examples/export/check_export.py llama --task causal-lm --with-past $M.onnx --save-ref $M.ref.npz >> $OUT/r/export23.txt 2>&1; echo "check_export rc $?"
tail -3 $OUT/r/export23.txt
timeout 100 python3 test/e2e/kv_cache_decode_test.py --exports llama_tiny_causal_past_dynamo_opset23 --only fp32-b1,fp16-b1,programs-fp16 --kiln-compile $KC --decode-test .carry-gpu/kv_cache_decode_test --programs-test .carry-gpu/kv_cache_programs_test --kiln-run .carry-bench/bin/kiln-run > $OUT/r/kv-cache-opset23.txt 2>&1; echo "kv-cache opset 23 rc $?"
tail -6 $OUT/r/kv-cache-opset23.txt
cp $M.onnx $M.ref.npz $OUT/r/ 2>/dev/null
tar czf $OUT/run5.tgz -C $OUT r && rm -rf $OUT/r
exit 0
