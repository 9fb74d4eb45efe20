# Session 22 (2026-12-03), one NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0,
# transformers 5.17.0). Build machine, before the GPU calls:
#   KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh            (.carry-bench/, at b30d942 for run 1,
#                                                                at 4455c63 for runs 2-3)
#   test/gpu/build_decode_attention_test.sh build/decode_attention_test, stripped, xz into .carry-gpu/
#   scripts/prepare_python_carry.sh --python <CPython 3.12>     (the kiln-runtime wheel)
# GPU machine; logs under $OUT, copied here with machine paths replaced.
#
# run 1 (compiler b30d942: Hopper attention over the paged cache still off by default):
.carry-gpu/decode_attention_test --sm90                                   # 80 of 80 cases; timings
scripts/bench_real_size.sh --generate --prompts 2048 --batches 1 --peers forward_ro
scripts/bench_real_size.sh --generate --prompts 2048 --batches 1 --peers "" --kiln-flags=--hopper-prefill-attention
#   the kiln-runtime wheel, pip install --no-index; GPT-2 124M exported by
scripts/bench_real_size.sh --models gpt2 --peers "" --keep-artifacts --quick
#   (its artifact was removed at the end despite --keep-artifacts: fixed in 4455c63), so compiled
#   again from the cached export with the carried kiln-compile:
kiln-compile .bench-work/export-gpt2/gpt2.onnx -o <tmp>/gpt2-1x128-fp16.kiln --precision fp16 --shape input_ids=1x128 --target sm_90
python3 test/python/gpu_check.py <tmp>/gpt2-1x128-fp16.kiln --iterations 200    # then twice more,
.carry-bench/bin/kiln-run <tmp>/gpt2-1x128-fp16.kiln --inputs-generate random:1 --bench 200   # alternating
.carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --program prefill_b1_s2048 --inputs-generate random:1 --profile 10
.carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --program decode_b1 --inputs-generate random:1 --profile 10
#
# run 2 (compiler 4455c63: --hopper-prefill-attention on by default), .carry-gpu/run2.sh:
scripts/bench_real_size.sh --generate --prompts 128,2048 --batches 1,8 --peers static_compile,forward_ro
#   (cut by the script's own 325 s limit after static_compile P=2048 B=1: no P=2048 B=8 peer, no forward_ro)
for p in prefill_b1_s32 prefill_b1_s256 prefill_b1_s2048 decode_b1 decode_b8; do
  .carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --program $p --inputs-generate random:1 --bench 50; done
.carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --program prefill_b1_s32 --inputs-generate random:1 --profile 5   # and s256
scripts/bench_real_size.sh --generate --prompts 128,2048 --batches 1,8 --peers "" --kiln-flags=--skinny-tensor-cores=on
#   (an on/off comparison in this run was void: the off compile was cut by the script's time limit)
#
# run 3 (same compiler), .carry-gpu/run3.sh: 2-layer config at real width, Hopper prefill on and off,
# the same prefill_b1_s2048 inputs (ids random, positions 0..2047, block table 0..143, seq_lens 0):
scripts/bench_real_size.sh --generate --prompts 2048 --batches 1 --layers 2 --peers ""
scripts/bench_real_size.sh --generate --prompts 2048 --batches 1 --layers 2 --peers "" --kiln-flags=--hopper-prefill-attention=false
.carry-bench/bin/kiln-run ARTIFACT --program prefill_b1_s2048 --inputs-generate random:1 --input input_ids=ids.npy \
  --input position_ids=pos.npy --input kv_cache.block_table=table.npy --input kv_cache.seq_lens=zeros --output logits=X.npy
scripts/device_checks.sh kv-cache          # cut by the call's time limit after 18 checks, all PASS
#
# Build machine, after the GPU calls (the prefill plan by time; numbers in docs/generation.md and
# the session's closing note): the 16-layer 0.8B Llama exported and compiled here, its programs'
# estimates read back, and the plans scored with run 2's measured program latencies:
python3 examples/export/export_hf.py llama -o llama_gen.onnx --seed 0 --task causal-lm --with-past \
  --exporter dynamo --config vocab_size=32000,hidden_size=2048,num_hidden_layers=16,num_attention_heads=32,num_key_value_heads=8,intermediate_size=5632,max_position_embeddings=4096
build/bin/kiln-compile llama_gen.onnx -o l16.kiln --kv-cache --max-seq-len 2304 --shape input_ids=1..8x1..2048 --precision fp16 --target sm_90 --quiet
build/bin/kiln-run l16.kiln --info          # est. us per program; padding 26.3% / 25.7% (plan by time)
build/bin/kiln-run l16.kiln --info --json > info.json
.venv/bin/python test/bench/prefill_plan_model.py --info info.json --measured 1:830,32:1114,256:1946,2048:8000
#   -> by padding 9.71 ms, by the estimates 6.42 ms, best 6.38 ms; 65 lengths slower (769..1024)
# HBM fraction of run 2's table (bytes per step as test/bench/bench_generate.py's step_bytes, over
# the p50 step and the copy bandwidth 4203 GB/s):
.venv/bin/python test/bench/prefill_plan_model.py --hbm 128:1:0.895,128:8:1.690,2048:1:0.940,2048:8:1.862 --bandwidth 4203
