#!/usr/bin/env bash
# Session 32, run 4: the larger Llama config (--size 3b: hidden 3072, 28 layers, 24/8
# heads, intermediate 8192; 3.0 B parameters, exported in float16), kiln at P = 128 and 2048,
# batch 1 and 8, with the static cache under torch.compile at P = 128 as the same-run peer
# (the export alone takes minutes; the other peers do not fit one call). Carry .carry-bench.
S=scripts/bench_real_size.sh
mkdir -p $OUT/r
KILN_LOG_DIR=$OUT/r/logs timeout 580 $S --generate --size 3b --export-dtype float16 \
  --prompts 128,2048 --batches 1,8 --peers static_compile --peer-prompts 128 > $OUT/r/bench.txt 2>&1
echo "bench rc $?"
grep -E "^\[" $OUT/r/bench.txt | tail -14
nvidia-smi --query-gpu=name --format=csv,noheader
tar czf $OUT/run4.tgz -C $OUT r && rm -rf $OUT/r
exit 0
