# Session 24 (2026-12-04), H200 (nvidia-h200 kind), compiler at 6562980.
# Build machine: KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh; copy build/test/kv_cache_decode_test,
# build/test/kv_cache_programs_test to .carry-gpu/; test/gpu/build_decode_attention_test.sh
# .carry-gpu/decode_attention_test; test/gpu/build_sample_test.sh .carry-gpu/sample_test; strip them.
# GPU machine, carry .carry-bench and .carry-gpu:
#
# run 1:
scripts/device_checks.sh decode-attention sample
KILN_KV_ONLY=fp32-b3-fused-append,fp16-b1-fused-append,fp16-b8-fused-append,bf16-b3-fused-append,programs-fp16-fused-append \
  scripts/device_checks.sh kv-cache
#
# run 2 (two calls on the same warm machine; the export and nothing else cached between them):
scripts/bench_real_size.sh --generate --prompts 128,2048 --batches 1,8 --peers static_compile,forward_ro
scripts/bench_real_size.sh --generate --prompts 128,2048 --batches 1,8 --peers '' --kiln-flags=--fuse-kv-append
#
# run 3 (one call): both artifacts, then alternated runs of each
S=scripts/bench_real_size.sh
$S --generate --prompts 128,2048 --batches 1 --peers '';                                  cp .bench-work/llama_gen.kiln /tmp/a.kiln
$S --generate --prompts 128,2048 --batches 1 --peers '' --kiln-flags=--fuse-kv-append;   cp .bench-work/llama_gen.kiln /tmp/b.kiln
for i in 1 2 3; do for v in a b; do for p in 128 2048; do
  .carry-bench/bin/kiln-run /tmp/$v.kiln --generate 256 --prompt-ids .bench-work/prompt-$p.npy --batch 1 --warmup 1 --json
done; done; done
#
# run 4: run 3 with --batches 1,8 (and --batch 1, 8 in the loop), with decode_attention.cuh's fused
# stores moved after the Q rows and the pipeline's first tiles (not kept: the batch-1 ratio did not
# move), after .carry-gpu/decode_attention_test (all cases and timings) of that header.
#
# run 5 (one call): the 0.8B Llama at 4 layers, six decode_b1 artifacts, alternated benches
S=scripts/bench_real_size.sh; KC=$($S --setup-only | tail -1)
$S --generate --layers 4 --prompts 32 --batches 1 --new-tokens 8 --peers ''      # the export
O=.bench-work/export-llama-gen-l4/llama_gen.onnx
for v in "a" "b --fuse-kv-append" "c --programmatic-launch=at-exit" "d --fuse-kv-append --programmatic-launch=at-exit" \
         "e --programmatic-launch=off" "f --fuse-kv-append --programmatic-launch=off"; do
  set -- $v; n=$1; shift
  $KC $O -o /tmp/$n.kiln --kv-cache --max-seq-len 2304 --shape input_ids=1x1 --precision fp16 --target sm_90 --quiet "$@"; done
for i in 1 2 3; do for n in a b c d e f; do .carry-bench/bin/kiln-run /tmp/$n.kiln --inputs-generate random:1 --bench 500; done; done
