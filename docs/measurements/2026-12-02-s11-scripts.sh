# Session 11 (2026-12-02): the commands of each call of the H200 machine (NVIDIA H200, CUDA 13.0,
# driver 580), run from the repository root. Carried: .carry-bench (KILN_SKIP_BUILD=1
# scripts/prepare_bench_carry.sh; bin/kiln-run replaced by the build's, bin/kiln-compile left out
# and carried xz-compressed in .devcarry/ to stay under the 64 MiB a call may carry) and a
# git-ignored folder .devcarry/ with these scripts, the xz-compressed GPU tests
# (test/gpu/build_*_test.sh), the previous kiln-compile (run 1's "old"), the tiny dynamo exports
# and kc.sh (a kiln-compile wrapper that sets LD_LIBRARY_PATH to the libraries
# bench_real_size.sh unpacks). Logs beside this file (2026-12-02-s11-run<N>-*).

# ---- run 1: .devcarry/run1.sh
# s11 run 1: unmeasured session-10 changes (onePlusErf, reciprocal, row-invariant mask) + GEMM mode fp16/bf16 (8192^3 row)
L=/tmp/logs; mkdir -p $L "$OUT"; S="$OUT/summary.txt"; date -u > $S
xz -dc .devcarry/kiln-compile-new.xz > .carry-bench/bin/kiln-compile; chmod +x .carry-bench/bin/kiln-compile
timeout 60 .devcarry/math_test > $L/math_test.txt 2>&1; echo "math_test rc=$?" >> $S; tail -5 $L/math_test.txt >> $S
xz -d -k .devcarry/attention_test.xz; timeout 90 .devcarry/attention_test > $L/attention_test.txt 2>&1; echo "attention_test rc=$?" >> $S; tail -5 $L/attention_test.txt >> $S
KILN_LOG_DIR=$L/bert timeout 150 scripts/bench_real_size.sh --models bert --peers compile_ro > $L/bert.txt 2>&1
echo "bert rc=$?" >> $S; grep -A4 "^model " $L/bert.txt >> $S
xz -d -k .devcarry/old/kiln-compile.xz; LIB=$(ls -d /tmp/kiln-bench-lib-* | head -1)
B=$(find .bench-work -name bert.onnx | head -1)
for v in old new; do
  K=.carry-bench/bin/kiln-compile; [ $v = old ] && K=.devcarry/old/kiln-compile
  LD_LIBRARY_PATH=$LIB timeout 60 $K $B --precision fp16 --shape input_ids=8x512,attention_mask=8x512 -o /tmp/b8-$v.kiln >> $L/compile.txt 2>&1 || echo "compile $v failed" >> $S
  LD_LIBRARY_PATH=$LIB timeout 60 $K $B --precision fp16 --shape input_ids=1x128,attention_mask=1x128 -o /tmp/b1-$v.kiln >> $L/compile.txt 2>&1 || echo "compile $v 1x128 failed" >> $S
