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

# HBM fraction of run 1 (its table was cut off before printing it): the run's p50 step times and
# copy bandwidth, and the bytes bench_generate.step_bytes counts, on the build machine:
python3 - <<'PY'
# Bytes one decode step reads (bench_generate.step_bytes for the 0.8B Llama config, fp16): every
# weight but the embedding table, plus the KV cache at the mean decode length, over the p50 step.
h, L, heads, kv, inter, vocab = 2048, 16, 32, 8, 5632, 32000
d = h // heads
per_layer = h * h + 2 * h * kv * d + h * h + 2 * h * inter + inter * h + 2 * h  # q, k, v, o, gate/up, down, 2 norms
weights = (L * per_layer + h + h * vocab) * 2  # + final norm, lm_head
for prompt, step_ms in ((128, 1.237), (2048, 1.564)):
    kv_bytes = 2 * L * kv * d * 2 * (prompt + 256 / 2)
    print("P=%d: %.3f GB per step / %.3f ms = %.0f GB/s = %.2f of 4212 GB/s" % (
        prompt, (weights + kv_bytes) / 1e9, step_ms, (weights + kv_bytes) / step_ms / 1e6,
        (weights + kv_bytes) / step_ms / 1e6 / 4212))
PY
# P=128: 1.582 GB per step / 1.237 ms = 1279 GB/s = 0.30 of 4212 GB/s
# P=2048: 1.645 GB per step / 1.564 ms = 1052 GB/s = 0.25 of 4212 GB/s
