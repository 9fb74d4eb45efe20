#!/usr/bin/env bash
# test/e2e/export_variants.sh OUTDIR - export more real ONNX models than ../shared/models holds:
# the other exporter for each family, older opsets (opset 13/14 have no LayerNormalization op, so
# layer norm arrives decomposed), and wider configs (hidden 256, 8 heads, 512 positions, Llama
# with full multi-head attention). Needs python3 with torch, transformers and onnx (the GPU
# machine has them). Each export that fails is reported and skipped; the exit status is 0 if at
# least one model was written. Compile the results with test/e2e/e2e_test.py --compile-only
# --models-dir OUTDIR --models NAME,... and run them like the shared models.
set -uo pipefail
OUT="${1:?usage: export_variants.sh OUTDIR}"
PYTHON="${KILN_PYTHON:-python3}"
EXPORT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../examples/export" && pwd)/export_hf.py"
mkdir -p "$OUT"
written=0
export_one() {
  local name="$1"; shift
  if "$PYTHON" "$EXPORT" "$@" -o "$OUT/$name.onnx" >"$OUT/$name.export.log" 2>&1; then
    echo "exported $name ($*)"; written=$((written + 1))
  else
    echo "FAILED $name ($*): $(tail -1 "$OUT/$name.export.log")"; rm -f "$OUT/$name.onnx"
  fi
}
export_one gpt2_tiny_legacy gpt2 --exporter legacy
export_one llama_tiny_legacy llama --exporter legacy
export_one gpt2_tiny_legacy_op13 gpt2 --exporter legacy --opset 13
export_one bert_tiny_legacy_op14 bert --exporter legacy --opset 14
export_one bert_tiny_dynamo_op17 bert --opset 17
export_one gpt2_wide_dynamo gpt2 --config n_embd=256,n_head=8,n_positions=512 --seed 1
export_one llama_mha_dynamo llama --seed 2 \
  --config hidden_size=256,num_attention_heads=8,num_key_value_heads=8,intermediate_size=688,max_position_embeddings=512
echo "export_variants: $written models in $OUT"
[[ $written -gt 0 ]]
