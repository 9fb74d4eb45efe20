#!/usr/bin/env bash
# Session 25, run 2 (one device call, H200): ncu of the 2048-token prefill at real width (2
# layers), the standalone Hopper attention timings. Carry .carry-bench, .carry-gpu.
export KILN_LOG_DIR=$OUT/logs
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
$S --generate --layers 2 --prompts 2048 --batches 1 --new-tokens 8 --peers '' > $OUT/bench-l2.txt 2>&1
cp .bench-work/llama_gen.kiln /tmp/a.kiln
$R /tmp/a.kiln --program prefill_b1_s2048 --inputs-generate random:1 --profile 10 > $OUT/prof-l2.txt 2>&1
timeout 240 ncu --set full --launch-count 22 -f -o $OUT/prefill $R /tmp/a.kiln --program prefill_b1_s2048 --inputs-generate random:1 --bench 1 > $OUT/ncu.log 2>&1
ncu -i $OUT/prefill.ncu-rep --page details > $OUT/ncu-details.txt 2>&1
timeout 120 .carry-gpu/decode_attention_test --sm90 > $OUT/decode-attention-sm90.txt 2>&1
exit 0
