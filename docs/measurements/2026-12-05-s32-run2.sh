#!/usr/bin/env bash
# Session 32, run 2: the generation benchmark with every peer in one call (transformers eager
# generate, static cache under torch.compile reduce-overhead, torch.compile's forward for TTFT),
# P = 128 and 2048, batch 1 and 8, 256 new tokens. Carry .carry-bench.
S=scripts/bench_real_size.sh
mkdir -p $OUT/r
KILN_LOG_DIR=$OUT/r/logs timeout 570 $S --generate --prompts 128,2048 --batches 1,8 \
  --peers static_compile,forward_ro,eager > $OUT/r/bench.txt 2>&1; echo "bench rc $?"
grep -E "^\[" $OUT/r/bench.txt | tail -16
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar czf $OUT/run2.tgz -C $OUT r && rm -rf $OUT/r
exit 0
