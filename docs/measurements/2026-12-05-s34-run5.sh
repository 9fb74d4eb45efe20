#!/usr/bin/env bash
# Session 34, run 5: the owner-warp persistent loop taken apart (persistent_decode_bench
# --consumer owner: the stages' input builds and grid barriers with no tiles, the tiles with no
# input builds, with and without the waits), and ncu's source view of its first launch (ring 8,
# prefetch across stages on, barriers): stall samples per line. Run 4 (H200): 0.624 ms per step
# with the prefetch off, 0.740 with it on, 0.632 without waiting at the barriers.
# Carry .carry-gpu/persistent_decode_bench.xz.
mkdir -p $OUT/r
xz -dc .carry-gpu/persistent_decode_bench.xz > /tmp/persistent_decode_bench && chmod +x /tmp/persistent_decode_bench
timeout 60 /tmp/persistent_decode_bench --consumer owner --iters 20 > $OUT/r/persistent-bench-owner.txt 2>&1; echo "persistent bench owner rc $?"
grep -E "FAIL|per step|fail|copy bandwidth:" $OUT/r/persistent-bench-owner.txt | head -20
timeout 120 ncu --set full --import-source yes --kernel-name-base demangled -k regex:persistentStep \
  --launch-count 1 -o $OUT/r/owner /tmp/persistent_decode_bench --consumer owner --iters 1 > $OUT/r/ncu-run.txt 2>&1; echo "ncu rc $?"
ncu --import $OUT/r/owner.ncu-rep --page details > $OUT/r/owner-details.txt 2>&1
grep -E "DRAM Throughput|Duration|Issue Slots Busy|No Eligible" $OUT/r/owner-details.txt | head -6
ncu --import $OUT/r/owner.ncu-rep --page source --csv --print-source cuda > $OUT/r/owner-source.csv 2>&1; echo "source rc $? $(wc -l < $OUT/r/owner-source.csv) lines"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run5.tgz -C $OUT r && rm -rf $OUT/r
exit 0
