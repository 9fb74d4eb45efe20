#!/usr/bin/env bash
# Session 34, run 7: run 6 with each block building only its chunk of x (no norms: timing only), with and without the barriers and the prefetch across stages; run 6 had
# the grid barriers alone (no tiles, no input builds) and the stage loop's own fences, arrivals
# and accumulator zeroing (no waits either). Carry .carry-gpu/persistent_decode_bench.xz.
mkdir -p $OUT/r
xz -dc .carry-gpu/persistent_decode_bench.xz > /tmp/persistent_decode_bench && chmod +x /tmp/persistent_decode_bench
timeout 60 /tmp/persistent_decode_bench --consumer owner --iters 20 > $OUT/r/persistent-bench-owner.txt 2>&1; echo "persistent bench owner rc $?"
grep -E "FAIL|per step|fail|copy bandwidth:" $OUT/r/persistent-bench-owner.txt | head -20
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run7.tgz -C $OUT r && rm -rf $OUT/r
exit 0
