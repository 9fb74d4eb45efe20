#!/usr/bin/env bash
# Session 34, run 1: what session 33 left unrun, in one call.
# 1. ncu's full set on one launch of test/gpu/persistent_decode_bench.cu's persistent step (the
#    fast loop, ring 11, with its barriers; the third cooperative launch), and the bench itself:
#    why its loop streams at 0.43 of the copy bandwidth even without waiting at the barriers.
# 2. gemm_skinny_test, every case, line-buffered (run 8 of session 33 cut it off at 150 s with
#    nothing written).
# Carry .carry-gpu/persistent_decode_bench and .carry-gpu/gemm_skinny_test.xz.
mkdir -p $OUT/r
chmod +x .carry-gpu/persistent_decode_bench
timeout 100 .carry-gpu/persistent_decode_bench > $OUT/r/persistent-bench.txt 2>&1; echo "persistent bench rc $?"
grep -vE "^\s*$" $OUT/r/persistent-bench.txt | tail -30
timeout 240 ncu --set full --kernel-name-base demangled -k regex:persistentStep --launch-skip 2 \
  --launch-count 1 -o $OUT/r/persistent-fast-ring11 .carry-gpu/persistent_decode_bench --iters 3 \
  > $OUT/r/ncu-run.txt 2>&1; echo "ncu rc $?"
ncu --import $OUT/r/persistent-fast-ring11.ncu-rep --page details > $OUT/r/persistent-fast-ring11.txt 2>&1
grep -E "DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|L2 Hit|Registers Per|Stall" \
  $OUT/r/persistent-fast-ring11.txt | head -20
ncu --import $OUT/r/persistent-fast-ring11.ncu-rep --page raw --csv 2>/dev/null | \
  python3 -c "
import csv, sys
rows = list(csv.reader(sys.stdin)); h, u, v = rows[0], rows[1], rows[2]
for k, unit, val in zip(h, u, v):
    if k.startswith('smsp__pcsamp_warps_issue_stalled_') and not k.endswith('not_issued') and val not in ('', '0'):
        print(k, val)
" | sort -k2 -n -r | head -14
xz -dkc .carry-gpu/gemm_skinny_test.xz > /tmp/gemm_skinny_test && chmod +x /tmp/gemm_skinny_test
timeout 280 stdbuf -oL /tmp/gemm_skinny_test > $OUT/r/gemm-skinny-test.txt 2>&1; echo "gemm_skinny_test rc $?"
echo "$(grep -c ^PASS $OUT/r/gemm-skinny-test.txt) PASS lines"; grep -E "^FAIL|^INTERNAL|cases failed" $OUT/r/gemm-skinny-test.txt | tail -6
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run1.tgz -C $OUT r && rm -rf $OUT/r
exit 0
