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
# Part 1 is session 29's run 5 as written (it packs its own run5.tgz).
if [ "$1" = export ]; then exec bash docs/measurements/2026-12-05-s29-run5.sh; fi
mkdir -p $OUT/r
for t in sample_test decode_attention_test; do xz -dkc .carry-gpu/$t.xz > /tmp/$t && chmod +x /tmp/$t; done
timeout 40 stdbuf -oL /tmp/sample_test > $OUT/r/sample-test.txt 2>&1; echo "sample_test rc $?"; tail -1 $OUT/r/sample-test.txt
timeout 40 stdbuf -oL /tmp/sample_test --bench > $OUT/r/sample-bench.txt 2>&1; echo "sample_test --bench rc $?"
timeout 240 stdbuf -oL /tmp/decode_attention_test > $OUT/r/decode-attention-test.txt 2>&1; echo "decode_attention_test rc $?"
grep -E "^FAIL|cases failed|passed|L1024-cap" $OUT/r/decode-attention-test.txt | tail -8
nvidia-smi --query-gpu=name --format=csv,noheader
tar czf $OUT/run3.tgz -C $OUT r && rm -rf $OUT/r
exit 0
