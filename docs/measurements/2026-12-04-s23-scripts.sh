# Session 23 (2026-12-04), one NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0,
# transformers 5.17.0). Build machine, before each GPU call:
#   KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh      (.carry-bench/: 6349e56 for run 1, the
#                                                          working tree of run 2, 1dd7d8f for run 3,
#                                                          9db930d for run 4)
#   the previous call's kiln-compile.xz copied as .carry-gpu/kiln-compile-base.xz (A/B runs 2 and 4)
# GPU machine; logs under $OUT, copied here with machine paths replaced.
#
# run 1 (compiler 6349e56: prefill plan by time, --skinny-tensor-cores off by default):
scripts/bench_real_size.sh --generate --prompts 128,700,1700,2048 --batches 1,8 --peers forward_ro --peer-prompts 2048
for p in decode_b1 decode_b8 prefill_b1_s256; do
  .carry-bench/bin/kiln-run .bench-work/llama_gen.kiln --program $p --inputs-generate random:1 --bench 100; done
ncu --clock-control none --cache-control none --launch-skip 6 --launch-count 14 --section SpeedOfLight \
  --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section WarpStateStats \
  --section SchedulerStats -o ncu-decode_b1 .carry-bench/bin/kiln-run llama_gen.kiln --program decode_b1 --inputs-generate random:1
#   (and decode_b8)
scripts/bench_real_size.sh --generate --prompts 128,2048 --batches 1,8 --peers "" --kiln-flags=--skinny-tensor-cores=on
python3 test/bench/compare_generate_tokens.py LOG_DEFAULT/bench-generate LOG_ON/bench-generate
#   (also run 1 default vs run 2 and run 1 =on vs run 2, on the build machine with the fetched logs;
#   and each run's batch-8 row 0 against its batch-1 tokens:)
python3 test/bench/compare_generate_tokens.py --across-batches LOG/bench-generate   # runs 1, 2, 3
#
# run 2 (working tree: --skinny-tensor-cores=auto and the decode attention's early reads, reverted
# after this run):
decode_attention_test --no-timing                      # test/gpu/build_decode_attention_test.sh; cut at 120 s
scripts/bench_real_size.sh --generate --prompts 128,2048 --batches 1,8 --peers eager --peer-prompts 128
FLAGS="--kv-cache --max-seq-len 2304 --shape input_ids=1..8x1..2048 --precision fp16 --target sm_90"
kiln-compile-base llama_gen.onnx -o base.kiln $FLAGS; kiln-compile llama_gen.onnx -o off.kiln $FLAGS --skinny-tensor-cores=off
for a in base new off base new; do for p in decode_b1 decode_b8; do
  .carry-bench/bin/kiln-run $a.kiln --program $p --inputs-generate random:1 --bench 200; done; done
.carry-bench/bin/kiln-run X.kiln --program decode_b8 --inputs-generate random:3 --output logits=X.npy   # X = new, off, base
python3 test/bench/compare_logits.py new.npy off.npy; python3 test/bench/compare_logits.py off.npy base.npy   # and decode_b1 new/off
#
# run 3 (compiler 1dd7d8f: auto by default, the 1024-token prefill program):
python3 test/e2e/kv_cache_decode_test.py --kiln-compile KILN_COMPILE --decode-test .carry-gpu/kv_cache_decode_test \
  --programs-test .carry-gpu/kv_cache_programs_test --kiln-run .carry-bench/bin/kiln-run --only fp16-b8,bf16-b8,fp16-b1,programs-fp16
scripts/bench_real_size.sh --generate --prompts 128,700,1000,1500,2048 --batches 1,8 --peers forward_ro --peer-prompts 2048
.carry-bench/bin/kiln-run llama_gen.kiln --info
for p in decode_b1 decode_b8 prefill_b1_s32 prefill_b1_s256 prefill_b1_s1024 prefill_b1_s2048; do
  .carry-bench/bin/kiln-run llama_gen.kiln --program $p --inputs-generate random:1 --bench 50; done
ncu ... --section SourceCounters --launch-skip 6 --launch-count 6 ... --program decode_b8   # as run 1
#
# run 4 (compiler with the split-K by resident clusters; base = run 3's), 2 layers at real width:
scripts/bench_real_size.sh --generate --layers 2 --prompts 32 --batches 8 --new-tokens 16 --peers ""
for b in 1 8; do kiln-compile-base llama_gen.onnx -o base$b.kiln --kv-cache --max-seq-len 2304 --shape input_ids=${b}x1 --precision fp16
                 kiln-compile      llama_gen.onnx -o new$b.kiln  --kv-cache --max-seq-len 2304 --shape input_ids=${b}x1 --precision fp16; done
for r in 1 2; do for a in base new; do for b in 8 1; do .carry-bench/bin/kiln-run $a$b.kiln --inputs-generate random:1 --bench 300; done; done; done
.carry-bench/bin/kiln-run X8.kiln --inputs-generate random:3 --output logits=X.npy                         # X = base, new
python3 test/bench/compare_logits.py new.npy base.npy
#
# Build machine, after the GPU calls: the mean prefill over prompts 1..2048 with and without the
# 1024-token program, both scored with run 3's program latencies (CUDA graph p50) and the plan the
# compiler's estimates pick (run 3's `kiln-run --info --json`; the second without prefill_b1_s1024):
.venv/bin/python test/bench/prefill_plan_model.py --info info.json --measured 1:827,32:1115,256:1959,1024:4248,2048:7985
#   -> by padding 7.96 ms, by the estimates 5.53 ms, best 5.52 ms; 32 lengths (1281..1312) slower than by padding
.venv/bin/python test/bench/prefill_plan_model.py --info info-no1024.json --measured 1:827,32:1115,256:1959,2048:7985
#   -> by padding 9.75 ms, by the estimates 6.42 ms, best 6.39 ms
# (Before the GPU run, with a 1024-token latency extrapolated from session 22's, the model had given
# 6.38 -> 5.63 ms; the commit message of 1dd7d8f quotes that prediction.)
