#!/usr/bin/env bash
# Session 7 device call 2: compile-phase times of a 0.8B Llama (fp16 export), its profile with layer
# names, and the GPT-2 124M --report page (tarred: the device output takes few files).
set -u
R=$PWD; O=$OUT; B=$R/.carry-bench/bin
T0=$(date +%s); el() { echo "[t=$(( $(date +%s) - T0 ))s] $*"; }
mkdir -p $TMPDIR/kl $TMPDIR/w
for f in .carry-bench/lib/*.xz; do xz -dc "$f" > $TMPDIR/kl/$(basename "$f" .xz) & done; wait
printf '#!/bin/sh\nLD_LIBRARY_PATH=$TMPDIR/kl exec %s/kiln-compile "$@"\n' "$B" > $TMPDIR/kc; chmod +x $TMPDIR/kc
( set -x
  timeout 60 python3 examples/export/export_hf.py gpt2 --exporter legacy -o $TMPDIR/w/gpt2_124m.onnx \
    --config n_embd=768,n_layer=12,n_head=12,vocab_size=50257,n_positions=1024
  timeout 60 $TMPDIR/kc $TMPDIR/w/gpt2_124m.onnx --shape input_ids=1x128 --precision fp16 -o $TMPDIR/w/gpt2.kiln --report $TMPDIR/w/gpt2-124m-report --quiet
  tar -C $TMPDIR/w -czf $O/gpt2-124m-report.tgz gpt2-124m-report ) > $O/10-gpt2-report.log 2>&1 &
{
  el "llama 0.8B fp16 export"
  set -x
  timeout 170 python3 examples/export/export_hf.py llama --exporter legacy --dtype float16 -o $TMPDIR/w/llama08.onnx \
    --config vocab_size=32000,hidden_size=2048,num_hidden_layers=16,num_attention_heads=32,num_key_value_heads=8,intermediate_size=5632,max_position_embeddings=2048 2>&1 | grep -v Warning
  ls -la $TMPDIR/w
  timeout 90 $TMPDIR/kc $TMPDIR/w/llama08.onnx --shape input_ids=1x128 -o $TMPDIR/w/llama08.kiln --progress=lines
  timeout 40 $B/kiln-run $TMPDIR/w/llama08.kiln --inputs-generate random:1 --bench 100 --profile 30 --trace $O/llama-0.8b-trace.json
  set +x
  el done
} > $O/11-llama08.log 2>&1
wait
