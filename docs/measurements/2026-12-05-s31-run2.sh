#!/usr/bin/env bash
# Session 31, run 2 (planned): gemm_skinny_test with the occupancy-3 plan (its correctness cases,
# then --bench-only: the "occupancy-3 selected" column against the default tensor-core plan and
# cuBLAS at 1-16 rows on the 0.8B Llama's decode GEMMs). Carry .carry-gpu/gemm_skinny_test.xz
# only (test/gpu/build_gemm_skinny_test.sh, then xz -T2; with .carry-bench it passes 64 MiB).
mkdir -p $OUT/r
xz -dc .carry-gpu/gemm_skinny_test.xz > /tmp/gst && chmod +x /tmp/gst
timeout 300 /tmp/gst > $OUT/r/cases.txt 2>&1; echo "cases rc $?"; tail -3 $OUT/r/cases.txt
grep -c "^FAIL" $OUT/r/cases.txt
timeout 240 /tmp/gst --bench-only > $OUT/r/bench.txt 2>&1; echo "bench rc $?"
grep -E "^(gemm|qkv|o-proj|gate-up|down)" $OUT/r/bench.txt | head -30
cp $OUT/r/*.txt $OUT/ && rm -rf $OUT/r
exit 0
