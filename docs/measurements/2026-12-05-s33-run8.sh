#!/usr/bin/env bash
# Session 33, run 8 (run 6's kernel part and the KV-cache layout rules in one call; the session's
# device time was nearly spent):
# 1. gemm_skinny_test, every case (the new "preload, A in chunks" cases, and the RMS cases at 3,
#    5 and 12 rows, whose sums of squares no longer use atomics), and
#    --bench-layers (the 0.8B Llama's 64 decode GEMMs in a CUDA graph: batch 1, and batch 8 under
#    the default plan, skinny-tc-occupancy=3 and skinny-preload-rows=16, two rounds).
# 2. kv_cache_decode_test with issue 19's layout rules (logits bit-identical with the
#    interleaved, contiguous and shuffled block tables of one pool; a row decoded alone gives the
#    logits it gives batched with rows of other lengths) and the reference check, on step
#    artifacts compiled on the build machine with this session's compiler by
#    test/gpu/prepare_layout_carry.sh (the Llama and GPT-2 cache-I/O exports: fp32 3x1 in blocks
#    of 4, fp16 8x1 in blocks of 4, the Llama fp16 3x1 and fp32 2x1 in one block of 64; the
#    opset-23 Llama fp16 8x1), with each export's 13 tokens and full-forward logits.
# Carry .carry-gpu/gemm_skinny_test.xz (test/gpu/build_gemm_skinny_test.sh, xz -9),
# .carry-gpu/kv_cache_decode_test (build/test) and .carry-gpu/layout (prepare_layout_carry.sh).
mkdir -p $OUT/r
xz -dkc .carry-gpu/gemm_skinny_test.xz > /tmp/gemm_skinny_test && chmod +x /tmp/gemm_skinny_test .carry-gpu/kv_cache_decode_test
L=.carry-gpu/layout
for a in $L/*.kiln; do
  m=$(basename $a .kiln); model=${m%%-*}
  case $m in *fp16*) tol=1e-2 ;; *) tol=1e-4 ;; esac
  timeout 30 .carry-gpu/kv_cache_decode_test $a $L/$model.tokens.i64 $L/$model.logits.f32 --tol $tol > $OUT/r/layout-$m.txt 2>&1
  echo "$m rc $?: $(grep -E '^(PASS|FAIL) (contiguous|shuffled|alone)' $OUT/r/layout-$m.txt | cut -c1-120 | tr '\n' ';') $(tail -1 $OUT/r/layout-$m.txt)"
done
timeout 150 /tmp/gemm_skinny_test > $OUT/r/gemm-skinny-test.txt 2>&1; echo "gemm_skinny_test rc $?"
grep -E "^FAIL|^INTERNAL|cases failed" $OUT/r/gemm-skinny-test.txt | tail -6
timeout 50 /tmp/gemm_skinny_test --bench-layers > $OUT/r/bench-layers.txt 2>&1; echo "bench-layers rc $?"
grep -vE "^(PASS|device)" $OUT/r/bench-layers.txt | tail -20
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run8.tgz -C $OUT r && rm -rf $OUT/r
exit 0
