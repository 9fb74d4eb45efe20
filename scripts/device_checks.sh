#!/usr/bin/env bash
# scripts/device_checks.sh - the GPU checks that compile on the GPU machine, in one call.
#
# Run from the repo root on the GPU machine with .carry-bench/ (scripts/prepare_bench_carry.sh:
# kiln-compile, kiln-run, kiln-compile's libraries) and .carry-gpu/ (the GPU test binaries
# kv_cache_decode_test, kv_cache_programs_test, kiln_runtime_gpu_tests from build/test) beside the
# work tree. Each step's log goes to $KILN_LOG_DIR (default .carry-bench/logs/checks):
#   kv-cache.log      test/e2e/kv_cache_decode_test.py (decode steps, programs, kiln-run --generate)
#   kv-cache-plain.log  the same with --plain: the plain causal-LM exports against onnxruntime
#   kv-cache-ops.log  the same with --cache-ops: the decoders whose cache is ONNX Attention-23 or
#                     TensorScatter-24 ops, against onnxruntime
#   kv-cache-genai.log  the same with --genai: onnxruntime-genai's exports (GroupQueryAttention
#                     keeps the cache), against onnxruntime
#   small-models.log  test/e2e/small_models_test.py (compiled here, checked against onnxruntime)
#   node-tests.log    test/e2e/onnx_node_tests.py over every test (--all), node-tests.json
#   gpu-unit.log      kiln_runtime_gpu_tests
#   hopper-prefill.log  decode_attention_test --sm90 (.carry-gpu, built for sm_90a by
#                     test/gpu/build_decode_attention_test.sh): the Hopper attention over the paged
#                     cache against the fp64 reference, then its timings against mma.sync
#   decode-attention.log  decode_attention_test (the same binary): every case (decode, split,
#                     cluster, fused append, prefill) against the fp64 reference, then the
#                     timings (not in the default list: about 2 minutes)
#   sample.log        sample_test (.carry-gpu, test/gpu/build_sample_test.sh): the sampler against
#                     host references and its full-pass form, then --bench (not in the default list)
#   KILN_KV_ONLY=a,b  the kv-cache steps run only those variants of kv_cache_decode_test.py
#                     (--only; e.g. the *-fused-append ones)
#   KILN_KV_STEPS=N   the kv-cache steps decode N greedy tokens per check (--steps; 64: issue
#                     19's per-step check against PyTorch, the torch exports rebuilt in torch)
#   scripts/device_checks.sh [STEP ...]    # steps: kv-cache kv-cache-plain kv-cache-ops kv-cache-genai
#                                          # small-models node-tests
#                                          # gpu-unit hopper-prefill decode-attention sample
#                                          # (default all but decode-attention and sample)
# Exit 0 when every step passed, 1 when one failed, 2 on a setup error, 77 without a GPU.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2
LOGS="${KILN_LOG_DIR:-$ROOT/.carry-bench/logs/checks}"
GPU_BIN="$ROOT/.carry-gpu"
PYTHON="${KILN_PYTHON:-python3}"
KILN_RUN="$ROOT/.carry-bench/bin/kiln-run"
export PYTHONUNBUFFERED=1
mkdir -p "$LOGS" || exit 2

KILN_COMPILE="$(scripts/bench_real_size.sh --setup-only)"
rc=$?
[[ $rc -eq 0 ]] || exit "$rc"
chmod +x "$GPU_BIN"/* 2>/dev/null

only=()
[[ -n "${KILN_KV_ONLY:-}" ]] && only=(--only "$KILN_KV_ONLY")
[[ -n "${KILN_KV_STEPS:-}" ]] && only+=(--steps "$KILN_KV_STEPS")
steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(kv-cache kv-cache-plain kv-cache-ops kv-cache-genai small-models node-tests gpu-unit hopper-prefill)
status=0
for step in "${steps[@]}"; do
  start=$SECONDS
  case "$step" in
    kv-cache)
      "$PYTHON" test/e2e/kv_cache_decode_test.py --kiln-compile "$KILN_COMPILE" \
        --decode-test "$GPU_BIN/kv_cache_decode_test" --programs-test "$GPU_BIN/kv_cache_programs_test" \
        --kiln-run "$KILN_RUN" "${only[@]}" >"$LOGS/kv-cache.log" 2>&1 ;;
    kv-cache-plain)
      "$PYTHON" test/e2e/kv_cache_decode_test.py --plain --kiln-compile "$KILN_COMPILE" \
        --decode-test "$GPU_BIN/kv_cache_decode_test" --programs-test "$GPU_BIN/kv_cache_programs_test" \
        --kiln-run "$KILN_RUN" "${only[@]}" >"$LOGS/kv-cache-plain.log" 2>&1 ;;
    kv-cache-ops)
      "$PYTHON" test/e2e/kv_cache_decode_test.py --cache-ops --kiln-compile "$KILN_COMPILE" \
        --decode-test "$GPU_BIN/kv_cache_decode_test" --programs-test "$GPU_BIN/kv_cache_programs_test" \
        --kiln-run "$KILN_RUN" "${only[@]}" >"$LOGS/kv-cache-ops.log" 2>&1 ;;
    kv-cache-genai)
      "$PYTHON" test/e2e/kv_cache_decode_test.py --genai --kiln-compile "$KILN_COMPILE" \
        --decode-test "$GPU_BIN/kv_cache_decode_test" --programs-test "$GPU_BIN/kv_cache_programs_test" \
        --kiln-run "$KILN_RUN" "${only[@]}" >"$LOGS/kv-cache-genai.log" 2>&1 ;;
    small-models)
      "$PYTHON" test/e2e/small_models_test.py --kiln-compile "$KILN_COMPILE" --kiln-run "$KILN_RUN" \
        --seed 1 >"$LOGS/small-models.log" 2>&1 ;;
    node-tests)
      "$PYTHON" test/e2e/onnx_node_tests.py --all --kiln-compile "$KILN_COMPILE" --kiln-run "$KILN_RUN" \
        -j "$(nproc)" --json "$LOGS/node-tests.json" >"$LOGS/node-tests.log" 2>&1 ;;
    gpu-unit)
      KILN_RUN="$KILN_RUN" "$GPU_BIN/kiln_runtime_gpu_tests" >"$LOGS/gpu-unit.log" 2>&1 ;;
    hopper-prefill)
      "$GPU_BIN/decode_attention_test" --sm90 >"$LOGS/hopper-prefill.log" 2>&1 ;;
    decode-attention)
      "$GPU_BIN/decode_attention_test" >"$LOGS/decode-attention.log" 2>&1 ;;
    sample)
      { "$GPU_BIN/sample_test" && "$GPU_BIN/sample_test" --bench; } >"$LOGS/sample.log" 2>&1 ;;
    *) echo "device_checks: unknown step '$step'" >&2; exit 2 ;;
  esac
  r=$?
  echo "== $step: exit $r in $((SECONDS - start)) s; last lines of $LOGS/$step.log:"
  tail -6 "$LOGS/$step.log"
  [[ $r -eq 0 || $r -eq 77 ]] || status=1
done
exit "$status"
