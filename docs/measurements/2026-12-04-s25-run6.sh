#!/usr/bin/env bash
# Session 25, run 6 (one device call, H200), for the next session (not run: the session's device
# time ran out). Build machine first: KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh;
# test/gpu/build_attention_test.sh X && strip X && xz -9 X -> .carry-gpu/attention_test.xz.
# 1. attention_test at the final commit: the negative-scale cases (mask kind 5) added after run 5.
# 2. the prefill plan with priced padding on the full-size artifact: its --info (padding over
#    prompts 1..2304, the price) and TTFT at prompts the price may re-plan.
# Carry .carry-bench, .carry-gpu.
export KILN_LOG_DIR=$OUT/logs
xz -dkc .carry-gpu/attention_test.xz > /tmp/attention_test && chmod +x /tmp/attention_test
timeout 100 /tmp/attention_test --filter sm90 > $OUT/attention-test-sm90.txt 2>&1; echo "attention_test rc $?"
scripts/bench_real_size.sh --generate --prompts 128,700,1500,2048 --batches 1 --new-tokens 32 --peers '' > $OUT/bench.txt 2>&1; echo "bench rc $?"
.carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --info | grep -E 'generation|est\.' > $OUT/info.txt 2>&1
exit 0
