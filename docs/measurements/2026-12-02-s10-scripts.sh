# Session 10 (2026-12-02): the commands of each call of the H200 machine (NVIDIA H200, CUDA 13.0,
# driver 580), run from the repository root. Carried: .carry-bench (KILN_SKIP_BUILD=1
# scripts/prepare_bench_carry.sh; for runs 3 and 4 its bin/ replaced by the build's kiln-compile
# and kiln-run) and a git-ignored folder with these scripts (.devcarry/; run 4 also carried
# llama_tiny_dynamo.onnx and gpt2_tiny_dynamo.onnx there and a kiln-compile wrapper, kc.sh, that
# sets LD_LIBRARY_PATH to the libraries bench_real_size.sh unpacks). Logs beside this file
# (2026-12-02-s10-run<N>-*).

# ---- run 1: .devcarry/run1.sh
# run 1: PDL A/B on GPT-2 + BERT, and ncu of GPT-2 8x512's GEMMs
L=/tmp/logs; mkdir -p $L "$OUT"
date -u > $L/date.txt
KILN_LOG_DIR=$L/a timeout 270 scripts/bench_real_size.sh --models gpt2,bert --profile 20 --profile-top 8 > $L/a.txt 2>&1
echo "a rc=$?" >> $L/date.txt
KILN_PROGRAMMATIC_LAUNCH=0 KILN_LOG_DIR=$L/b timeout 150 scripts/bench_real_size.sh --models gpt2,bert --peers compile_ro > $L/b.txt 2>&1
echo "b rc=$?" >> $L/date.txt
LIB=$(ls -d /tmp/kiln-bench-lib-* | head -1)
ONNX=$(find .bench-work -name gpt2.onnx | head -1)
LD_LIBRARY_PATH=$LIB .carry-bench/bin/kiln-compile $ONNX --precision fp16 --shape input_ids=8x512 -o /tmp/g.kiln --emit=kernels -o /tmp/g.mlir > $L/c.txt 2>&1
LD_LIBRARY_PATH=$LIB .carry-bench/bin/kiln-compile $ONNX --precision fp16 --shape input_ids=8x512 -o /tmp/g.kiln >> $L/c.txt 2>&1
grep -o 'kiln.kernel @k[0-9]*_[a-z_0-9]*\|sm90_gemm_tile<[^>]*>' /tmp/g.mlir | head -60 >> $L/c.txt
for k in kiln_k2 kiln_k5 kiln_k6 kiln_k4; do
  timeout 60 ncu --kernel-name $k --launch-skip 1 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section LaunchStats --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,lts__t_bytes.sum.per_second,dram__bytes.sum.per_second .carry-bench/bin/kiln-run /tmp/g.kiln --inputs-generate random --no-cuda-graph --bench 2 > $L/ncu-$k.txt 2>&1
done
cd $L && tar czf "$OUT/run1-logs.tgz" . && cp a.txt b.txt "$OUT/" && cat date.txt

# ---- run 2: .devcarry/run2.sh
# run 2: interleaved PDL A/B (gpt2, bert, llama), Llama key rotary fused vs kernel, GPU unit tests
L=/tmp/logs; mkdir -p $L "$OUT"; date -u > $L/summary.txt
KILN_LOG_DIR=$L/llama timeout 240 scripts/bench_real_size.sh --models llama --peers eager --kiln-flags "--attention-key-rotary=kernel" > $L/llama-kernel-rotary.txt 2>&1
echo "llama bench rc=$?" >> $L/summary.txt
KILN_LOG_DIR=$L/gb timeout 120 scripts/bench_real_size.sh --models gpt2,bert --peers eager --quick > $L/gb.txt 2>&1
echo "gpt2,bert quick rc=$?" >> $L/summary.txt
LIB=$(ls -d /tmp/kiln-bench-lib-* | head -1)
KC() { LD_LIBRARY_PATH=$LIB timeout 120 .carry-bench/bin/kiln-compile "$@" --precision fp16 >> $L/compile.txt 2>&1 || echo "compile failed: $*" >> $L/summary.txt; }
G=$(find .bench-work -name gpt2.onnx | head -1); B=$(find .bench-work -name bert.onnx | head -1); LL=$(find .bench-work -name llama.onnx | head -1)
KC $G --shape input_ids=1x128 -o /tmp/g1.kiln; KC $G --shape input_ids=8x512 -o /tmp/g8.kiln
KC $B --shape input_ids=1x128,attention_mask=1x128 -o /tmp/b1.kiln; KC $B --shape input_ids=8x512,attention_mask=8x512 -o /tmp/b8.kiln
KC $LL --shape input_ids=4x512 -o /tmp/l4.kiln; KC $LL --shape input_ids=4x512 -o /tmp/l4k.kiln --attention-key-rotary=kernel
KC $LL --shape input_ids=1x128 -o /tmp/l1.kiln
for rep in 1 2 3; do for a in g1 g8 b1 b8 l1 l4 l4k; do for v in 1 0; do
  [ -f /tmp/$a.kiln ] || continue
  r=$(KILN_PROGRAMMATIC_LAUNCH=$v timeout 60 .carry-bench/bin/kiln-run /tmp/$a.kiln --inputs-generate random --bench 200 2>&1 | grep -o "p50=[0-9.]*")
  echo "rep$rep $a pdl=$v $r" >> $L/summary.txt
