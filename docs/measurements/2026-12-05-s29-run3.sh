#!/usr/bin/env bash
# Session 29, run 3 (H200): session 28's decode rotary (cos and sin computed per element inside the
# KV-cache append + paged attention, 83 launches per 0.8B step) against the table kernels it
# replaced (--decode-rotary=kernel, one merged table kernel: 84 launches), from one export:
# the generation benchmark of both (no peers), alternated generate runs, decode_b1 as a CUDA
# graph, and ncu of the first 12 kernels of decode_b1 of each with the same random inputs; then
# ncu's sections for three decode GEMMs.
# Carry .carry-bench.
export KILN_LOG_DIR=$OUT/logs
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
mkdir -p $OUT/r
$S --generate --prompts 128,2048 --batches 1,8 --new-tokens 128 --peers '' > $OUT/r/bench-recompute.txt 2>&1; echo "bench recompute rc $?"
cp .bench-work/llama_gen.kiln /tmp/rec.kiln
$S --generate --prompts 128,2048 --batches 1,8 --new-tokens 128 --peers '' --kiln-flags=--decode-rotary=kernel > $OUT/r/bench-kernel.txt 2>&1; echo "bench kernel rc $?"
cp .bench-work/llama_gen.kiln /tmp/ker.kiln
grep -E "kiln P=" $OUT/r/bench-recompute.txt $OUT/r/bench-kernel.txt
J='import json,sys; d=json.load(sys.stdin); print("prefill %.3f ms, %.1f tok/s, p50 %.4f p99 %.4f" % (d["prefill_ms"], d["decode_tokens_per_s"], d["decode_step_p50_ms"], d["decode_step_p99_ms"]))'
for i in 1 2; do for v in ker rec; do for b in 1 8; do for p in 128 2048; do
  echo -n "$i $v B$b P$p: "; $R /tmp/$v.kiln --generate 128 --prompt-ids .bench-work/prompt-$p.npy --batch $b --warmup 1 --json 2>/dev/null | python3 -c "$J"
done; done; done; done 2>&1 | tee $OUT/r/alternated.txt
for v in ker rec ker rec; do echo "graph $v: $($R /tmp/$v.kiln --program decode_b1 --inputs-generate random:1 --bench 300 2>&1 | grep -E 'latency_ms' | head -1)"; done 2>&1 | tee $OUT/r/graph.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size,launch__registers_per_thread,sm__cycles_active.avg
for v in ker rec; do timeout 60 ncu --metrics $M --launch-count 12 --csv $R /tmp/$v.kiln --program decode_b1 --inputs-generate random:1 --bench 1 > $OUT/r/ncu-$v.csv 2>&1; echo "ncu $v rc $?"; done
# Why the decode GEMMs stream below the bandwidth: the first QKV, gate/up and down GEMMs of
# decode_b1 (the default artifact) with ncu's throughput, memory, warp-state and occupancy sections.
timeout 120 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --kernel-name regex:'kiln_k(1|4|5)$' --launch-count 3 $R /tmp/rec.kiln --program decode_b1 --inputs-generate random:1 --bench 1 > $OUT/r/ncu-gemms.txt 2>&1; echo "ncu gemms rc $?"
cp -r $OUT/logs $OUT/r/ 2>/dev/null; rm -rf $OUT/logs
tar czf $OUT/run3.tgz -C $OUT r && rm -rf $OUT/r
exit 0
