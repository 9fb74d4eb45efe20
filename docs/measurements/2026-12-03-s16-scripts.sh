# Session 16 (2026-12-03), one NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0,
# transformers 5.17.0). Build machine, before each GPU call:
#   KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh
#   cp build/test/kv_cache_decode_test build/test/kv_cache_programs_test .carry-gpu/
# GPU machine, carrying .carry-bench (and .carry-gpu for the checks); logs under $L, copied here.
L=/tmp/kl
# run 1 (compiler at 0a0edd0, session 15's last): 2-layer profile of every program, the
# torch.compile forward over 2048 tokens, and ncu's speed-of-light of three programs:
KILN_LOG_DIR=$L/l2 scripts/bench_real_size.sh --generate --layers 2 --peers forward_ro --peer-prompts 2048 --prompts 128,2048 --profile 20
for p in decode_b1 decode_b8 prefill_b1_s256; do
  ncu --section SpeedOfLight --csv --launch-count 40 .carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --program $p --inputs-generate random:1
done
# run 2 (compiler at 853468e: argmax with 1024 threads, the 2048-token prefill program, block-level
# causal limit in decode attention, the pipelined few-row GEMM):
test/gpu/build_decode_attention_test.sh /tmp/dat && /tmp/dat
KILN_GPU_BIN=.carry-gpu KILN_LOG_DIR=$L/checks scripts/device_checks.sh kv-cache small-models
KILN_LOG_DIR=$L/l2 scripts/bench_real_size.sh --generate --layers 2 --peers "" --prompts 128,2048 --profile 20
# run 3 (compiler at a0c8b07: prefill chunks on the tensor-core attention over the paged cache):
test/gpu/build_decode_attention_test.sh /tmp/dat && /tmp/dat --no-timing
test/gpu/build_attention_test.sh /tmp/at && /tmp/at
KILN_GPU_BIN=.carry-gpu KILN_LOG_DIR=$L/checks scripts/device_checks.sh kv-cache small-models
KILN_LOG_DIR=$L/l2 scripts/bench_real_size.sh --generate --layers 2 --peers forward_ro --peer-prompts 2048 --prompts 128,2048 --profile 20
# run 4 (same compiler), full size, kiln only (exports and compiles the artifact):
KILN_LOG_DIR=$L/full scripts/bench_real_size.sh --generate --peers ""
# run 5, the next call on the same warm machine (export and artifact of run 4 reused), the kiln
# cases again and the peers in the same call:
KILN_LOG_DIR=$L/peers scripts/bench_real_size.sh --generate --peers static_compile,forward_ro
# run 6, same machine: per-kernel profiles of the full-size artifact (random lengths in range):
for p in decode_b1 decode_b8 prefill_b1_s2048; do
  .carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --program $p --inputs-generate random:1 --profile 20
done
# run 7 (fresh machine): the attention kernel's configurations at the prefill shape against SDPA:
test/gpu/build_attention_test.sh /tmp/at && ATTN=/tmp/at python3 test/bench/bench_attention.py
# run 8 (compiler at d8f31e7: kiln-select-tiles cuts the few-row GEMM's
# split-K back to one wave of resident blocks), 2-layer A/B against run 3, ncu of decode_b8's
# first kernels, kv-cache checks:
KILN_LOG_DIR=$L/l2 scripts/bench_real_size.sh --generate --layers 2 --peers "" --prompts 128,2048
ncu --section SpeedOfLight --section Occupancy --section LaunchStats --csv -k 'regex:kiln_k4[4-9]|kiln_k5[0-2]' --launch-count 6 .carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --program decode_b8 --inputs-generate random:1
KILN_GPU_BIN=.carry-gpu KILN_LOG_DIR=$L/checks scripts/device_checks.sh kv-cache
