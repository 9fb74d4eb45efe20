#!/usr/bin/env bash
# Session 33, run 9 (planned): why test/gpu/persistent_decode_bench.cu's loop streams at 0.43 of the
# copy bandwidth even without waiting at its grid barriers (sessions 29 and 33, docs/generation.md
# "Not done yet" 0). ncu's full set on one launch of the whole step: the fast loop (x in
# registers) with ring 11 and its barriers, the bench's third cooperative launch (the first two
# are session 28's loop's checks). The suspects: the one producer warp's bulk copies, the stage
# input builder (every block reads the whole input vector), the split-K atomics. Read: DRAM
# throughput, the producer's and the consumers' stall reasons (warp state), L2 atomics.
# Carry .carry-gpu/persistent_decode_bench (test/gpu/build_persistent_decode_bench.sh OUT).
mkdir -p $OUT/r
chmod +x .carry-gpu/persistent_decode_bench
timeout 400 ncu --set full --kernel-name-base demangled -k regex:persistentStep --launch-skip 2 \
  --launch-count 1 -o $OUT/r/persistent-fast-ring11 .carry-gpu/persistent_decode_bench --iters 3 \
  > $OUT/r/ncu-run.txt 2>&1; echo "ncu rc $?"
ncu --import $OUT/r/persistent-fast-ring11.ncu-rep --page details > $OUT/r/persistent-fast-ring11.txt 2>&1
grep -E "DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Stall|L2 Hit" \
  $OUT/r/persistent-fast-ring11.txt | head -30
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run9.tgz -C $OUT r && rm -rf $OUT/r
exit 0
