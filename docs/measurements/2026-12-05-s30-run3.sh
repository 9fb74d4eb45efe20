#!/usr/bin/env bash
# Session 30, run 3 (H200): the generation benchmark with its peers, session 30's compiler and runtime
# (chained decode steps, no L2 prefetch in the decode GEMMs), and decode_b1 as a CUDA graph. Of
# the peers only torch.compile's forward (TTFT) and the copy bandwidth: 376 s of device time were
# left after a call the machine was taken back from.
# Carry .carry-bench.
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
mkdir -p $OUT/r
KILN_LOG_DIR=$OUT/r/logs $S --generate --prompts 128,2048 --batches 1,8 --peers forward_ro > $OUT/r/bench.txt 2>&1; echo "bench rc $?"
grep -E "kiln P=|static_compile P=|copy bandwidth|forward" $OUT/r/bench.txt | tail -12
cp .bench-work/llama_gen.kiln /tmp/a.kiln
# Run 2's crash at exit (P=2048, batch 8; fixed in dadce15, the sessions forget the decode stream):
for i in 1 2 3; do $R /tmp/a.kiln --generate 64 --prompt-ids .bench-work/prompt-2048.npy --batch 8 --json > /dev/null 2>&1; echo "p2048 b8 exit $?"; done | tee $OUT/r/exit.txt
for i in 1; do echo "graph: $($R /tmp/a.kiln --program decode_b1 --inputs-generate random:1 --bench 300 2>&1 | grep -E 'latency_ms' | head -1)"; done 2>&1 | tee $OUT/r/graph.txt
tar czf $OUT/run3.tgz -C $OUT r && rm -rf $OUT/r
exit 0
