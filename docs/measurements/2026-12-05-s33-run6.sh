#!/usr/bin/env bash
# Session 33, run 6: the weight preload above 2 rows (kiln-compile --skinny-preload-rows), at the
# kernel level, and where transformers' eager generate spends its 50-75 ms steps.
# 1. gemm_skinny_test --preload-only: the preloaded cases, among them the new "preload, A in
#    chunks" ones (every R, the Llama shapes at the plan's split, odd shapes, splits 1/3/8, RMS).
# 2. gemm_skinny_test --bench-layers: the 0.8B Llama's 64 decode GEMMs as one CUDA graph, batch 1
#    (session 30's plans) and batch 8 under the default plan, skinny-tc-occupancy=3 and
#    skinny-preload-rows=16, two rounds.
# 3. test/bench/eager_generate_probe.py (the 0.8B Llama, fp16, P = 128, 32 new tokens).
# Carry .carry-gpu/gemm_skinny_test.xz (test/gpu/build_gemm_skinny_test.sh, then xz -T0 -9).
mkdir -p $OUT/r
xz -dkc .carry-gpu/gemm_skinny_test.xz > /tmp/gemm_skinny_test && chmod +x /tmp/gemm_skinny_test
timeout 150 /tmp/gemm_skinny_test --preload-only > $OUT/r/gemm-skinny-preload.txt 2>&1; echo "gemm_skinny_test --preload-only rc $?"
grep -E "^FAIL|cases failed" $OUT/r/gemm-skinny-preload.txt | tail -5
timeout 120 /tmp/gemm_skinny_test --bench-layers > $OUT/r/bench-layers.txt 2>&1; echo "bench-layers rc $?"
grep -vE "^(PASS|device)" $OUT/r/bench-layers.txt | tail -22
timeout 200 python3 test/bench/eager_generate_probe.py --new-tokens 32 > $OUT/r/eager-probe.txt 2>&1; echo "eager probe rc $?"
grep -vi warn $OUT/r/eager-probe.txt | head -40
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run6.tgz -C $OUT r && rm -rf $OUT/r
exit 0
