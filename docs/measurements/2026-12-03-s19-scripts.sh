# Session 19 (2026-12-03), one NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0,
# transformers 5.17.0). Build machine, before each GPU call:
#   KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh          (kiln-compile, kiln-run, libraries)
#   test/gpu/build_sample_test.sh, build_decode_attention_test.sh, build_attention_test.sh,
#   build_gemm_skinny_test.sh, stripped and xz-compressed into .carry-gpu/ (git-ignored)
# GPU machine, carrying .carry-bench and .carry-gpu; logs under $OUT, copied here.
for f in .carry-gpu/*.xz; do xz -d -f $f; done; chmod +x .carry-gpu/*
# run 1 (compiler c69d046):
.carry-gpu/sample_test
timeout 70 .carry-gpu/decode_attention_test --no-timing          # cut off at 70 s: 203 PASS, 0 FAIL
KC="$(scripts/bench_real_size.sh --setup-only | tail -1)"
python3 test/e2e/onnx_node_tests.py --all --filter 'pad|einsum|cast' --kiln-compile "$KC" \
  --kiln-run .carry-bench/bin/kiln-run -j 16 --json node.json
KILN_LOG_DIR=$OUT/checks scripts/device_checks.sh kv-cache kv-cache-plain small-models
# run 2 (compiler c69d046): full size with peers, per-kernel profiles, the few-row norm A/B
KILN_LOG_DIR=$OUT/full scripts/bench_real_size.sh --generate --peers static_compile,forward_ro
.carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --program decode_b1 --inputs-generate random:1 --profile 20
.carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --program decode_b8 --inputs-generate random:1 --profile 20
KILN_LOG_DIR=$OUT/normkernel scripts/bench_real_size.sh --generate --peers "" --kiln-flags=--norm-into-gemm=kernel
# run 3 (sampler 296a4b6; Hopper attention test binary from branch hopper-attention at 18d48b2):
.carry-gpu/sample_test; .carry-gpu/sample_test --bench
.carry-gpu/attention_test --filter sm90
python3 test/bench/bench_attention.py --kiln .carry-gpu/attention_test
python3 test/bench/bench_attention.py --long --kiln .carry-gpu/attention_test --kiln-filter sm90
# run 4 (compiler 7b59e9a: sampler thresholds, import review fixes; gemm_skinny_test from 2bccabd):
.carry-gpu/sample_test; .carry-gpu/sample_test --bench
timeout 70 .carry-gpu/gemm_skinny_test                            # cut off: no result
.carry-gpu/gemm_skinny_test --bench-only
KILN_LOG_DIR=$OUT/checks scripts/device_checks.sh small-models
scripts/bench_real_size.sh --generate --peers "" --prompts 128
scripts/bench_real_size.sh --generate --peers "" --prompts 128 --sampling 0.8,50,0.95
