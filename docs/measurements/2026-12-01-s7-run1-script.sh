#!/usr/bin/env bash
# Session 7 device call: GPU tests of issue 11, kiln-run names/trace/json, fresh exports (issue 9),
# GPT-2 124M profile + trace + report.
set -u
R=$PWD; O=$OUT; B=$R/.carry-bench/bin; G=$R/.carry-gpu
T0=$(date +%s); el() { echo "[t=$(( $(date +%s) - T0 ))s] $*"; }
mkdir -p $TMPDIR/kl $TMPDIR/w
for f in .carry-bench/lib/*.xz; do xz -dc "$f" > $TMPDIR/kl/$(basename "$f" .xz) & done; wait
printf '#!/bin/sh\nLD_LIBRARY_PATH=$TMPDIR/kl exec %s/kiln-compile "$@"\n' "$B" > $TMPDIR/kc; chmod +x $TMPDIR/kc
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; date -u; git log --oneline -1 2>/dev/null; $TMPDIR/kc --version 2>&1 | head -3; } > $O/00-env.log 2>&1
# GPT-2 124M export in the background (CPU) while the GPU tests run.
( timeout 150 python3 examples/export/export_hf.py gpt2 --exporter legacy -o $TMPDIR/w/gpt2_124m.onnx \
    --config n_embd=768,n_layer=12,n_head=12,vocab_size=50257,n_positions=1024 > $TMPDIR/w/gpt2-export.log 2>&1 ) &
EXP=$!
el "gpu tests" > $O/01-gpu-tests.log
KILN_RUN=$B/kiln-run KILN_SOAK_RUNS=2000 KILN_TEST_MODELS=$G/art/gpt2_tiny_dynamo_1x128.kiln:$G/art/llama_tiny_dynamo_1x128.kiln \
  timeout 150 $G/kiln_runtime_gpu_tests >> $O/01-gpu-tests.log 2>&1; echo "rc=$?" >> $O/01-gpu-tests.log
el "kiln-run" > $O/02-kiln-run.log
{
  set -x
  $B/kiln-run $G/art/gpt2_tiny_dynamo_1x128.kiln --inputs-generate random:1 --bench 50 --profile 20 --trace $O/gpt2-tiny-trace.json
  $B/kiln-run $G/art/gpt2_tiny_dynamo_1x128_fp16.kiln --inputs-generate random:1 --profile 20
  $B/kiln-run $G/art/bert_tiny_legacy_1x128.kiln --inputs-generate random:3 --profile 20
  $B/kiln-run $G/art/llama_tiny_dynamo_1x128.kiln --input input_ids=random:7 --profile 20 --json > $O/llama-tiny-profile.json
  python3 -c "import json;t=json.load(open('$O/gpt2-tiny-trace.json'));print(len(t['traceEvents']),'events');print(json.load(open('$O/llama-tiny-profile.json'))['profile']['layers'][:4])"
  $B/kiln-run -q $G/art/gpt2_tiny_dynamo_1x128.kiln; echo "rc=$?"
  set +x
} >> $O/02-kiln-run.log 2>&1
el "fresh exports" > $O/03-fresh-exports.log
timeout 170 python3 test/e2e/fresh_exports.py --kiln-compile $TMPDIR/kc --kiln-run $B/kiln-run --work $TMPDIR/fx >> $O/03-fresh-exports.log 2>&1
echo "rc=$?" >> $O/03-fresh-exports.log
el "gpt2 124m" > $O/04-gpt2-124m.log
wait $EXP; cat $TMPDIR/w/gpt2-export.log >> $O/04-gpt2-124m.log
{
  set -x
  $TMPDIR/kc $TMPDIR/w/gpt2_124m.onnx --shape input_ids=1x128 --precision fp16 -o $TMPDIR/w/gpt2.kiln --report $O/gpt2-124m-report --progress=lines
  $B/kiln-run $TMPDIR/w/gpt2.kiln --inputs-generate random:1 --bench 100 --profile 50 --trace $O/gpt2-124m-trace.json
  set +x
} >> $O/04-gpt2-124m.log 2>&1
el "done" >> $O/04-gpt2-124m.log
