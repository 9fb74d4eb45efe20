# Session 12 (2026-12-02): the commands of each call of the H200 machine (NVIDIA H200, CUDA 13.0,
# driver 580), run from the repository root. Carried: .carry-bench (KILN_SKIP_BUILD=1
# scripts/prepare_bench_carry.sh at 3e4fc2c). Logs beside this file (2026-12-02-s12-run<N>-*).

# ---- run 1: the default compiler, all peers, one run per table (issue "Hopper GEMMs" closing numbers)
L=/tmp/logs; mkdir -p $L; S=$OUT/summary.txt; date -u > $S
KILN_LOG_DIR=$L/gb timeout 250 scripts/bench_real_size.sh --models gpt2,bert --profile 20 --profile-top 8 > $L/gb.txt 2>&1; echo "gpt2,bert rc=$?" >> $S
KILN_LOG_DIR=$L/ll timeout 320 scripts/bench_real_size.sh --models llama > $L/ll.txt 2>&1; echo "llama rc=$?" >> $S

# ---- run 2 (the decode-attention header's author, after several tuning runs): correctness and timing
test/gpu/build_decode_attention_test.sh /tmp/dat && /tmp/dat

# ---- run 3: KV-cached decode of the tiny cache-I/O exports, token by token (built here: the
# artifacts, test/gpu/kv_cache_decode_test.cpp linked with libkiln_runtime, the torch references
# as raw files; carried xz-compressed)
for m in llama_tiny_causal_past_dynamo gpt2_tiny_causal_past_dynamo llama_tiny_causal_past_legacy; do
 for p in fp32 fp16 bf16; do
  kiln-compile test/models/$m.onnx --kv-cache --max-seq-len 64 --shape input_ids=1x1 --precision $p -o kv/$m-$p-b1.kiln
  kiln-compile test/models/$m.onnx --kv-cache --max-seq-len 64 --kv-block-size 4 --shape input_ids=3x1 --precision $p -o kv/$m-$p-b3.kiln
 done
 kiln-compile test/models/$m.onnx --kv-cache --max-seq-len 64 --kv-block-size 64 --shape input_ids=2x1 --precision fp32 -o kv/$m-fp32-contig.kiln
done
# on the H200, per artifact (tol 1e-4 fp32, 1e-2 fp16, 3e-2 bf16):
kv_cache_decode_test kv/$m-$v.kiln kv/$m.tokens.i64 kv/$m.logits.f32 --tol $tol
