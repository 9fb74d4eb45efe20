#!/usr/bin/env bash
# Session 34, run 3 (not run: no device machine could be started; run 4 has its first two parts):
# 1. persistent_decode_bench, the fast loop and session 34's owner-warp loop (ring 8: a multiple of
#    its 8 consumer warps; run 2's ring 4 hung, see the loop's comment), timed in one run.
# 2. The embedding example on a GPU (test/e2e/generate_example_test.sh: examples/embed/generate.c
#    on the tiny Llama against torch's greedy tokens, and --top-k 1 with a temperature).
# 3. The generation benchmark's artifact (P = 128, batch 1 and 8, no peers) with kiln-run
#    --profile 20 of every program: where the batch-8 step's time goes per kernel, beside batch 1.
# Carry .carry-gpu/persistent_decode_bench.xz, .carry-gpu/gen.tar.xz (gen/: build/bin/kiln-generate-example
# and build/runtime/libkiln_runtime.so.0.3) and .carry-bench (KILN_SKIP_BUILD=1 scripts/prepare_bench_carry.sh).
mkdir -p $OUT/r
xz -dc .carry-gpu/persistent_decode_bench.xz > /tmp/persistent_decode_bench && chmod +x /tmp/persistent_decode_bench
tar xJf .carry-gpu/gen.tar.xz -C /tmp && G=/tmp/gen
for c in fast owner; do
  timeout 60 /tmp/persistent_decode_bench --consumer $c > $OUT/r/persistent-bench-$c.txt 2>&1; echo "persistent bench $c rc $?"
  grep -E "FAIL|per step|fail" $OUT/r/persistent-bench-$c.txt | head -12
done
KC=$(scripts/bench_real_size.sh --setup-only 2>&1 | tail -1)
LD_LIBRARY_PATH=$G timeout 120 bash test/e2e/generate_example_test.sh "$KC" \
  $G/kiln-generate-example python3 > $OUT/r/generate-example.txt 2>&1; echo "generate example rc $?"
tail -2 $OUT/r/generate-example.txt
KILN_LOG_DIR=$OUT/r/logs timeout 330 scripts/bench_real_size.sh --generate --prompts 128 --batches 1,8 \
  --peers "" --profile 20 > $OUT/r/bench.txt 2>&1; echo "bench rc $?"
grep -E "kiln P=|copy bandwidth|profile" $OUT/r/bench.txt | head -20
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run3.tgz -C $OUT r && rm -rf $OUT/r
exit 0
