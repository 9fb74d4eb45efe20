# Session 14 (2026-12-02), one NVIDIA H200. Build machine, before each GPU call:
#   KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh
#   cp build/test/kv_cache_decode_test build/test/kv_cache_programs_test build/test/unit/kiln_runtime_gpu_tests .carry-gpu/
# GPU machine, carrying .carry-bench and .carry-gpu:
# run 1 (compiler at d95cfa0 + uncommitted bench script, before the few-row GEMM):
KILN_LOG_DIR=$OUT/checks scripts/device_checks.sh kv-cache
scripts/bench_real_size.sh --generate            # cut off by a 420 s timeout after the eager peers' first cases
# run 2 (same compiler):
scripts/bench_real_size.sh --generate --layers 2 --peers "" --profile 20 --prompts 128,1024
KILN_LOG_DIR=$OUT/checks scripts/device_checks.sh small-models gpu-unit node-tests
# run 3 (compiler at 3e08026: the few-row GEMM on by default):
KILN_LOG_DIR=$OUT/checks scripts/device_checks.sh kv-cache
KILN_LOG_DIR=$OUT/checks scripts/device_checks.sh small-models
scripts/bench_real_size.sh --generate --layers 2 --peers "" --profile 20 --prompts 128,1024
scripts/bench_real_size.sh --generate --layers 2 --peers "" --profile 20 --prompts 128,1024 --kiln-flags=--skinny-gemm=false
# (both under a 100/110 s timeout: the first was cut during decode_b8's profile, the second
#  during the per-layer table of decode_b8; every generation timing was printed before)
