# Session 18 (2026-12-03), one NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0,
# transformers 5.17.0). Build machine, before each GPU call:
#   KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh
#   test/gpu/build_decode_attention_test.sh OUT, stripped and xz-compressed into .carry-gpu/,
#   with build/test/kv_cache_decode_test and kv_cache_programs_test (also xz), to fit the carry.
# GPU machine, carrying .carry-bench and .carry-gpu; logs under $L, copied here.
for f in .carry-gpu/*.xz; do xz -d -f $f; done; chmod +x .carry-gpu/*
# run 1 (compiler 07ae544: the RMS norm in the few-row GEMM's A loader):
KILN_LOG_DIR=$L/checks scripts/device_checks.sh kv-cache small-models
# run 2 (compiler 40a08ae: split-KV in one launch, plain exports through --kv-cache):
.carry-gpu/decode_attention_test
KILN_LOG_DIR=$L/checks scripts/device_checks.sh kv-cache kv-cache-plain
KILN_LOG_DIR=$L/l2 scripts/bench_real_size.sh --generate --layers 2 --peers "" --prompts 128,2048
# run 3 (compiler 94dd5ea: the split-KV partial inside the pipeline's shared memory), full
# size with the peers, then the split-KV A/B in the same call:
timeout 50 .carry-gpu/decode_attention_test --no-timing
KILN_LOG_DIR=$L/full scripts/bench_real_size.sh --generate --peers static_compile,forward_ro
KILN_LOG_DIR=$L/nosplit scripts/bench_real_size.sh --generate --peers "" --kiln-flags=--split-kv=false
