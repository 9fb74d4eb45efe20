#!/usr/bin/env bash
# generate_example_test.sh - examples/embed/generate.c on a GPU: the tiny Llama with cache I/O
# (test/models/llama_tiny_causal_past_dynamo.onnx) compiled as generation programs, its 5-token
# prompt, 9 greedy tokens; they must equal the greedy ids torch gave (the .ref.npz's greedy_ids),
# and --top-k 1 with a temperature must give them too. Exit 0 pass, 1 fail, 77 without a GPU.
#
#   generate_example_test.sh KILN_COMPILE GENERATE_EXAMPLE PYTHON
set -euo pipefail
KC=$1 GEN=$2 PY=$3
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
M=$ROOT/test/models/llama_tiny_causal_past_dynamo
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$KC" "$M.onnx" --kv-cache --max-seq-len 64 --shape input_ids=1..2x1..16 -o "$TMP/steps.kiln" --quiet
read -r -a prompt <<<"$("$PY" -c "import numpy as np; print(*np.load('$M.ref.npz')['input_ids'][0])")"
want=$("$PY" -c "import numpy as np; print(*np.load('$M.ref.npz')['greedy_ids'][0])")
set +e
got=$("$GEN" "$TMP/steps.kiln" --max-new-tokens 9 "${prompt[@]}" 2>"$TMP/err.txt")
rc=$?
set -e
if [[ $rc != 0 ]]; then
  if grep -q "\[UNAVAILABLE\]" "$TMP/err.txt"; then
    echo "SKIP: no GPU ($(cat "$TMP/err.txt"))"
    exit 77
  fi
  echo "FAIL: kiln-generate-example exit $rc: $(cat "$TMP/err.txt")"
  exit 1
fi
got=$(echo $got)
[[ "$got" == "$want" ]] || { echo "FAIL: greedy tokens '$got', torch's '$want'"; exit 1; }
top1=$(echo $("$GEN" "$TMP/steps.kiln" --max-new-tokens 9 --temperature 0.8 --top-k 1 --seed 3 \
  "${prompt[@]}" 2>/dev/null))
[[ "$top1" == "$want" ]] || { echo "FAIL: --top-k 1 tokens '$top1', greedy '$want'"; exit 1; }
echo "PASS: 9 greedy tokens equal torch's ($want); --top-k 1 gives them too; $(cat "$TMP/err.txt")"
