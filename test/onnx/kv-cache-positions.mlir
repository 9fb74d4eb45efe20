// kiln-compile --kv-cache on a plain causal-LM export (no cache I/O, no position_ids input;
// docs/generation.md, form b): the importer turns the position lookups of the positions
// Range(0, S) into reads of a new argument position_ids [B, S] (OnnxPositions.cpp); the causal
// mask keeps the constant positions, so it still folds and becomes `causal` on kiln.attention.
// Models: test/onnx/Inputs/plain_decoder*.onnx and error_positions_*.onnx (gen_onnx_tests.py's
// plain_decoders), the plain exports of test/models.

// The tiny decoder: Gather(wpe, Unsqueeze(Range(0, S), 0)) reads position_ids itself ([2, 3]
// is the lookup's shape: no reshape); the mask LessOrEqual(Unsqueeze(arange, 0),
// Unsqueeze(arange, 1)) stays the constant causal triangle.
// RUN: kiln-compile %S/Inputs/plain_decoder.onnx --kv-cache --max-seq-len 16 --shape input_ids=2x3 --emit=graph --print-constants | FileCheck %s --check-prefix=TINY
// TINY: func.func @main(%[[IDS:[^:]+]]: tensor<2x3xi64> {kiln.name = "input_ids"}, %[[POS:[^:]+]]: tensor<2x3xi64> {kiln.name = "position_ids"}) -> (tensor<2x3x11xf32> {kiln.name = "logits"})
// TINY: %[[WPE:.+]] = kiln.constant dense<{{.+}}> : tensor<16x32xf32>
// TINY-NEXT: kiln.gather %[[WPE]], %[[POS]] {axis = 0 : i64} : tensor<16x32xf32>, tensor<2x3xi64> -> tensor<2x3x32xf32>
// TINY: %[[MASK:.+]] = kiln.constant dense<{{\[}}[0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<3x3xf32>
// TINY-NEXT: kiln.add %{{.+}}, %[[MASK]] : tensor<2x2x3x3xf32>, tensor<3x3xf32> -> tensor<2x2x3x3xf32>

// Without --kv-cache nothing changes: the positions are the constant 0..S-1.
// RUN: kiln-compile %S/Inputs/plain_decoder.onnx --shape input_ids=2x3 --emit=graph --print-constants | FileCheck %s --check-prefix=NO-KV --implicit-check-not=position_ids
// NO-KV-LABEL: func.func @main(%{{[^:]+}}: tensor<2x3xi64> {kiln.name = "input_ids"}) -> (tensor<2x3x11xf32> {kiln.name = "logits"})
// NO-KV: %[[WPE:.+]] = kiln.constant dense<{{.+}}> : tensor<1x3x32xf32>
// NO-KV-NEXT: kiln.add %{{.+}}, %[[WPE]] : tensor<2x3x32xf32>, tensor<1x3x32xf32> -> tensor<2x3x32xf32>

// Llama (rotary): the rotary frequencies read position_ids reshaped to the lookup's [B, 1, S]
// and cast to float, exactly as the export with position_ids does (LLAMA-A, form a: there the
// inverse frequencies are expanded over the batch, [2, 16, 1]; here [1, 16, 1] broadcasts).
// RUN: kiln-compile %kiln_src_root/test/models/llama_tiny_causal_dynamo.onnx --kv-cache --max-seq-len 64 --shape input_ids=2x3 --emit=graph | FileCheck %s --check-prefixes=LLAMA,LLAMA-B
// RUN: kiln-compile %kiln_src_root/test/models/llama_tiny_causal_past_dynamo.onnx --kv-cache --max-seq-len 64 --shape input_ids=2x3 --emit=graph | FileCheck %s --check-prefixes=LLAMA,LLAMA-A
// LLAMA-B: func.func @main(%arg0: tensor<2x3xi64> {kiln.name = "input_ids"}, %[[POS:arg1]]: tensor<2x3xi64> {kiln.name = "position_ids"}) -> (tensor<2x3x1000xf32> {kiln.name = "logits"})
// LLAMA-A: func.func @main(%arg0: tensor<2x3xi64> {kiln.name = "input_ids"}, %arg1: tensor<2x3xi64> {kiln.name = "attention_mask"}, %[[POS:arg2]]: tensor<2x3xi64> {kiln.name = "position_ids"}
// LLAMA: %[[R:.+]] = kiln.reshape %[[POS]] : tensor<2x3xi64> -> tensor<2x1x3xi64>
// LLAMA-NEXT: %[[F:.+]] = kiln.cast %[[R]] : tensor<2x1x3xi64> -> tensor<2x1x3xf32>
// LLAMA-B: kiln.matmul %{{.+}}, %[[F]] : tensor<1x16x1xf32>, tensor<2x1x3xf32> -> tensor<2x16x3xf32>
// LLAMA-A: kiln.matmul %{{.+}}, %[[F]] : tensor<2x16x1xf32>, tensor<2x1x3xf32> -> tensor<2x16x3xf32>

