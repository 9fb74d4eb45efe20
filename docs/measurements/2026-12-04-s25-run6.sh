#!/usr/bin/env bash
# Session 25, run 6 (one device call, H200), compiler 6115bfa: the prefill plan with priced
# padding on the full-size artifact: its --info (padding over prompts 1..2304, the price) and
# TTFT at prompts the price may re-plan. Carry .carry-bench.
export KILN_LOG_DIR=$OUT/logs
scripts/bench_real_size.sh --generate --prompts 128,700,1500,2048 --batches 1 --new-tokens 32 --peers '' > $OUT/bench.txt 2>&1; echo "bench rc $?"
.carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --info | grep -E 'generation|est\.' > $OUT/info.txt 2>&1
exit 0
