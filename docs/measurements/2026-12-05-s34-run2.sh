#!/usr/bin/env bash
# Session 34, run 2: persistent_decode_bench with session 34's consumer loop ("owner warps": each
# consumer warp takes whole 16 x 512 tiles, every eighth of its block's; session 34's run 1 ncu of
# the fast loop: 9 warps per SM, 0.25 issued per scheduler and cycle, 38.8% of DRAM throughput),
# timed beside the two older loops, and ncu of its first launch; then gemm_skinny_test with -v
# (every case line by line, so that a cut-off run still tells how far it got: run 1 ran 280 s
# without finishing; the cases' CPU references are the slow part).
# Carry .carry-gpu/persistent_decode_bench (test/gpu/build_persistent_decode_bench.sh) and
# .carry-gpu/gemm_skinny_test.xz.
mkdir -p $OUT/r
chmod +x .carry-gpu/persistent_decode_bench
timeout 150 .carry-gpu/persistent_decode_bench > $OUT/r/persistent-bench.txt 2>&1; echo "persistent bench rc $?"
grep -E "check \(first|check \(second|^owner|^fast|FAIL|copy bandwidth:" $OUT/r/persistent-bench.txt | head -40
timeout 150 ncu --set full --kernel-name-base demangled -k regex:persistentStep --launch-skip 4 \
  --launch-count 1 -o $OUT/r/persistent-owner-ring11 .carry-gpu/persistent_decode_bench --iters 3 \
  > $OUT/r/ncu-run.txt 2>&1; echo "ncu rc $?"
ncu --import $OUT/r/persistent-owner-ring11.ncu-rep --page details > $OUT/r/persistent-owner-ring11.txt 2>&1
grep -E "DRAM Throughput|Duration|Achieved Occupancy|Registers Per|Issue Slots Busy|Executed Instructions  " \
  $OUT/r/persistent-owner-ring11.txt | head -12
xz -dkc .carry-gpu/gemm_skinny_test.xz > /tmp/gemm_skinny_test && chmod +x /tmp/gemm_skinny_test
timeout 240 stdbuf -oL /tmp/gemm_skinny_test -v > $OUT/r/gemm-skinny-test.txt 2>&1; echo "gemm_skinny_test rc $?"
echo "$(grep -c ^PASS $OUT/r/gemm-skinny-test.txt) PASS, $(grep -c ^FAIL $OUT/r/gemm-skinny-test.txt) FAIL lines"
grep -E "^FAIL|^INTERNAL|cases failed" $OUT/r/gemm-skinny-test.txt | head -8; tail -1 $OUT/r/gemm-skinny-test.txt | cut -c1-150
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run2.tgz -C $OUT r && rm -rf $OUT/r
exit 0
