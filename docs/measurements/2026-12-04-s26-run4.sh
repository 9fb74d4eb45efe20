#!/usr/bin/env bash
# Session 26, run 4 (one device call, H200): gemm_skinny_test --preload-only (the few-row GEMM
# with the weight preloaded before the grid-dependency wait: f16 and bf16, 1-16 rows, the 0.8B
# Llama's GEMMs at the preload's split, odd shapes, splits 1-8, the RMS variant), line-buffered
# so that a timeout keeps what ran. Carry .carry-gpu.
xz -dkc .carry-gpu/gemm_skinny_test.xz > /tmp/gemm_skinny_test && chmod +x /tmp/gemm_skinny_test
timeout 280 stdbuf -oL /tmp/gemm_skinny_test --preload-only -v > $OUT/gemm-skinny-preload.txt 2>&1; echo "gemm_skinny_test rc $?"
grep -c '^PASS' $OUT/gemm-skinny-preload.txt; grep -c '^FAIL' $OUT/gemm-skinny-preload.txt; tail -2 $OUT/gemm-skinny-preload.txt
