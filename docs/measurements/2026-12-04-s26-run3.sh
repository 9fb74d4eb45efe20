#!/usr/bin/env bash
# Session 26, run 3 (one device call, H200): the weight preload with one block slot per SM left
# for the next kernel (2 blocks per SM of the preloading GEMM at 1-4 rows; 8 rows without preload).
# gemm_skinny_test cases (preload included); the generation benchmark of the default artifact and
# of --skinny-weight-preload=false from one export, alternated; ncu per kernel of the default
# decode_b1; the kv-cache checks. Carry .carry-bench, .carry-gpu; $OUT packed in one tarball.
export KILN_LOG_DIR=$OUT/logs
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
mkdir -p $OUT/r
if [[ -f .carry-gpu/gemm_skinny_test.xz ]]; then
  xz -dkc .carry-gpu/gemm_skinny_test.xz > /tmp/gemm_skinny_test && chmod +x /tmp/gemm_skinny_test
  timeout 100 stdbuf -oL /tmp/gemm_skinny_test > $OUT/r/gemm-skinny.txt 2>&1; echo "gemm_skinny_test rc $?"
fi
$S --generate --prompts 128,2048 --batches 1,8 --new-tokens 128 --peers '' > $OUT/r/bench-preload.txt 2>&1; echo "bench preload rc $?"
cp .bench-work/llama_gen.kiln /tmp/pre.kiln
$S --generate --prompts 128,2048 --batches 1,8 --new-tokens 128 --peers '' --kiln-flags=--skinny-weight-preload=false > $OUT/r/bench-base.txt 2>&1; echo "bench base rc $?"
cp .bench-work/llama_gen.kiln /tmp/base.kiln
J='import json,sys; d=json.load(sys.stdin); print("prefill %.3f ms, %.1f tok/s, p50 %.4f p99 %.4f" % (d["prefill_ms"], d["decode_tokens_per_s"], d["decode_step_p50_ms"], d["decode_step_p99_ms"]))'
for i in 1 2; do for v in base pre; do for b in 1 8; do for p in 128 2048; do
  echo -n "$i $v B$b P$p: "; $R /tmp/$v.kiln --generate 128 --prompt-ids .bench-work/prompt-$p.npy --batch $b --warmup 1 --json 2>/dev/null | python3 -c "$J"
done; done; done; done 2>&1 | tee $OUT/r/alternated.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__waves_per_multiprocessor,sm__cycles_active.avg,gpc__cycles_elapsed.max
timeout 100 ncu --metrics $M --launch-count 100 --csv $R /tmp/pre.kiln --program decode_b1 --inputs-generate random:1 --bench 1 > $OUT/r/ncu-pre.csv 2>&1; echo "ncu rc $?"
$R /tmp/pre.kiln --program decode_b1 --inputs-generate random:1 --bench 300 > $OUT/r/graph-pre.txt 2>&1
$R /tmp/base.kiln --program decode_b1 --inputs-generate random:1 --bench 300 > $OUT/r/graph-base.txt 2>&1
KILN_LOG_DIR=$OUT/r/checks KILN_KV_ONLY=fp16-b1,fp16-b8,bf16-b3,programs-fp16 timeout 150 scripts/device_checks.sh kv-cache > $OUT/r/kv-cache.txt 2>&1; echo "kv-cache rc $?"
cp -r $OUT/logs $OUT/r/ 2>/dev/null; rm -rf $OUT/logs
tar czf $OUT/run3.tgz -C $OUT r && rm -rf $OUT/r
exit 0
