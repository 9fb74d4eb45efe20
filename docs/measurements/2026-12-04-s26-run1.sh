#!/usr/bin/env bash
# Session 26, run 1 (one device call, H200): session 25's run 6 (attention_test's negative-scale
# cases, the priced prefill plan read from the full-size artifact, TTFT at prompts it re-plans),
# then where the batch-1 decode step's time goes: ncu per kernel of one decode_b1 step (duration,
# DRAM bytes and throughput, occupancy limits, waves) and source counters of the layer's GEMMs and
# attention; nsys of the step as a CUDA graph when the machine has nsys. Carry .carry-bench,
# .carry-gpu.
export KILN_LOG_DIR=$OUT/logs
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
{ which ncu nsys; ls -d /opt/nvidia/nsight-systems* /usr/local/cuda/bin/nsys 2>&1; nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv; } > $OUT/tools.txt 2>&1
xz -dkc .carry-gpu/attention_test.xz > /tmp/attention_test && chmod +x /tmp/attention_test
timeout 100 /tmp/attention_test --filter sm90 > $OUT/attention-test-sm90.txt 2>&1; echo "attention_test rc $?"
$S --generate --prompts 128,700,1500,2048 --batches 1 --new-tokens 32 --peers '' > $OUT/bench.txt 2>&1; echo "bench rc $?"
cp .bench-work/llama_gen.kiln /tmp/a.kiln
$R /tmp/a.kiln --info > $OUT/info.txt 2>&1
$R /tmp/a.kiln --info --json > $OUT/info.json 2>&1
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_cluster_pct,launch__waves_per_multiprocessor,sm__cycles_active.avg,sm__cycles_active.max,gpc__cycles_elapsed.max,sm__warps_active.avg.pct_of_peak_sustained_active
timeout 150 ncu --metrics $M --launch-count 120 --csv $R /tmp/a.kiln --program decode_b1 --inputs-generate random:1 --bench 1 > $OUT/ncu-decode-b1.csv 2> $OUT/ncu-decode-b1.err; echo "ncu rc $?"
timeout 150 ncu --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis -k regex:'kiln_k(3|7|8|9|10)$' --launch-count 5 -f -o $OUT/dec $R /tmp/a.kiln --program decode_b1 --inputs-generate random:1 --bench 1 > $OUT/ncu-src.log 2>&1; echo "ncu src rc $?"
ncu -i $OUT/dec.ncu-rep --page details > $OUT/dec-details.txt 2>&1
for k in 3 7 8 9 10; do ncu -i $OUT/dec.ncu-rep -k regex:"kiln_k$k\$" --page source --print-source sass --csv > $OUT/dec-k$k-sass.csv 2>&1; done
rm -f $OUT/dec.ncu-rep
if command -v nsys >/dev/null; then
  timeout 120 nsys profile --cuda-graph-trace=node -o $OUT/step -f true $R /tmp/a.kiln --program decode_b1 --inputs-generate random:1 --bench 20 > $OUT/nsys.log 2>&1
  nsys stats --report cuda_gpu_trace --format csv -o $OUT/step $OUT/step.nsys-rep >> $OUT/nsys.log 2>&1
  rm -f $OUT/step.nsys-rep $OUT/step.sqlite
fi
$R /tmp/a.kiln --program decode_b1 --inputs-generate random:1 --bench 200 > $OUT/bench-decode-b1.txt 2>&1
exit 0
