// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-bind-generation-inputs --kiln-eliminate-empty-tensors --kiln-paged-kv-cache="max-seq-len=40 block-size=16" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-bind-generation-inputs --kiln-eliminate-empty-tensors --kiln-paged-kv-cache="max-seq-len=40 block-size=16 num-blocks=7" | FileCheck %s --check-prefix=BLOCKS

// A Hugging Face export with cache I/O at an empty past (B = 2, S = 3, two KV
// heads of D = 8, four query heads): attention_mask becomes ones, present.*
// outputs and the empty past inputs go, the causal attention appends to and
// reads from the paged cache; MB = ceil(40 / 16) = 3 blocks per sequence and
// the default pool holds B * MB = 6 blocks.
// CHECK-LABEL: func.func @step
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<2x3xi64> {kiln.name = "input_ids"}
// CHECK-SAME: %[[POS:[^:]*]]: tensor<2x3xi64> {kiln.name = "position_ids", kiln.role = #kiln.input_role<position_ids>}
// CHECK-SAME: %[[Q:[^:]*]]: tensor<2x4x3x8xf16> {kiln.name = "q"}
// CHECK-SAME: %[[K:[^:]*]]: tensor<2x2x3x8xf16> {kiln.name = "k"}
// CHECK-SAME: %[[V:[^:]*]]: tensor<2x2x3x8xf16> {kiln.name = "v"}
// CHECK-SAME: %[[TABLE:[^:]*]]: tensor<2x3xi32> {kiln.name = "kv_cache.block_table", kiln.role = #kiln.input_role<block_table>}
// CHECK-SAME: %[[LENS:[^:]*]]: tensor<2xi32> {kiln.name = "kv_cache.seq_lens", kiln.role = #kiln.input_role<seq_lens>}
// CHECK-SAME: %[[KC:[^:]*]]: tensor<6x2x16x8xf16> {kiln.name = "kv_cache.0.key", kiln.role = #kiln.input_role<key_cache>}
// CHECK-SAME: %[[VC:[^:]*]]: tensor<6x2x16x8xf16> {kiln.name = "kv_cache.0.value", kiln.role = #kiln.input_role<value_cache>}
// CHECK-SAME: -> (tensor<2x3x4x8xf16> {kiln.name = "logits"})
// CHECK-NOT: past_key_values
// CHECK-NOT: attention_mask
// CHECK: %[[KC1:[^,]*]], %[[VC1:[^ ]*]] = kiln.kv_cache_append %[[K]], %[[V]], %[[KC]], %[[VC]], %[[TABLE]], %[[LENS]]
// CHECK: %[[O:.*]] = kiln.paged_attention %[[Q]], %[[KC1]], %[[VC1]], %[[TABLE]], %[[LENS]] {bshd_output = true, scale = 0.35355339059327373 : f64}
// CHECK: return %[[O]]
// BLOCKS-LABEL: func.func @step
// BLOCKS: tensor<7x2x16x8xf16> {kiln.name = "kv_cache.0.key"
func.func @step(%ids: tensor<2x3xi64> {kiln.name = "input_ids"},
                %mask: tensor<2x3xi64> {kiln.name = "attention_mask"},
                %pos: tensor<2x3xi64> {kiln.name = "position_ids"},
                %pk: tensor<2x2x0x8xf16> {kiln.name = "past_key_values.0.key"},
                %pv: tensor<2x2x0x8xf16> {kiln.name = "past_key_values.0.value"},
                %q: tensor<2x4x3x8xf16> {kiln.name = "q"},
                %k: tensor<2x2x3x8xf16> {kiln.name = "k"},
                %v: tensor<2x2x3x8xf16> {kiln.name = "v"})
    -> (tensor<2x3x4x8xf16> {kiln.name = "logits"}, tensor<2x2x3x8xf16> {kiln.name = "present.0.key"},
        tensor<2x2x3x8xf16> {kiln.name = "present.0.value"}) {
  %kk = kiln.concat %pk, %k {axis = 2 : i64} : tensor<2x2x0x8xf16>, tensor<2x2x3x8xf16> -> tensor<2x2x3x8xf16>
  %vv = kiln.concat %pv, %v {axis = 2 : i64} : tensor<2x2x0x8xf16>, tensor<2x2x3x8xf16> -> tensor<2x2x3x8xf16>
  %o = kiln.attention %q, %kk, %vv {scale = 0.35355339059327373 : f64, causal = true, zero_masked_rows = true, bshd_output = true} : tensor<2x4x3x8xf16>, tensor<2x2x3x8xf16>, tensor<2x2x3x8xf16> -> tensor<2x3x4x8xf16>
  return %o, %kk, %vv : tensor<2x3x4x8xf16>, tensor<2x2x3x8xf16>, tensor<2x2x3x8xf16>
}

// -----

