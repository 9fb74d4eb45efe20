#!/usr/bin/env bash
# Session 28, run 3 (planned, H200): the larger Llama config of the issue (hidden 3072, 28 layers,
# 3.0 B parameters), exported in fp16 (6 GB) to fit one call: kiln at prompts 128 and 2048, batch 1
# and 8, against transformers' static cache + torch.compile at prompt 128. Carry .carry-bench.
S=scripts/bench_real_size.sh
mkdir -p $OUT/r
KILN_LOG_DIR=$OUT/r/logs timeout 590 $S --generate --size 3b --export-dtype float16 --prompts 128,2048 --batches 1,8 --new-tokens 128 --peers static_compile --peer-prompts 128 > $OUT/r/bench-3b.txt 2>&1; echo "bench 3b rc $?"
grep -E "exported|kiln-compile|kiln P=|static_compile P=|copy bandwidth|HBM" $OUT/r/bench-3b.txt | tail -14
tar czf $OUT/run3.tgz -C $OUT r && rm -rf $OUT/r
exit 0
