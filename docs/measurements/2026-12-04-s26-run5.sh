#!/usr/bin/env bash
# Session 26, run 5 (one device call, H200): the final compiler (44c296d: the preloading GEMMs
# declared __launch_bounds__(256, 3)) at batch 1 and 8, P=128, without peers. Carry .carry-bench.
export KILN_LOG_DIR=$OUT/logs
timeout 250 scripts/bench_real_size.sh --generate --prompts 128 --batches 1,8 --new-tokens 128 --peers '' > $OUT/bench.txt 2>&1; echo "bench rc $?"
grep "kiln P=" $OUT/bench.txt; rm -rf $OUT/logs
