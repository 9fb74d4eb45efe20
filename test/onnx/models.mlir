// The shared exported models import at static shapes, and after
// kiln-fold-shape-subgraphs no shape computation is left: Shape, Range,
// CumSum and (outside BERT's attention_mask path) GatherND are gone, and the
// causal masks of GPT-2 and Llama are constants. What stays is the runtime
// graph (GEMMs, norms, pointwise, the SDPA NaN guard `is_nan(softmax)`).
// REQUIRES: models

// RUN: kiln-compile %models/gpt2_tiny_dynamo.onnx --shape input_ids=2x16 --emit=graph --print-constants \
// RUN:   | kiln-opt --kiln-fold-shape-subgraphs \
// RUN:   | FileCheck %s --check-prefix=GPT2 --implicit-check-not=kiln.shape \
// RUN:       --implicit-check-not=kiln.range --implicit-check-not=kiln.cumsum --implicit-check-not=kiln.gather_nd
// GPT2-LABEL: func.func @main(%{{.+}}: tensor<2x16xi64> {kiln.name = "input_ids"}) -> (tensor<2x16x128xf32> {kiln.name = "last_hidden_state"})
// GPT2: %[[MASK:.+]] = kiln.constant dense<"0x{{.*}}"> : tensor<2x1x16x16xf32>
// GPT2: kiln.add %{{.+}}, %[[MASK]] : tensor<2x4x16x16xf32>, tensor<2x1x16x16xf32> -> tensor<2x4x16x16xf32>
// GPT2-NEXT: %[[P:.+]] = kiln.softmax
// GPT2-NEXT: kiln.is_nan %[[P]]

// RUN: kiln-compile %models/llama_tiny_dynamo.onnx --shape input_ids=1x128 --emit=graph --print-constants \
// RUN:   | kiln-opt --kiln-fold-shape-subgraphs \
// RUN:   | FileCheck %s --check-prefix=LLAMA --implicit-check-not=kiln.shape \
// RUN:       --implicit-check-not=kiln.range --implicit-check-not=kiln.cumsum --implicit-check-not=kiln.gather_nd
// LLAMA-LABEL: func.func @main(%{{.+}}: tensor<1x128xi64> {kiln.name = "input_ids"})
// LLAMA: %[[MASK:.+]] = kiln.constant dense<"0x{{.*}}"> : tensor<1x1x128x128xf32>
// LLAMA: kiln.add %{{.+}}, %[[MASK]] : tensor<1x4x128x128xf32>, tensor<1x1x128x128xf32> -> tensor<1x4x128x128xf32>

// For BERT the attention_mask path stays a runtime computation on the input.
// RUN: kiln-compile %models/bert_tiny_dynamo.onnx --shape input_ids=2x16,attention_mask=2x16 --emit=graph --print-constants \
// RUN:   | kiln-opt --kiln-fold-shape-subgraphs \
// RUN:   | FileCheck %s --check-prefix=BERT --implicit-check-not=kiln.shape \
// RUN:       --implicit-check-not=kiln.range --implicit-check-not=kiln.cumsum
// BERT-LABEL: func.func @main(
// BERT-SAME: %[[MASK:[^:]+]]: tensor<2x16xi64> {kiln.name = "attention_mask"}
// BERT: kiln.cast %[[MASK]] : tensor<2x16xi64> -> tensor<2x16xi1>
// BERT: kiln.gather_nd
// BERT: kiln.where {{.*}} -> tensor<2x1x16x16xf32>

// RUN: kiln-compile %models/bert_tiny_legacy.onnx --shape input_ids=2x128,attention_mask=2x128 --emit=graph --print-constants \
// RUN:   | kiln-opt --kiln-fold-shape-subgraphs \
// RUN:   | FileCheck %s --check-prefix=LEGACY --implicit-check-not=kiln.shape \
// RUN:       --implicit-check-not=kiln.range --implicit-check-not=kiln.cumsum --implicit-check-not=kiln.gather_nd
// LEGACY-LABEL: func.func @main(
// LEGACY-SAME: tensor<2x128xi64> {kiln.name = "attention_mask"}
// LEGACY: kiln.where {{.*}} -> tensor<2x1x128x128xf32>
