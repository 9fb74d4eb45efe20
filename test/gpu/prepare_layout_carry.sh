#!/usr/bin/env bash
# prepare_layout_carry.sh - the step artifacts and references of kv_cache_decode_test's layout
# rules, compiled on the build machine for a GPU machine without kiln-compile's libraries
# (docs/measurements/2026-12-05-s33-run8.sh carries the directory):
#   OUT/MODEL-VARIANT.kiln   kiln-compile --kv-cache --max-seq-len 64 --kv-block-size BS
#                            --shape input_ids=BxS --precision P
#   OUT/MODEL.tokens.i64     the .ref.npz's 5 prompt and 8 decode tokens
#   OUT/MODEL.logits.f32     its full-forward logits over them
# for the Llama and GPT-2 cache-I/O exports of test/models (fp32 3x1 in blocks of 4, fp16 8x1 in
# blocks of 4; the Llama's fp16 3x1 in blocks of 4 and fp32 2x1 in one block of 64) and the
# opset-23 Llama (fp16 8x1). At 3 rows the RMS norm's sums of squares take the path where 3 does
# not divide the block's 256 threads.
#
#   test/gpu/prepare_layout_carry.sh [OUT] [KILN_COMPILE] [PYTHON]
#   (defaults: .carry-gpu/layout, build/bin/kiln-compile, .venv/bin/python)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:-$ROOT/.carry-gpu/layout}
KC=${2:-$ROOT/build/bin/kiln-compile}
PY=${3:-$ROOT/.venv/bin/python}
M=$ROOT/test/models
mkdir -p "$OUT"
rm -f "$OUT"/*.kiln "$OUT"/*.i64 "$OUT"/*.f32
while read -r model variant precision shape block; do
  "$KC" "$M/$model.onnx" --kv-cache --max-seq-len 64 --kv-block-size "$block" \
    --shape "input_ids=$shape" --precision "$precision" -o "$OUT/$model-$variant.kiln" --quiet
done <<'LIST'
llama_tiny_causal_past_dynamo fp32-b3 fp32 3x1 4
llama_tiny_causal_past_dynamo fp16-b3 fp16 3x1 4
llama_tiny_causal_past_dynamo fp16-b8 fp16 8x1 4
llama_tiny_causal_past_dynamo fp32-contig fp32 2x1 64
gpt2_tiny_causal_past_dynamo fp32-b3 fp32 3x1 4
gpt2_tiny_causal_past_dynamo fp16-b8 fp16 8x1 4
llama_tiny_causal_past_dynamo_opset23 fp16-b8 fp16 8x1 4
LIST
for model in llama_tiny_causal_past_dynamo gpt2_tiny_causal_past_dynamo \
  llama_tiny_causal_past_dynamo_opset23; do
  "$PY" - "$M/$model.ref.npz" "$OUT/$model" <<'PYEOF'
import sys
import numpy as np
r = np.load(sys.argv[1])
np.concatenate([r["input_ids"][0], r["decode_input_ids"][0]]).astype("<i8").tofile(sys.argv[2] + ".tokens.i64")
r["full_logits"][0].astype("<f4").tofile(sys.argv[2] + ".logits.f32")
PYEOF
done
echo "prepare_layout_carry: $(ls "$OUT"/*.kiln | wc -l) artifacts in $OUT ($(du -sh "$OUT" | cut -f1))"
