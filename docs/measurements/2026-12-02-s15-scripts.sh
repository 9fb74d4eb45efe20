# Session 15 (2026-12-02), one NVIDIA H200. Build machine, before each GPU call:
#   KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh
#   cp build/test/kv_cache_decode_test build/test/kv_cache_programs_test build/test/unit/kiln_runtime_gpu_tests .carry-gpu/
# GPU machine, carrying .carry-bench and .carry-gpu; logs under /tmp/kl, copied here.
# run 1 (compiler at 757b3a1: early launch in decode programs, L2 prefetch, fused rotary/append):
#   the same 2-layer benchmark three times in one call, A/B/A on --programmatic-launch:
L=/tmp/kl
for v in auto:--programmatic-launch=auto at-exit:--programmatic-launch=at-exit auto2:--programmatic-launch=auto; do
  n=${v%%:*}; f=${v#*:}
  KILN_LOG_DIR=$L/$n timeout 170 scripts/bench_real_size.sh --generate --layers 2 --peers "" --prompts 128,1024 --kiln-flags="$f"
done
KILN_LOG_DIR=$L/checks timeout 220 scripts/device_checks.sh kv-cache small-models
# run 2 (compiler at dc7268c: run 1 + the decode programs' next_token read by greedy steps), on an
#   NVIDIA H100 80GB HBM3 (the H200 was refused three times), one call:
KILN_LOG_DIR=$L/checks timeout 200 scripts/device_checks.sh kv-cache small-models
KILN_LOG_DIR=$L/full timeout 380 scripts/bench_real_size.sh --generate --peers ""
# run 3, the next call on the same warm machine (the export and the artifact of run 2 reused:
#   bench_generate.py's stamps), the kiln cases again and every peer:
KILN_LOG_DIR=$L/peers timeout 560 scripts/bench_real_size.sh --generate --peers static_compile,forward_ro,eager
# run 4 (compiler at the prefill-waste fix, after the parallel import and passes), on an H200:
KILN_LOG_DIR=$L/checks timeout 100 scripts/device_checks.sh kv-cache
KILN_LOG_DIR=$L/l2 timeout 110 scripts/bench_real_size.sh --generate --layers 2 --peers "" --prompts 128,1024
