# Session 12 (2026-12-02): the commands of each call of the H200 machine (NVIDIA H200, CUDA 13.0,
# driver 580), run from the repository root. Carried: .carry-bench (KILN_SKIP_BUILD=1
# scripts/prepare_bench_carry.sh at 3e4fc2c). Logs beside this file (2026-12-02-s12-run<N>-*).

# ---- run 1: the default compiler, all peers, one run per table (issue "Hopper GEMMs" closing numbers)
L=/tmp/logs; mkdir -p $L; S=$OUT/summary.txt; date -u > $S
KILN_LOG_DIR=$L/gb timeout 250 scripts/bench_real_size.sh --models gpt2,bert --profile 20 --profile-top 8 > $L/gb.txt 2>&1; echo "gpt2,bert rc=$?" >> $S
KILN_LOG_DIR=$L/ll timeout 320 scripts/bench_real_size.sh --models llama > $L/ll.txt 2>&1; echo "llama rc=$?" >> $S

# ---- run 2 (the decode-attention header's author, after several tuning runs): correctness and timing
test/gpu/build_decode_attention_test.sh /tmp/dat && /tmp/dat