// The mask of the plain export is already constant at import; after the first passes both
// layers' attentions are causal with no mask operand, so kiln-paged-kv-cache can raise them.
// RUN: kiln-compile %kiln_src_root/test/models/llama_tiny_causal_dynamo.onnx --kv-cache --max-seq-len 64 --shape input_ids=2x3 --emit=graph --print-constants | FileCheck %s --check-prefix=LLAMA-MASK
// LLAMA-MASK: kiln.constant dense<{{\[\[\[\[}}0.000000e+00, -3.40282347E+38, -3.40282347E+38], [0.000000e+00, 0.000000e+00, -3.40282347E+38], [0.000000e+00, 0.000000e+00, 0.000000e+00]]], {{\[\[\[}}0.000000e+00, -3.40282347E+38, -3.40282347E+38], [0.000000e+00, 0.000000e+00, -3.40282347E+38], [0.000000e+00, 0.000000e+00, 0.000000e+00]]]]> : tensor<2x1x3x3xf32>
// RUN: kiln-compile %kiln_src_root/test/models/llama_tiny_causal_dynamo.onnx --kv-cache --max-seq-len 64 --shape input_ids=2x3 --emit=graph --print-constants | kiln-opt --kiln-bind-generation-inputs --kiln-fold-shape-subgraphs --cse --kiln-raise-attention | FileCheck %s --check-prefix=CAUSAL
// RUN: kiln-compile %kiln_src_root/test/models/gpt2_tiny_causal_dynamo.onnx --kv-cache --max-seq-len 64 --shape input_ids=2x3 --emit=graph --print-constants | kiln-opt --kiln-bind-generation-inputs --kiln-fold-shape-subgraphs --cse --kiln-raise-attention | FileCheck %s --check-prefix=CAUSAL
// CAUSAL-COUNT-2: kiln.attention %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {bshd_output = true, causal = true, {{.*}}} : tensor<2x{{[0-9]+}}x3x32xf32>, tensor<2x{{[0-9]+}}x3x32xf32>, tensor<2x{{[0-9]+}}x3x32xf32> -> tensor<2x3x4x32xf32>
// CAUSAL-NOT: kiln.attention

// GPT-2 (learned positions): the position table is gathered at position_ids, as in the export
// with position_ids.
// RUN: kiln-compile %kiln_src_root/test/models/gpt2_tiny_causal_dynamo.onnx --kv-cache --max-seq-len 64 --shape input_ids=2x3 --emit=graph | FileCheck %s --check-prefixes=GPT2,GPT2-B
// RUN: kiln-compile %kiln_src_root/test/models/gpt2_tiny_causal_past_dynamo.onnx --kv-cache --max-seq-len 64 --shape input_ids=2x3 --emit=graph | FileCheck %s --check-prefixes=GPT2,GPT2-A
// GPT2-B: func.func @main(%arg0: tensor<2x3xi64> {kiln.name = "input_ids"}, %[[POS:arg1]]: tensor<2x3xi64> {kiln.name = "position_ids"}) -> (tensor<2x3x1000xf32> {kiln.name = "logits"})
// GPT2-A: func.func @main(%arg0: tensor<2x3xi64> {kiln.name = "input_ids"}, %arg1: tensor<2x3xi64> {kiln.name = "attention_mask"}, %[[POS:arg2]]: tensor<2x3xi64> {kiln.name = "position_ids"}
// GPT2: kiln.gather %{{.+}}, %[[POS]] {axis = 0 : i64} : tensor<128x128xf32>, tensor<2x3xi64> -> tensor<2x3x128xf32>

// One token per step (decode): the same rewrite at S = 1.
// RUN: kiln-compile %kiln_src_root/test/models/llama_tiny_causal_dynamo.onnx --kv-cache --max-seq-len 64 --shape input_ids=3x1 --emit=graph | FileCheck %s --check-prefix=DECODE
// DECODE-LABEL: func.func @main(%arg0: tensor<3x1xi64> {kiln.name = "input_ids"}, %arg1: tensor<3x1xi64> {kiln.name = "position_ids"})
// DECODE: kiln.reshape %arg1 : tensor<3x1xi64> -> tensor<3x1x1xi64>

