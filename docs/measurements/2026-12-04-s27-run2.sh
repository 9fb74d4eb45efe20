#!/usr/bin/env bash
# Session 27, run 2 (one device call, H200): the final compiler of the session (the decode
# attention's reads before its wait, run 1; the sampler's row maximum over a cluster of 8
# blocks). sample_test (the cluster form against one block) and its --bench; the full
# generation benchmark with its peers; decode_b1 as a CUDA graph; ncu of one decode_b1 step
# (time per kernel, each alone); the kv-cache checks. Carry .carry-bench, .carry-gpu.
export KILN_LOG_DIR=$OUT/logs
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
mkdir -p $OUT/r
xz -dkc .carry-gpu/sample_test.xz > /tmp/sample_test && chmod +x /tmp/sample_test
timeout 60 stdbuf -oL /tmp/sample_test > $OUT/r/sample-test.txt 2>&1; echo "sample_test rc $?"
grep -E "FAIL|cluster|failure" $OUT/r/sample-test.txt | tail -4
timeout 60 stdbuf -oL /tmp/sample_test --bench > $OUT/r/sample-bench.txt 2>&1; echo "sample_test --bench rc $?"
$S --generate --prompts 128,2048 --batches 1,8 --peers static_compile,forward_ro > $OUT/r/bench.txt 2>&1; echo "bench rc $?"
grep -E "kiln P=|static_compile P=|copy bandwidth|forward" $OUT/r/bench.txt | tail -12
cp .bench-work/llama_gen.kiln /tmp/a.kiln
for i in 1 2; do echo "graph: $($R /tmp/a.kiln --program decode_b1 --inputs-generate random:1 --bench 300 2>&1 | grep -E 'latency_ms' | head -1)"; done 2>&1 | tee $OUT/r/graph.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size,launch__block_size
timeout 90 ncu --metrics $M --launch-count 90 --csv $R /tmp/a.kiln --program decode_b1 --inputs-generate random:1 --bench 1 > $OUT/r/ncu.csv 2>&1; echo "ncu rc $?"
KILN_LOG_DIR=$OUT/r/checks KILN_KV_ONLY=fp16-b1,fp16-b8,bf16-b3,programs-fp16 timeout 150 scripts/device_checks.sh kv-cache > $OUT/r/kv-cache.txt 2>&1; echo "kv-cache rc $?"
tail -2 $OUT/r/kv-cache.txt
cp -r $OUT/logs $OUT/r/ 2>/dev/null; rm -rf $OUT/logs
tar czf $OUT/run2.tgz -C $OUT r && rm -rf $OUT/r
exit 0
