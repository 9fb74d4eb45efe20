# Session 8 (2026-12-01): the commands of each call of the H200 machine (NVIDIA H200, driver
# 580.159.04, CUDA 13.0), run from the repository root with the carried folders named.
# .devcarry/gemm_sm90_test was built on the build machine with
#   test/gpu/build_gemm_sm90_test.sh .devcarry/gemm_sm90_test
# .carry with scripts/prepare_device_carry.sh (KILN_PRECISIONS trimmed to fp16 and bf16 to fit
# the 64 MiB carry), .carry-bench with KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh.

# run 6 (kernel at f920dc2 plus the --one mode; carry .devcarry): correctness, the standalone
# benchmark against cuBLAS, three ncu profiles
.devcarry/gemm_sm90_test
.devcarry/gemm_sm90_test --bench -v
ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section LaunchStats \
    -k regex:gemmKernel -c 1 --launch-skip 1 .devcarry/gemm_sm90_test --one "128x192 c2 s5" 4096 2304 768

# run 8 (a fragment-layout epilogue, not kept): the same two test commands

# run 9 (8667b2f; carry .carry .devcarry): correctness and the shared models at fp16 and bf16
.devcarry/gemm_sm90_test
KILN_LOG_DIR=logs scripts/device_e2e.sh --precision fp16
KILN_LOG_DIR=logs scripts/device_e2e.sh --precision bf16

# run 10 (8667b2f; carry .carry-bench): GEMM mode, then GPT-2 and BERT with profiles
KILN_LOG_DIR=logs scripts/bench_real_size.sh --gemm
KILN_LOG_DIR=logs scripts/bench_real_size.sh --models gpt2,bert --profile 20 --profile-top 10

# run 11 (the rolled epilogue and pow products, committed after 8667b2f; carry .carry-bench
# .devcarry): correctness, GPT-2 and BERT with profiles, Llama (stopped by its 190 s timeout
# after torch.compile at 1x128: no compile-RO peer, no accuracy line for Llama in this run)
.devcarry/gemm_sm90_test
KILN_LOG_DIR=logs timeout 220 scripts/bench_real_size.sh --models gpt2,bert --profile 20 --profile-top 8
KILN_LOG_DIR=logs timeout 190 scripts/bench_real_size.sh --models llama
