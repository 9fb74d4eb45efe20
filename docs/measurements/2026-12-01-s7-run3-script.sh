#!/usr/bin/env bash
# Session 7 device call 3: the final binaries - GPU tests, e2e on the shared models (fp32, fp16),
# the 0.8B Llama compile phases with the one-copy artifact writer, kiln-run's input range check.
set -u
R=$PWD; O=$OUT; B=$R/.carry-bench/bin; G=$R/.carry-gpu
T0=$(date +%s); el() { echo "[t=$(( $(date +%s) - T0 ))s] $*"; }
mkdir -p $TMPDIR/kl $TMPDIR/w
for f in .carry-bench/lib/*.xz; do xz -dc "$f" > $TMPDIR/kl/$(basename "$f" .xz) & done; wait
printf '#!/bin/sh\nLD_LIBRARY_PATH=$TMPDIR/kl exec %s/kiln-compile "$@"\n' "$B" > $TMPDIR/kc; chmod +x $TMPDIR/kc
( timeout 120 python3 examples/export/export_hf.py llama --exporter legacy --dtype float16 -o $TMPDIR/w/llama08.onnx \
    --config vocab_size=32000,hidden_size=2048,num_hidden_layers=16,num_attention_heads=32,num_key_value_heads=8,intermediate_size=5632,max_position_embeddings=2048 > $TMPDIR/w/export.log 2>&1 ) &
EXP=$!
{
  el "compile test models"
  $TMPDIR/kc $G/models/gpt2_tiny_dynamo.onnx --shape input_ids=1x128 -o $TMPDIR/w/gpt2.kiln --quiet
  $TMPDIR/kc $G/models/llama_tiny_dynamo.onnx --shape input_ids=1x128 -o $TMPDIR/w/llama.kiln --quiet
  el "gpu tests"
  KILN_RUN=$B/kiln-run KILN_SOAK_RUNS=2000 KILN_TEST_MODELS=$TMPDIR/w/gpt2.kiln:$TMPDIR/w/llama.kiln timeout 120 $G/kiln_runtime_gpu_tests 2>&1 | grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|tests ran|shared weights|soak .*runs"
  el "kiln-run range check"
  python3 -c "import numpy as np; np.save('$TMPDIR/w/bad.npy', np.full((1,128), 5000, dtype=np.int64))"
  $B/kiln-run $TMPDIR/w/gpt2.kiln --input input_ids=$TMPDIR/w/bad.npy --bench 5; echo "rc=$?"
  $B/kiln-run --version
} > $O/20-gpu-tests.log 2>&1
{
  el "e2e fp32"
  timeout 150 python3 test/e2e/e2e_test.py --models-dir $G/models --kiln-compile $TMPDIR/kc --kiln-run $B/kiln-run --work-dir $TMPDIR/e2e32 2>&1 | tail -n 25
  el "e2e fp16"
  timeout 150 python3 test/e2e/e2e_test.py --models-dir $G/models --kiln-compile $TMPDIR/kc --kiln-run $B/kiln-run --precision fp16 --work-dir $TMPDIR/e2e16 2>&1 | tail -n 25
} > $O/21-e2e.log 2>&1
{
  el "llama 0.8B"
  wait $EXP; tail -n 2 $TMPDIR/w/export.log
  timeout 90 $TMPDIR/kc $TMPDIR/w/llama08.onnx --shape input_ids=1x128 -o $TMPDIR/w/llama08.kiln --progress=lines
  timeout 40 $B/kiln-run $TMPDIR/w/llama08.kiln --inputs-generate random:1 --bench 100
  el done
} > $O/22-llama08.log 2>&1
