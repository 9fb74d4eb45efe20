#!/usr/bin/env bash
# Session 28, run 2 (planned, H200): the generation benchmark with session 28's compiler (the
# rotary angles in f32, computed inside the decode attention: 83 launches per decode step, not 87) and
# its peers, decode_b1 as a CUDA graph, the kernels of one step under ncu. Carry .carry-bench.
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
mkdir -p $OUT/r
KILN_LOG_DIR=$OUT/r/logs $S --generate --prompts 128,2048 --batches 1,8 --peers static_compile,forward_ro > $OUT/r/bench.txt 2>&1; echo "bench rc $?"
grep -E "kiln P=|static_compile P=|copy bandwidth|forward" $OUT/r/bench.txt | tail -12
cp .bench-work/llama_gen.kiln /tmp/a.kiln
for i in 1 2; do echo "graph: $($R /tmp/a.kiln --program decode_b1 --inputs-generate random:1 --bench 300 2>&1 | grep -E 'latency_ms' | head -1)"; done 2>&1 | tee $OUT/r/graph.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size,launch__block_size
timeout 90 ncu --metrics $M --launch-count 90 --csv $R /tmp/a.kiln --program decode_b1 --inputs-generate random:1 --bench 1 > $OUT/r/ncu.csv 2>&1; echo "ncu rc $?"
tar czf $OUT/run2.tgz -C $OUT r && rm -rf $OUT/r
exit 0
