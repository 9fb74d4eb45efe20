#!/usr/bin/env bash
# Session 25, run 3 (one device call, H200): the Hopper prefill attention standalone with random
# operands and with the query rotary (decode_attention_test --sm90), and in the model (2 layers at
# real width) with an empty cache (seq_lens 0) against random cached lengths; ncu source counters
# of the model's attention kernel. Carry .carry-bench, .carry-gpu.
export KILN_LOG_DIR=$OUT/logs
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
timeout 150 .carry-gpu/decode_attention_test --sm90 > $OUT/decode-attention-sm90.txt 2>&1
$S --generate --layers 2 --prompts 2048 --batches 1 --new-tokens 8 --peers '' > $OUT/bench-l2.txt 2>&1
cp .bench-work/llama_gen.kiln /tmp/a.kiln
$R /tmp/a.kiln --program prefill_b1_s2048 --inputs-generate random:1 --input kv_cache.seq_lens=zeros --profile 10 > $OUT/prof-l2-empty.txt 2>&1
$R /tmp/a.kiln --program prefill_b1_s2048 --inputs-generate random:1 --profile 10 > $OUT/prof-l2-random.txt 2>&1
timeout 120 ncu --section SourceCounters --section WarpStateStats --section InstructionStats -k regex:'kiln_k21$' --launch-count 1 -f -o $OUT/attn $R /tmp/a.kiln --program prefill_b1_s2048 --inputs-generate random:1 --input kv_cache.seq_lens=zeros --bench 1 > $OUT/ncu.log 2>&1
ncu -i $OUT/attn.ncu-rep --page source --print-source sass --csv > $OUT/attn-sass.csv 2>&1
ncu -i $OUT/attn.ncu-rep --page details > $OUT/attn-details.txt 2>&1
rm -f $OUT/attn.ncu-rep
exit 0
