#!/usr/bin/env bash
# Session 34, run 6: run 5's decomposition of the owner-warp persistent loop with two more parts:
# the grid barriers alone (no tiles, no input builds) and the stage loop's own fences, arrivals
# and accumulator zeroing (no waits either). Carry .carry-gpu/persistent_decode_bench.xz.
mkdir -p $OUT/r
xz -dc .carry-gpu/persistent_decode_bench.xz > /tmp/persistent_decode_bench && chmod +x /tmp/persistent_decode_bench
timeout 60 /tmp/persistent_decode_bench --consumer owner --iters 20 > $OUT/r/persistent-bench-owner.txt 2>&1; echo "persistent bench owner rc $?"
grep -E "FAIL|per step|fail|copy bandwidth:" $OUT/r/persistent-bench-owner.txt | head -20
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run6.tgz -C $OUT r && rm -rf $OUT/r
exit 0