done
timeout 120 python3 test/bench/ab_kiln_run.py --kiln-run .carry-bench/bin/kiln-run --rounds 3 --iters 200 b8old=/tmp/b8-old.kiln b8new=/tmp/b8-new.kiln b1old=/tmp/b1-old.kiln b1new=/tmp/b1-new.kiln > $L/ab.txt 2>&1
echo "ab rc=$?" >> $S; tail -12 $L/ab.txt >> $S
.carry-bench/bin/kiln-run /tmp/b8-new.kiln --profile 10 > $L/b8-new-profile.txt 2>&1
for p in fp32 fp16; do
timeout 45 python3 test/e2e/e2e_test.py --models-dir .devcarry/models --models llama_tiny_dynamo,gpt2_tiny_dynamo --kiln-compile .devcarry/kc.sh --kiln-run .carry-bench/bin/kiln-run --precision $p > $L/e2e-$p.txt 2>&1
echo "e2e $p rc=$?" >> $S; tail -3 $L/e2e-$p.txt >> $S
done
KILN_LOG_DIR=$L/gemm16 timeout 150 scripts/bench_real_size.sh --gemm > $L/gemm16.txt 2>&1
echo "gemm fp16 rc=$?" >> $S; grep "geometric\|8192" $L/gemm16.txt >> $S; cp $L/gemm16/*.md "$OUT/" 2>/dev/null
KILN_LOG_DIR=$L/gemmbf timeout 150 scripts/bench_real_size.sh --gemm --precision bf16 > $L/gemmbf.txt 2>&1
echo "gemm bf16 rc=$?" >> $S; grep "geometric\|8192" $L/gemmbf.txt >> $S; cp $L/gemmbf/*.md "$OUT/" 2>/dev/null
cd $L && tar czf "$OUT/run1-logs.tgz" . ; cat $S

# ---- run 2: .devcarry/run2.sh
# s11 run 2: norm folded into the Hopper GEMM (row statistics): GPU tests, e2e, GPT-2 + Llama A/B and whole models
L=/tmp/logs; mkdir -p $L "$OUT"; S="$OUT/summary.txt"; date -u > $S
xz -dc .devcarry/kiln-compile-new.xz > .carry-bench/bin/kiln-compile; chmod +x .carry-bench/bin/kiln-compile
xz -d -k -f .devcarry/gemm_sm90_test.xz .devcarry/attention_test.xz
timeout 120 .devcarry/gemm_sm90_test > $L/gemm_sm90_test.txt 2>&1; echo "gemm_sm90_test rc=$?" >> $S; grep -i "fail\|summary\|passed\|failed" $L/gemm_sm90_test.txt | tail -12 >> $S
timeout 90 .devcarry/attention_test > $L/attention_test.txt 2>&1; echo "attention_test rc=$?" >> $S; tail -2 $L/attention_test.txt >> $S
for p in fp16 fp32 bf16; do
timeout 60 python3 test/e2e/e2e_test.py --models-dir .devcarry/models --models llama_tiny_dynamo,gpt2_tiny_dynamo --kiln-compile .devcarry/kc.sh --kiln-run .carry-bench/bin/kiln-run --precision $p > $L/e2e-$p.txt 2>&1
echo "e2e $p rc=$?" >> $S; tail -2 $L/e2e-$p.txt >> $S
done
KILN_LOG_DIR=$L/gpt2 timeout 150 scripts/bench_real_size.sh --models gpt2 --peers compile_ro --profile 10 --profile-top 10 > $L/gpt2.txt 2>&1
echo "gpt2 rc=$?" >> $S; grep -A3 "^model " $L/gpt2.txt >> $S; cp $L/gpt2.txt "$OUT/"
LIB=$(ls -d /tmp/kiln-bench-lib-* | head -1)
KC() { LD_LIBRARY_PATH=$LIB timeout 120 .carry-bench/bin/kiln-compile "$@" --precision fp16 >> $L/compile.txt 2>&1 || echo "compile failed: $*" >> $S; }
G=$(find .bench-work -name gpt2.onnx | head -1)
for v in fused kernel; do KC $G --shape input_ids=1x128 -o /tmp/g1-$v.kiln --norm-into-gemm=$v; KC $G --shape input_ids=8x512 -o /tmp/g8-$v.kiln --norm-into-gemm=$v; done
timeout 100 python3 test/bench/ab_kiln_run.py --kiln-run .carry-bench/bin/kiln-run --rounds 3 --iters 200 g1kernel=/tmp/g1-kernel.kiln g1fused=/tmp/g1-fused.kiln g8kernel=/tmp/g8-kernel.kiln g8fused=/tmp/g8-fused.kiln > $L/ab-gpt2.txt 2>&1
echo "ab gpt2 rc=$?" >> $S; tail -5 $L/ab-gpt2.txt >> $S
.carry-bench/bin/kiln-run /tmp/g8-fused.kiln --profile 10 > $L/g8-fused-profile.txt 2>&1
.carry-bench/bin/kiln-run /tmp/g8-kernel.kiln --profile 10 > $L/g8-kernel-profile.txt 2>&1
KILN_LOG_DIR=$L/llama timeout 230 scripts/bench_real_size.sh --models llama --peers compile_ro > $L/llama.txt 2>&1
echo "llama rc=$?" >> $S; grep -A3 "^model " $L/llama.txt >> $S; cp $L/llama.txt "$OUT/"
LL=$(find .bench-work -name llama.onnx | head -1)
for v in fused kernel; do KC $LL --shape input_ids=1x128 -o /tmp/l1-$v.kiln --norm-into-gemm=$v; KC $LL --shape input_ids=4x512 -o /tmp/l4-$v.kiln --norm-into-gemm=$v; done
timeout 100 python3 test/bench/ab_kiln_run.py --kiln-run .carry-bench/bin/kiln-run --rounds 3 --iters 100 l1kernel=/tmp/l1-kernel.kiln l1fused=/tmp/l1-fused.kiln l4kernel=/tmp/l4-kernel.kiln l4fused=/tmp/l4-fused.kiln > $L/ab-llama.txt 2>&1
echo "ab llama rc=$?" >> $S; tail -5 $L/ab-llama.txt >> $S
cd $L && tar czf "$OUT/run2-logs.tgz" . ; cat $S

# ---- run 3: .devcarry/run3.sh
# s11 run 3: row statistics in two producer warps (not in the consumers' main loop): GPU test, A/B, whole models, e2e
L=/tmp/logs; mkdir -p $L "$OUT"; S="$OUT/summary.txt"; date -u > $S
xz -dc .devcarry/kiln-compile-new.xz > .carry-bench/bin/kiln-compile; chmod +x .carry-bench/bin/kiln-compile
xz -d -k -f .devcarry/gemm_sm90_test.xz
timeout 120 .devcarry/gemm_sm90_test > $L/gemm_sm90_test.txt 2>&1; echo "gemm_sm90_test rc=$?" >> $S; grep -i "FAIL\|passed" $L/gemm_sm90_test.txt | tail -8 >> $S
KILN_LOG_DIR=$L/gpt2 timeout 150 scripts/bench_real_size.sh --models gpt2 --peers compile_ro --profile 10 --profile-top 8 > $L/gpt2.txt 2>&1
echo "gpt2 rc=$?" >> $S; grep -A3 "^model " $L/gpt2.txt >> $S; cp $L/gpt2.txt "$OUT/"
LIB=$(ls -d /tmp/kiln-bench-lib-* | head -1)
KC() { LD_LIBRARY_PATH=$LIB timeout 120 .carry-bench/bin/kiln-compile "$@" --precision fp16 >> $L/compile.txt 2>&1 || echo "compile failed: $*" >> $S; }
G=$(find .bench-work -name gpt2.onnx | head -1)
for v in fused kernel; do KC $G --shape input_ids=1x128 -o /tmp/g1-$v.kiln --norm-into-gemm=$v; KC $G --shape input_ids=8x512 -o /tmp/g8-$v.kiln --norm-into-gemm=$v; done
timeout 100 python3 test/bench/ab_kiln_run.py --kiln-run .carry-bench/bin/kiln-run --rounds 3 --iters 200 g1kernel=/tmp/g1-kernel.kiln g1fused=/tmp/g1-fused.kiln g8kernel=/tmp/g8-kernel.kiln g8fused=/tmp/g8-fused.kiln > $L/ab-gpt2.txt 2>&1
echo "ab gpt2 rc=$?" >> $S; tail -5 $L/ab-gpt2.txt >> $S
timeout 20 .carry-bench/bin/kiln-run /tmp/g8-kernel.kiln --inputs-generate random --profile 10 > $L/g8-kernel-profile.txt 2>&1
for p in fp16 fp32; do
timeout 50 python3 test/e2e/e2e_test.py --models-dir .devcarry/models --models llama_tiny_dynamo,gpt2_tiny_dynamo --kiln-compile .devcarry/kc.sh --kiln-run .carry-bench/bin/kiln-run --precision $p > $L/e2e-$p.txt 2>&1
echo "e2e $p rc=$?" >> $S; tail -2 $L/e2e-$p.txt >> $S
done
KILN_LOG_DIR=$L/llama timeout 170 scripts/bench_real_size.sh --models llama --peers eager --profile 10 --profile-top 8 > $L/llama.txt 2>&1
echo "llama rc=$?" >> $S; grep -A3 "^model " $L/llama.txt >> $S; cp $L/llama.txt "$OUT/"
LL=$(find .bench-work -name llama.onnx | head -1)
for v in fused kernel; do KC $LL --shape input_ids=4x512 -o /tmp/l4-$v.kiln --norm-into-gemm=$v; done
timeout 60 python3 test/bench/ab_kiln_run.py --kiln-run .carry-bench/bin/kiln-run --rounds 3 --iters 100 l4kernel=/tmp/l4-kernel.kiln l4fused=/tmp/l4-fused.kiln > $L/ab-llama.txt 2>&1
echo "ab llama rc=$?" >> $S; tail -3 $L/ab-llama.txt >> $S
cd $L && tar czf "$OUT/run3-logs.tgz" . ; cat $S

