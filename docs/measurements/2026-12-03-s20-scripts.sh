# Session 20 (2026-12-03), one NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0,
# transformers 5.17.0). Build machine, before the GPU calls:
#   KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh (earlier), then kiln-compile/kiln-run updated
#   in .carry-bench/ at each compiler commit named below
#   test/gpu/build_attention_test.sh, build_gemm_skinny_test.sh, stripped and xz-compressed into
#   .carry-gpu/ (git-ignored)
#   scripts/prepare_python_carry.sh --python <CPython 3.12>   (.carry-python/: the kiln-runtime wheel,
#   tiny artifacts xz-compressed, pytest wheels for a machine without pytest)
# GPU machine; logs under $OUT, copied here.
# run 1 (attention_test and gemm_skinny_test at 3c82eb6):
for f in .carry-gpu/*.xz; do xz -d -f $f; done; chmod +x .carry-gpu/*
.carry-gpu/attention_test                                               # 604 PASS, 0 failed
python3 test/bench/bench_attention.py --kiln .carry-gpu/attention_test
python3 test/bench/bench_attention.py --long --kiln .carry-gpu/attention_test --kiln-filter sm90
.carry-gpu/gemm_skinny_test                                             # OK: 0 of 876 cases failed
# (three ncu runs asked for kernels by a regex that matched none: "No kernels were profiled")
# run 2 (compiler 3c82eb6, Hopper attention still off by default):
KC="$(scripts/bench_real_size.sh --setup-only | tail -1)"
E2E="python3 test/e2e/e2e_test.py --kiln-compile $KC --kiln-run .carry-bench/bin/kiln-run \
  --models-dir .carry-bench/models --models gpt2_tiny_dynamo,bert_tiny_dynamo,llama_tiny_dynamo \
  --shapes 64x128,40x100,1x16 --seed 7"
$E2E --precision fp16
$E2E --precision fp16 --compile-flag=--hopper-attention
$E2E --precision bf16 --compile-flag=--hopper-attention --compile-flag=--hopper-attention-persistent
scripts/bench_real_size.sh --long-prompts --peers compile_ro
scripts/bench_real_size.sh --long-prompts --peers eager --kiln-flags=--hopper-attention
# run 3 (compiler 707e6bb + the same binary: Hopper attention on by default, persistent auto):
scripts/bench_real_size.sh --long-prompts --peers compile_ro --profile 3 --profile-top 25
scripts/bench_real_size.sh --models gpt2,bert --peers compile_ro
# run 4 (compiler and wheel at the merge of the Python package, large causal masks recognized):
bash .carry-python/run4.sh      # run_gpu_check.sh (wheel, gpu_check.py, pytest), GPT-2 124M from
                                # torch tensors vs kiln-run --bench, --long-prompts with --profile
