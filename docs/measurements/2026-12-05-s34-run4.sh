#!/usr/bin/env bash
# Session 34, run 4 (run 3 without its benchmark part: the device time left was short):
# 1. persistent_decode_bench, the fast loop and session 34's owner-warp loop (ring 8), one run each.
# 2. The embedding example on a GPU (test/e2e/generate_example_test.sh: examples/embed/generate.c
#    on the tiny Llama against torch's greedy tokens, and --top-k 1 with a temperature).
# Carry .carry-gpu/persistent_decode_bench.xz, .carry-gpu/gen.tar.xz (gen/: build/bin/kiln-generate-example
# and build/runtime/libkiln_runtime.so.0.3) and .carry-bench (for kiln-compile).
mkdir -p $OUT/r
xz -dc .carry-gpu/persistent_decode_bench.xz > /tmp/persistent_decode_bench && chmod +x /tmp/persistent_decode_bench
tar xJf .carry-gpu/gen.tar.xz -C /tmp && G=/tmp/gen
KC=$(scripts/bench_real_size.sh --setup-only 2>&1 | tail -1)
LD_LIBRARY_PATH=$G timeout 100 bash test/e2e/generate_example_test.sh "$KC" \
  $G/kiln-generate-example python3 > $OUT/r/generate-example.txt 2>&1; echo "generate example rc $?"
tail -2 $OUT/r/generate-example.txt
for c in owner fast; do
  timeout 50 /tmp/persistent_decode_bench --consumer $c --iters 20 > $OUT/r/persistent-bench-$c.txt 2>&1; echo "persistent bench $c rc $?"
  grep -E "FAIL|per step|fail|copy bandwidth:" $OUT/r/persistent-bench-$c.txt | head -12
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run4.tgz -C $OUT r && rm -rf $OUT/r
exit 0