done; done; done
KC examples/models/gpt2_tiny.onnx --shape input_ids=2x128 -o /tmp/t16.kiln
LD_LIBRARY_PATH=$LIB timeout 60 .carry-bench/bin/kiln-compile examples/models/gpt2_tiny.onnx --shape input_ids=2x128 -o /tmp/t32.kiln >> $L/compile.txt 2>&1
KILN_TEST_MODELS=/tmp/t16.kiln:/tmp/t32.kiln:/tmp/b1.kiln timeout 200 .devcarry/kiln_runtime_gpu_tests > $L/gputests.txt 2>&1
echo "gpu tests rc=$?" >> $L/summary.txt; tail -3 $L/gputests.txt >> $L/summary.txt
grep -h "graph (PDL" $L/gputests.txt >> $L/summary.txt
cd $L && tar czf "$OUT/run2-logs.tgz" . && cp summary.txt llama-kernel-rotary.txt "$OUT/" && cat summary.txt

# ---- run 3: .devcarry/run3.sh
# run 3: PDL variants (early / at-exit / off) interleaved; Llama key rotary fused vs kernel
L=/tmp/logs; mkdir -p $L "$OUT"; S="$OUT/summary.txt"; date -u > $S
KILN_LOG_DIR=$L/llama timeout 240 scripts/bench_real_size.sh --models llama --peers eager --kiln-flags=--attention-key-rotary=kernel > $L/llama-kernel-rotary.txt 2>&1
echo "llama bench (rotary kernel) rc=$?" >> $S; grep "^Llama" $L/llama-kernel-rotary.txt >> $S
KILN_LOG_DIR=$L/gb timeout 120 scripts/bench_real_size.sh --models gpt2,bert --peers eager --quick > $L/gb.txt 2>&1
echo "gpt2,bert quick rc=$?" >> $S
LIB=$(ls -d /tmp/kiln-bench-lib-* | head -1)
KC() { LD_LIBRARY_PATH=$LIB timeout 120 .carry-bench/bin/kiln-compile "$@" --precision fp16 >> $L/compile.txt 2>&1 || echo "compile failed: $*" >> $S; }
G=$(find .bench-work -name gpt2.onnx | head -1); B=$(find .bench-work -name bert.onnx | head -1); LL=$(find .bench-work -name llama.onnx | head -1)
for p in early at-exit; do
KC $G --shape input_ids=1x128 -o /tmp/g1-$p.kiln --programmatic-launch=$p; KC $G --shape input_ids=8x512 -o /tmp/g8-$p.kiln --programmatic-launch=$p
KC $B --shape input_ids=1x128,attention_mask=1x128 -o /tmp/b1-$p.kiln --programmatic-launch=$p; KC $B --shape input_ids=8x512,attention_mask=8x512 -o /tmp/b8-$p.kiln --programmatic-launch=$p
KC $LL --shape input_ids=4x512 -o /tmp/l4-$p.kiln --programmatic-launch=$p
done
KC $LL --shape input_ids=4x512 -o /tmp/l4k-early.kiln --attention-key-rotary=kernel
for rep in 1 2 3; do for a in g1 g8 b1 b8 l4 l4k; do for v in early/1 at-exit/1 early/0; do
  p=${v%/*}; e=${v#*/}; f=/tmp/$a-$p.kiln
  [ -f $f ] || continue
  r=$(KILN_PROGRAMMATIC_LAUNCH=$e timeout 60 .carry-bench/bin/kiln-run $f --inputs-generate random --bench 100 2>&1 | grep -o "p50=[0-9.]*")
  echo "rep$rep $a $p env=$e $r" >> $S
done; done; done
.carry-bench/bin/kiln-run /tmp/l4k-early.kiln --profile 10 > $L/l4k-profile.txt 2>&1
.carry-bench/bin/kiln-run /tmp/l4-early.kiln --profile 10 > $L/l4-profile.txt 2>&1
cd $L && tar czf "$OUT/run3-logs.tgz" . && cat $S

# ---- run 4: .devcarry/run4.sh
# run 4: whole models with the new defaults (PDL at-exit, key rotary kernel), all peers; e2e tiny models
L=/tmp/logs; mkdir -p $L "$OUT"; S="$OUT/summary.txt"; date -u > $S
KILN_LOG_DIR=$L/llama timeout 250 scripts/bench_real_size.sh --models llama --profile 20 --profile-top 8 > $L/llama.txt 2>&1
echo "llama rc=$?" >> $S; grep -A4 "^model " $L/llama.txt >> $S; cp $L/llama.txt "$OUT/"
KILN_LOG_DIR=$L/gb timeout 230 scripts/bench_real_size.sh --models gpt2,bert --profile 20 --profile-top 8 > $L/gb.txt 2>&1
echo "gpt2,bert rc=$?" >> $S; grep -A6 "^model " $L/gb.txt >> $S; cp $L/gb.txt "$OUT/"
for p in fp32 fp16; do
timeout 45 python3 test/e2e/e2e_test.py --models-dir .devcarry/models --models llama_tiny_dynamo,gpt2_tiny_dynamo --kiln-compile .devcarry/kc.sh --kiln-run .carry-bench/bin/kiln-run --precision $p > $L/e2e-$p.txt 2>&1
echo "e2e $p rc=$?" >> $S; tail -8 $L/e2e-$p.txt >> $S
done
cd $L && tar czf "$OUT/run4-logs.tgz" . ; cat $S