// An attention with a mask (an encoder, or padding kiln could not fold) has
// no KV cache form.
func.func @masked(%pos: tensor<1x4xi64> {kiln.name = "position_ids"}, %q: tensor<1x2x4x8xf32>,
                  %m: tensor<1x1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{kv-cache: attention [1, 2, 4, 8] x [1, 2, 4, 8] is not causal self-attention over the step's tokens (it has a mask kiln could not fold into causal); only a decoder's causal attention can use a KV cache}}
  %o = kiln.attention %q, %q, %q, %m {scale = 1.0 : f64, causal = false, zero_masked_rows = false, bshd_output = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Bidirectional attention (BERT) cannot be cached either.
func.func @bidirectional(%pos: tensor<1x4xi64> {kiln.name = "position_ids"}, %q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{kv-cache: attention [1, 2, 4, 8] x [1, 2, 4, 8] is not causal self-attention over the step's tokens; only a decoder's causal attention can use a KV cache}}
  %o = kiln.attention %q, %q, %q {scale = 1.0 : f64, causal = false, zero_masked_rows = false, bshd_output = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A model whose positions are computed inside the graph (folded to constants at a
// static shape) and that the importer gave no position_ids input: every step would
// restart at position 0.
// expected-error @+1 {{kv-cache: the model has no 'position_ids' input, so its token positions are computed inside the graph and would restart at 0 in every step (kiln-compile --kv-cache makes that input from a plain export's positions only where they come from a Range(0, S) that a position lookup reads: docs/generation.md, form b); export it with position_ids (e.g. examples/export/export_hf.py --task causal-lm --with-past)}}
func.func @no_positions(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = kiln.attention %q, %q, %q {scale = 1.0 : f64, causal = true, zero_masked_rows = false, bshd_output = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// expected-error @+1 {{kv-cache: the model has no attention kiln could recognize, so there is nothing to cache (is it a decoder? see docs/generation.md)}}
func.func @no_attention(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// An attention mask that covers a past (the past was not compiled empty).
// expected-error @+1 {{kv-cache: input 'attention_mask' 'tensor<1x9xi64>' must be a static integer or bool [batch, seq] = [1, 4] with an empty past; the runtime masks by sequence length}}
func.func @long_mask(%ids: tensor<1x4xi64> {kiln.name = "input_ids"}, %m: tensor<1x9xi64> {kiln.name = "attention_mask"}) -> tensor<1x4xi64> {
  return %ids : tensor<1x4xi64>
}

// -----

// expected-error @+1 {{kv-cache: every output of the model is a 'present.*' cache output; nothing (e.g. logits) is left to compute}}
func.func @only_present(%k: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32> {kiln.name = "present.0.key"}) {
  return %k : tensor<1x2x4x8xf32>
}

// -----

// A one-token step cannot show whether attention is causal: without kiln-compile's check at two
// tokens (the function's kiln.causal_checked) the pass refuses it.
func.func @one_token_unchecked(%pos: tensor<1x1xi64> {kiln.name = "position_ids"}, %q: tensor<1x2x1x16xf32>) -> tensor<1x2x1x16xf32> {
  // expected-error @+1 {{kv-cache: at one token kiln cannot tell causal from bidirectional attention; compile the ONNX model with kiln-compile --kv-cache, which checks it at two tokens, or a step of two or more tokens}}
  %o = kiln.attention %q, %q, %q {scale = 1.0 : f64, causal = false, zero_masked_rows = false, bshd_output = false} : tensor<1x2x1x16xf32>, tensor<1x2x1x16xf32>, tensor<1x2x1x16xf32> -> tensor<1x2x1x16xf32>
  return %o : tensor<1x2x1x16xf32>
}

// -----

// With the check done, the same step is cached.
// CHECK-LABEL: func.func @one_token_checked
// CHECK: kiln.kv_cache_append
// CHECK: kiln.paged_attention
func.func @one_token_checked(%pos: tensor<1x1xi64> {kiln.name = "position_ids"}, %q: tensor<1x2x1x16xf32>) -> tensor<1x2x1x16xf32> attributes {kiln.causal_checked} {
  %o = kiln.attention %q, %q, %q {scale = 1.0 : f64, causal = false, zero_masked_rows = false, bshd_output = false} : tensor<1x2x1x16xf32>, tensor<1x2x1x16xf32>, tensor<1x2x1x16xf32> -> tensor<1x2x1x16xf32>
  return %o : tensor<1x2x1x16xf32>
}

// -----

// Sizes: a step longer than max-seq-len (40) cannot be cached.
func.func @step_too_long(%pos: tensor<1x48xi64> {kiln.name = "position_ids"}, %q: tensor<1x2x48x16xf32>) -> tensor<1x2x48x16xf32> {
  // expected-error @-1 {{kv-cache: a step of 48 tokens does not fit in max-seq-len 40}}
  %o = kiln.attention %q, %q, %q {scale = 1.0 : f64, causal = true, zero_masked_rows = false, bshd_output = false} : tensor<1x2x48x16xf32>, tensor<1x2x48x16xf32>, tensor<1x2x48x16xf32> -> tensor<1x2x48x16xf32>
  return %o : tensor<1x2x48x16xf32>
}