// GPT2Model (examples/models): its positions also feed Hugging Face's packed-sequence check
// (Expand, Slice, Sub, Concat, GatherND into a CumSum, Equal): integer ops ending in a
// comparison, which keep the constant; only the position table reads position_ids.
// RUN: kiln-compile %kiln_src_root/examples/models/gpt2_tiny.onnx --kv-cache --max-seq-len 64 --shape input_ids=2x3 --emit=graph --print-constants | kiln-opt --kiln-bind-generation-inputs --kiln-fold-shape-subgraphs --cse --kiln-raise-attention | FileCheck %s --check-prefix=PACKED
// PACKED-LABEL: func.func @main(%arg0: tensor<2x3xi64> {kiln.name = "input_ids"}, %arg1: tensor<2x3xi64> {kiln.name = "position_ids"}) -> (tensor<2x3x128xf32> {kiln.name = "last_hidden_state"})
// PACKED: kiln.gather %{{.+}}, %arg1 {axis = 0 : i64} : tensor<128x128xf32>, tensor<2x3xi64> -> tensor<2x3x128xf32>
// PACKED-COUNT-2: kiln.attention {{.*}}causal = true

// Errors: positions a lookup reads through another op, in another shape or along another axis of
// its table, and a float value computed from the positions that is neither a lookup nor part of
// the mask.
// RUN: not kiln-compile %S/Inputs/error_positions_through_add.onnx --kv-cache --max-seq-len 16 --shape input_ids=2x3 --emit=graph 2>&1 | FileCheck %s --check-prefix=ADD
// ADD: error: node 'position_embed' (Gather, opset 18): unsupported: reads the token positions of node 'arange' (Range) through node 'shift' (Add); with --kv-cache kiln turns the positions of a plain export into the position_ids input only where a position lookup reads them through Unsqueeze, Squeeze, Reshape, Flatten, Expand, Identity or an integer Cast. Export the model with a position_ids input instead (e.g. examples/export/export_hf.py --task causal-lm --with-past)
// RUN: not kiln-compile %S/Inputs/error_positions_no_batch_dim.onnx --kv-cache --max-seq-len 16 --shape input_ids=2x3 --emit=graph 2>&1 | FileCheck %s --check-prefix=RANK1
// RANK1: error: node 'position_embed' (Gather, opset 18): unsupported: reads the token positions of node 'arange' (Range) as 'tensor<3xi64>'; with --kv-cache kiln replaces them by the position_ids input [2, 3], which needs them shaped [1, ...] or [2, ...] with the positions 0..2 in order after that batch dim (Hugging Face's position_ids = cache_position.unsqueeze(0)). Export the model with a position_ids input instead (e.g. examples/export/export_hf.py --task causal-lm --with-past)
// RUN: not kiln-compile %S/Inputs/error_positions_gather_axis.onnx --kv-cache --max-seq-len 16 --shape input_ids=2x3 --emit=graph 2>&1 | FileCheck %s --check-prefix=AXIS
// AXIS: error: node 'position_embed' (Gather, opset 18): unsupported: looks the token positions of node 'arange' (Range) up along axis 1 of its table; with --kv-cache kiln replaces them by the position_ids input [2, 3], whose batch dim leads the result only in a lookup along axis 0. Export the model with a position_ids input instead (e.g. examples/export/export_hf.py --task causal-lm --with-past)
// RUN: not kiln-compile %S/Inputs/error_positions_other_use.onnx --kv-cache --max-seq-len 16 --shape input_ids=2x3 --emit=graph 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: error: node 'position_gather_nd' (GatherND, opset 18): unsupported: computes a float value from the token positions of node 'arange' (Range), whose position lookups now read the position_ids input (--kv-cache on a plain export), but it is neither a position lookup (a Gather from a constant float table, a Cast to float) nor part of the attention mask (integer ops ending in a comparison), so kiln cannot tell whether it needs the step's positions or the constant 0..2. Export the model with a position_ids input instead (e.g. examples/export/export_hf.py --task causal-lm --with-past)
// The same models import without --kv-cache: the errors are the rewrite's alone.
// RUN: kiln-compile %S/Inputs/error_positions_through_add.onnx --shape input_ids=2x3 --emit=graph -o /dev/null
// RUN: kiln-compile %S/Inputs/error_positions_no_batch_dim.onnx --shape input_ids=2x3 --emit=graph -o /dev/null
// RUN: kiln-compile %S/Inputs/error_positions_gather_axis.onnx --shape input_ids=2x3 --emit=graph -o /dev/null
// RUN: kiln-compile %S/Inputs/error_positions_other_use.onnx --shape input_ids=2x3 --emit=graph -o /dev/null
