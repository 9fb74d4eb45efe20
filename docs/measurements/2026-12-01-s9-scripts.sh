# Session 9 (2026-12-01): the commands of each call of the H200 machine (NVIDIA H200, CUDA 13.0),
# run from the repository root with the carried folders named. Logs beside this file
# (2026-12-01-s9-run<N>-*). .carry-bench: KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh;
# .carry: KILN_PRECISIONS="fp32 fp16" scripts/prepare_device_carry.sh; .devcarry/gemm_sm90_test:
# test/gpu/build_gemm_sm90_test.sh. Run 2 got no machine.

# run 1 (88d4292: vector norms, epilogue rows before stores, mask prefetch, no sibling merge of
# graph outputs; carry .carry-bench .devcarry)
KILN_LOG_DIR=logs timeout 240 scripts/bench_real_size.sh --models gpt2,bert --profile 20 --profile-top 8
KILN_LOG_DIR=logs timeout 200 scripts/bench_real_size.sh --gemm

# run 3 (396d5e1: epilogue branch-free epilogue loads, v2 stores, row coordinates,
# onePlusTanh; carry .carry-bench .devcarry)
.devcarry/gemm_sm90_test
KILN_LOG_DIR=logs timeout 230 scripts/bench_real_size.sh --models gpt2,bert --profile 20 --profile-top 8
KILN_LOG_DIR=logs timeout 150 scripts/bench_real_size.sh --gemm

# run 4 (same kiln as run 3; carry .carry-bench)
KILN_LOG_DIR=logs timeout 420 scripts/bench_real_size.sh --models llama --profile 20 --profile-top 8

# run 5 (9d4a59c: mask narrowing, with the RoPE prefetch 5f7f087; carry .carry)
KILN_LOG_DIR=logs scripts/device_e2e.sh --precision fp32
KILN_LOG_DIR=logs scripts/device_e2e.sh --precision fp16

# run 6 (as run 5; carry .carry-bench); the RoPE prefetch was reverted after it
KILN_LOG_DIR=logs timeout 150 scripts/bench_real_size.sh --models bert --profile 20 --profile-top 8
KILN_LOG_DIR=logs timeout 300 scripts/bench_real_size.sh --models llama --profile 20 --profile-top 8
