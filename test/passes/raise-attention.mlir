// RUN: kiln-opt %s --split-input-file --kiln-raise-attention | FileCheck %s

// GPT-2 as torch's dynamo exporter spells it: Q and K^T each scaled by
// c = D^-1/4, K^T as Reshape(Transpose(Reshape(K), [0, 2, 1])), the constant
// causal mask [1, 1, S, S] of 0 / f32 minimum added, Softmax, the NaN guard
// Where(IsNaN(p), 0, p), MatMul with V and the head transpose. Everything
// becomes one kiln.attention reading Q, K and V: causal, no mask operand,
// zero_masked_rows (the guard), bshd_output (the transpose), scale c * c.
// CHECK-LABEL: func.func @gpt2_dynamo_causal
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 {bshd_output = true, causal = true, scale = 0.35355336801239901 : f64, zero_masked_rows = true} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x4x2x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @gpt2_dynamo_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x2x8xf32> {
  %c = kiln.constant dense<0.594603539> : tensor<f32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %mask = kiln.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, 0.0, -3.40282347E+38],
                                 [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %k3 = kiln.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %kt3 = kiln.transpose %k3 {perm = array<i64: 0, 2, 1>} : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %kt = kiln.reshape %kt3 : tensor<2x8x4xf32> -> tensor<1x2x8x4xf32>
  %qs = kiln.mul %q, %c : tensor<1x2x4x8xf32>, tensor<f32> -> tensor<1x2x4x8xf32>
  %kts = kiln.mul %kt, %c : tensor<1x2x8x4xf32>, tensor<f32> -> tensor<1x2x8x4xf32>
  %s = kiln.matmul %qs, %kts : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %sm = kiln.add %s, %mask : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %nan = kiln.is_nan %p : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xi1>
  %pz = kiln.where %nan, %zero, %p : tensor<1x2x4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %o = kiln.matmul %pz, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %ob = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x4x8xf32> -> tensor<1x4x2x8xf32>
  return %ob : tensor<1x4x2x8xf32>
}

// -----

// Real GPT-2 124M through dynamo scales the scores after the matmul (Mul by
// a scalar, here on the left), then adds the mask. K^T is
// Transpose(K, [0, 1, 3, 2]). A constant mask that is not causal stays the
// mask operand; without the NaN guard and the head transpose both flags are
// false.
// CHECK-LABEL: func.func @gpt2_scale_after_matmul
// CHECK-NEXT: %[[M:.+]] = kiln.constant dense<{{\[\[\[\[}}0.000000e+00, 0.000000e+00, 0.000000e+00, -3.40282347E+38]
// CHECK-NOT: kiln.matmul
// CHECK-NOT: kiln.softmax
// CHECK: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2, %[[M]] {bshd_output = false, causal = false, scale = 1.250000e-01 : f64, zero_masked_rows = false} : tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<1x1x4x4xf32> -> tensor<2x2x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @gpt2_scale_after_matmul(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %c = kiln.constant dense<0.125> : tensor<f32>
  %mask = kiln.constant dense<[[[[0.0, 0.0, 0.0, -3.40282347E+38],
                                 [0.0, 0.0, 0.0, -3.40282347E+38],
                                 [0.0, 0.0, 0.0, -3.40282347E+38],
                                 [0.0, 0.0, 0.0, -3.40282347E+38]]]]> : tensor<1x1x4x4xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = kiln.matmul %q, %kt : tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32> -> tensor<2x2x4x4xf32>
  %s2 = kiln.mul %c, %s : tensor<f32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x4xf32>
  %s3 = kiln.add %s2, %mask : tensor<2x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<2x2x4x4xf32>
  %p = kiln.softmax %s3 {axis = 3 : i64} : tensor<2x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32> -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// BERT through the TorchScript exporter: K stays [B, S, H, D] and K^T is
// Transpose(Kbshd, [0, 2, 3, 1]); the scores are divided by sqrt(D); the
// additive padding mask [B, 1, 1, S] is a function argument, added on the
// left. The key operand becomes the head transpose of Kbshd (a view for
// codegen) and the mask is passed through.
// CHECK-LABEL: func.func @bert_legacy_div_mask_arg
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[KB:[^:]+]]: tensor<2x4x2x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<2x1x1x4xf32>)
// CHECK-NEXT: %[[K:.+]] = kiln.transpose %[[KB]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x8xf32> -> tensor<2x2x4x8xf32>
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]], %[[M]] {bshd_output = true, causal = false, scale = 0.35355339664408242 : f64, zero_masked_rows = false} : tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x1x1x4xf32> -> tensor<2x4x2x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @bert_legacy_div_mask_arg(%q: tensor<2x2x4x8xf32>, %kb: tensor<2x4x2x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<2x1x1x4xf32>) -> tensor<2x4x2x8xf32> {
  %d = kiln.constant dense<2.82842708> : tensor<f32>
  %kt = kiln.transpose %kb {perm = array<i64: 0, 2, 3, 1>} : tensor<2x4x2x8xf32> -> tensor<2x2x8x4xf32>
  %s = kiln.matmul %q, %kt : tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32> -> tensor<2x2x4x4xf32>
  %s2 = kiln.div %s, %d : tensor<2x2x4x4xf32>, tensor<f32> -> tensor<2x2x4x4xf32>
  %s3 = kiln.add %mask, %s2 : tensor<2x1x1x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x4xf32>
  %p = kiln.softmax %s3 {axis = 3 : i64} : tensor<2x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32> -> tensor<2x2x4x8xf32>
  %ob = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x4x8xf32> -> tensor<2x4x2x8xf32>
  return %ob : tensor<2x4x2x8xf32>
}

// -----

// Llama with grouped-query attention (4 query heads, 2 KV heads): HF's
// repeat_kv spells K and V as Reshape [B, Hkv, S, D] -> [B, Hkv, 1, S, D],
// Expand to [B, Hkv, 2, S, D], Reshape to [B, Hq, S, D]. The repetition is
// dropped: key and value are the 2-head tensors, the kernel maps query head
// h to KV head h / 2.
// CHECK-LABEL: func.func @llama_gqa_repeat_kv
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 {bshd_output = true, causal = true, scale = 0.35355336801239901 : f64, zero_masked_rows = true} : tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x4x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @llama_gqa_repeat_kv(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %c = kiln.constant dense<0.594603539> : tensor<f32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %mask = kiln.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, 0.0, -3.40282347E+38],
                                 [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %k5 = kiln.reshape %k : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %ke = kiln.expand %k5 : tensor<1x2x1x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %kr = kiln.reshape %ke : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %v5 = kiln.reshape %v : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %ve = kiln.expand %v5 : tensor<1x2x1x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %vr = kiln.reshape %ve : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %k3 = kiln.reshape %kr : tensor<1x4x4x8xf32> -> tensor<4x4x8xf32>
  %kt3 = kiln.transpose %k3 {perm = array<i64: 0, 2, 1>} : tensor<4x4x8xf32> -> tensor<4x8x4xf32>
  %kt = kiln.reshape %kt3 : tensor<4x8x4xf32> -> tensor<1x4x8x4xf32>
  %qs = kiln.mul %q, %c : tensor<1x4x4x8xf32>, tensor<f32> -> tensor<1x4x4x8xf32>
  %kts = kiln.mul %kt, %c : tensor<1x4x8x4xf32>, tensor<f32> -> tensor<1x4x8x4xf32>
  %s = kiln.matmul %qs, %kts : tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32> -> tensor<1x4x4x4xf32>
  %sm = kiln.add %s, %mask : tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x4x4x4xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x4x4x4xf32>
  %nan = kiln.is_nan %p : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xi1>
  %pz = kiln.where %nan, %zero, %p : tensor<1x4x4x4xi1>, tensor<f32>, tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %o = kiln.matmul %pz, %vr : tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf32>
  %ob = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf32>
  return %ob : tensor<1x4x4x8xf32>
}

// -----

// A boolean mask applied as Where(keep, scores, -inf): equivalent to adding
// Where(keep, 0, -inf), which becomes the additive mask operand (the shape of
// the condition, broadcast by the kernel).
// CHECK-LABEL: func.func @bool_mask_where_scores_fill
// CHECK-SAME: (%{{[^:]+}}: tensor<1x2x4x8xf32>, %{{[^:]+}}: tensor<1x2x4x8xf32>, %{{[^:]+}}: tensor<1x2x4x8xf32>, %[[C:[^:]+]]: tensor<1x1x1x4xi1>)
// CHECK: %[[FILL:.+]] = kiln.constant dense<0xFF800000> : tensor<f32>
// CHECK-NOT: kiln.matmul
// CHECK-NOT: kiln.softmax
// CHECK: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[M:.+]] = kiln.where %[[C]], %[[ZERO]], %[[FILL]] : tensor<1x1x1x4xi1>, tensor<f32>, tensor<f32> -> tensor<1x1x1x4xf32>
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %{{.+}}, %arg2, %[[M]] {bshd_output = false, causal = false, scale = 0.35355338454246521 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x1x4xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @bool_mask_where_scores_fill(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %keep: tensor<1x1x1x4xi1>) -> tensor<1x2x4x8xf32> {
  %c = kiln.constant dense<0.353553391> : tensor<f32>
  %fill = kiln.constant dense<0xFF800000> : tensor<f32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = kiln.matmul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %s2 = kiln.mul %s, %c : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %s3 = kiln.where %keep, %s2, %fill : tensor<1x1x1x4xi1>, tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %s3 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The swapped spelling Where(masked, fill, scores) (fill = f32 minimum)
// becomes the additive mask Where(masked, fill, 0).
// CHECK-LABEL: func.func @bool_mask_where_fill_scores
// CHECK-SAME: (%{{[^:]+}}: tensor<1x2x4x8xf32>, %{{[^:]+}}: tensor<1x2x4x8xf32>, %{{[^:]+}}: tensor<1x2x4x8xf32>, %[[C:[^:]+]]: tensor<1x1x4x4xi1>)
// CHECK: %[[FILL:.+]] = kiln.constant dense<-3.40282347E+38> : tensor<f32>
// CHECK-NOT: kiln.matmul
// CHECK-NOT: kiln.softmax
// CHECK: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[M:.+]] = kiln.where %[[C]], %[[FILL]], %[[ZERO]] : tensor<1x1x4x4xi1>, tensor<f32>, tensor<f32> -> tensor<1x1x4x4xf32>
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %{{.+}}, %arg2, %[[M]] {bshd_output = false, causal = false, scale = 0.35355338454246521 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @bool_mask_where_fill_scores(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %masked: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %c = kiln.constant dense<0.353553391> : tensor<f32>
  %fill = kiln.constant dense<-3.40282347E+38> : tensor<f32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = kiln.matmul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %s2 = kiln.mul %s, %c : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %s3 = kiln.where %masked, %fill, %s2 : tensor<1x1x4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %s3 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A causal constant written with -inf instead of the f32 minimum is causal
// too, here with the scale applied to Q only (Div).
// CHECK-LABEL: func.func @causal_neg_inf
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 {bshd_output = false, causal = true, scale = 2.500000e-01 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @causal_neg_inf(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %four = kiln.constant dense<4.0> : tensor<f32>
  %mask = kiln.constant dense<[[[[0.0, 0xFF800000, 0xFF800000, 0xFF800000],
                                 [0.0, 0.0, 0xFF800000, 0xFF800000],
                                 [0.0, 0.0, 0.0, 0xFF800000],
                                 [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %qs = kiln.div %q, %four : tensor<1x2x4x8xf32>, tensor<f32> -> tensor<1x2x4x8xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = kiln.matmul %qs, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %sm = kiln.add %s, %mask : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Exporters expand the causal constant over the batch ([B, 1, S, S], GPT-2
// and Llama exported with batch 2 or more): every [S, S] slice is causal, so
// it is still `causal` and the batch-sized constant disappears.
// CHECK-LABEL: func.func @causal_expanded_over_batch
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 {bshd_output = false, causal = true, scale = 1.000000e+00 : f64, zero_masked_rows = false} : tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32> -> tensor<2x2x3x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @causal_expanded_over_batch(%q: tensor<2x2x3x8xf32>, %k: tensor<2x2x3x8xf32>, %v: tensor<2x2x3x8xf32>) -> tensor<2x2x3x8xf32> {
  %mask = kiln.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, -3.40282347E+38],
                                 [0.0, 0.0, 0.0]]],
                               [[[0.0, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, -3.40282347E+38],
                                 [0.0, 0.0, 0.0]]]]> : tensor<2x1x3x3xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x3x8xf32> -> tensor<2x2x8x3xf32>
  %s = kiln.matmul %q, %kt : tensor<2x2x3x8xf32>, tensor<2x2x8x3xf32> -> tensor<2x2x3x3xf32>
  %sm = kiln.add %s, %mask : tensor<2x2x3x3xf32>, tensor<2x1x3x3xf32> -> tensor<2x2x3x3xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<2x2x3x3xf32>
  %o = kiln.matmul %p, %v : tensor<2x2x3x3xf32>, tensor<2x2x3x8xf32> -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}

// -----

// A batch-expanded mask whose second slice is not causal stays a mask.
// CHECK-LABEL: func.func @expanded_mask_one_slice_differs
// CHECK: kiln.attention %arg0, %arg1, %arg2, %{{.+}} {bshd_output = false, causal = false
func.func @expanded_mask_one_slice_differs(%q: tensor<2x2x3x8xf32>, %k: tensor<2x2x3x8xf32>, %v: tensor<2x2x3x8xf32>) -> tensor<2x2x3x8xf32> {
  %mask = kiln.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, -3.40282347E+38],
                                 [0.0, 0.0, 0.0]]],
                               [[[0.0, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, -3.40282347E+38],
                                 [-3.40282347E+38, 0.0, 0.0]]]]> : tensor<2x1x3x3xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x3x8xf32> -> tensor<2x2x8x3xf32>
  %s = kiln.matmul %q, %kt : tensor<2x2x3x8xf32>, tensor<2x2x8x3xf32> -> tensor<2x2x3x3xf32>
  %sm = kiln.add %s, %mask : tensor<2x2x3x3xf32>, tensor<2x1x3x3xf32> -> tensor<2x2x3x3xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<2x2x3x3xf32>
  %o = kiln.matmul %p, %v : tensor<2x2x3x3xf32>, tensor<2x2x3x8xf32> -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}

// -----

// Sq = 2 queries against Sk = 6 keys (decoding with a cache): the causal
// mask is aligned bottom-right, 0 where j <= i + 4. That is kiln.attention's
// `causal`.
// CHECK-LABEL: func.func @causal_bottom_right
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 {bshd_output = false, causal = true, scale = 1.250000e-01 : f64, zero_masked_rows = false} : tensor<1x2x2x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x2x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @causal_bottom_right(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x2x8xf32> {
  %c = kiln.constant dense<0.125> : tensor<f32>
  %mask = kiln.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38],
                                 [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x2x6xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x6x8xf32> -> tensor<1x2x8x6xf32>
  %s = kiln.matmul %q, %kt : tensor<1x2x2x8xf32>, tensor<1x2x8x6xf32> -> tensor<1x2x2x6xf32>
  %s2 = kiln.mul %s, %c : tensor<1x2x2x6xf32>, tensor<f32> -> tensor<1x2x2x6xf32>
  %sm = kiln.add %s2, %mask : tensor<1x2x2x6xf32>, tensor<1x1x2x6xf32> -> tensor<1x2x2x6xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x2x2x6xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x2x6xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// The same shapes with a top-left aligned triangle (0 where j <= i) are not
// kiln.attention's causal mask: the constant stays the mask operand.
// CHECK-LABEL: func.func @triangle_top_left_is_a_mask
// CHECK: %[[M:.+]] = kiln.constant
// CHECK-NOT: kiln.matmul
// CHECK-NOT: kiln.softmax
// CHECK: kiln.attention %arg0, %arg1, %arg2, %[[M]] {bshd_output = false, causal = false, scale = 1.250000e-01 : f64, zero_masked_rows = false}
func.func @triangle_top_left_is_a_mask(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x2x8xf32> {
  %c = kiln.constant dense<0.125> : tensor<f32>
  %mask = kiln.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38]]]]> : tensor<1x1x2x6xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x6x8xf32> -> tensor<1x2x8x6xf32>
  %s = kiln.matmul %q, %kt : tensor<1x2x2x8xf32>, tensor<1x2x8x6xf32> -> tensor<1x2x2x6xf32>
  %s2 = kiln.mul %s, %c : tensor<1x2x2x6xf32>, tensor<f32> -> tensor<1x2x2x6xf32>
  %sm = kiln.add %s2, %mask : tensor<1x2x2x6xf32>, tensor<1x1x2x6xf32> -> tensor<1x2x2x6xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x2x2x6xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x2x6xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// An all-zero constant mask is dropped.
// CHECK-LABEL: func.func @zero_mask_dropped
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 {bshd_output = false, causal = false, scale = 1.250000e-01 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @zero_mask_dropped(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = kiln.constant dense<0.125> : tensor<f32>
  %mask = kiln.constant dense<0.0> : tensor<1x1x4x4xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = kiln.matmul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %s2 = kiln.mul %s, %c : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %sm = kiln.add %s2, %mask : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Near miss: the scale is applied after the mask, softmax((s + m) * c),
// which scales the mask too. Nothing is raised; the softmax says why.
// CHECK-LABEL: func.func @near_miss_scale_after_mask
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax %{{.+}} {axis = 3 : i64, kiln.unfused = "attention: the scores are scaled after the mask is applied"}
// CHECK: kiln.matmul
// CHECK-NOT: kiln.attention
func.func @near_miss_scale_after_mask(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x1x4xf32>) -> tensor<1x2x4x8xf32> {
  %c = kiln.constant dense<0.125> : tensor<f32>
  %s = kiln.matmul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %sm = kiln.add %s, %mask : tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32> -> tensor<1x2x4x4xf32>
  %s2 = kiln.mul %sm, %c : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %s2 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Near miss: Where(keep, s, -10000) replaces masked scores by a finite value
// (a fully masked row is uniform, not NaN), which no additive mask <= -1e30
// reproduces.
// CHECK-LABEL: func.func @near_miss_finite_where_fill
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax %{{.+}} {axis = 3 : i64, kiln.unfused = "attention: a where on the scores with a fill above -1e30"}
// CHECK-NOT: kiln.attention
func.func @near_miss_finite_where_fill(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %keep: tensor<1x1x1x4xi1>) -> tensor<1x2x4x8xf32> {
  %fill = kiln.constant dense<-10000.0> : tensor<f32>
  %s = kiln.matmul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %s2 = kiln.where %keep, %s, %fill : tensor<1x1x1x4xi1>, tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %s2 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Near miss: the probabilities are also returned (output_attentions), so they
// must be stored.
// CHECK-LABEL: func.func @near_miss_probabilities_returned
// CHECK-NOT: kiln.attention
// CHECK: %[[P:.+]] = kiln.softmax %{{.+}} {axis = 3 : i64, kiln.unfused = "attention: the probabilities have other users than one matmul"}
// CHECK: %[[O:.+]] = kiln.matmul %[[P]], %arg2
// CHECK: return %[[O]], %[[P]]
func.func @near_miss_probabilities_returned(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = kiln.matmul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// Near miss: with the NaN guard, the probabilities also returned.
// CHECK-LABEL: func.func @near_miss_guarded_probabilities_returned
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax %{{.+}} {axis = 3 : i64, kiln.unfused = "attention: the probabilities have other users"}
// CHECK-NOT: kiln.attention
func.func @near_miss_guarded_probabilities_returned(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %s = kiln.matmul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %nan = kiln.is_nan %p : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xi1>
  %pz = kiln.where %nan, %zero, %p : tensor<1x2x4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %o = kiln.matmul %pz, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// Near miss: two masks added one after the other. The outer add's score side
// is another add, not a (scaled) matmul, so the add is rejected as a whole.
// CHECK-LABEL: func.func @near_miss_two_masks_added
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax %{{.+}} {axis = 3 : i64, kiln.unfused = "attention: an add on the scores whose operands are not scores + mask"}
// CHECK-NOT: kiln.attention
func.func @near_miss_two_masks_added(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %m1: tensor<1x1x1x4xf32>, %m2: tensor<1x1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %s = kiln.matmul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %a1 = kiln.add %s, %m1 : tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32> -> tensor<1x2x4x4xf32>
  %a2 = kiln.add %a1, %m2 : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %a2 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Near miss: a boolean mask applied by Where on top of an additive mask.
// CHECK-LABEL: func.func @near_miss_where_and_add_masks
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax %{{.+}} {axis = 3 : i64, kiln.unfused = "attention: more than one mask is added to the scores"}
// CHECK-NOT: kiln.attention
func.func @near_miss_where_and_add_masks(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x1x4xf32>, %keep: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %fill = kiln.constant dense<0xFF800000> : tensor<f32>
  %s = kiln.matmul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %a = kiln.add %s, %m : tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32> -> tensor<1x2x4x4xf32>
  %w = kiln.where %keep, %a, %fill : tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %w {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Near miss: a softmax over a non-last axis between the two matmuls.
// CHECK-LABEL: func.func @near_miss_softmax_axis
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax %{{.+}} {axis = 2 : i64, kiln.unfused = "attention: softmax is not over the last axis of a rank-4 score tensor"}
func.func @near_miss_softmax_axis(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = kiln.matmul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %p = kiln.softmax %s {axis = 2 : i64} : tensor<1x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A softmax over a non-last axis that no matmul reads is not attention at
// all: no kiln.unfused note.
// CHECK-LABEL: func.func @softmax_not_attention
// CHECK-NEXT: %[[P:.+]] = kiln.softmax %arg0 {axis = 1 : i64} : tensor<2x4x8xf32>
// CHECK-NEXT: return %[[P]]
func.func @softmax_not_attention(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %p = kiln.softmax %x {axis = 1 : i64} : tensor<2x4x8xf32>
  return %p : tensor<2x4x8xf32>
}

// -----

// Rotary embeddings (rotate-half RoPE), raised before attention. HF's
// apply_rotary_pos_emb: x * cos + concat(-x[..., D/2:], x[..., :D/2]) * sin,
// with the cos/sin tables constants [1, 1, S, D] (Llama's tables fold to
// constants with static shapes). The Slice / Neg / Concat / Mul / Add chain
// becomes one kiln.rotary reading x and the two tables.
// CHECK-LABEL: func.func @rotary_constant_tables
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[COS:.+]] = kiln.constant dense<5.000000e-01> : tensor<1x1x4x8xf32>
// CHECK-NEXT: %[[SIN:.+]] = kiln.constant dense<2.500000e-01> : tensor<1x1x4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.rotary %[[X]], %[[COS]], %[[SIN]] : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @rotary_constant_tables(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %cos = kiln.constant dense<0.5> : tensor<1x1x4x8xf32>
  %sin = kiln.constant dense<0.25> : tensor<1x1x4x8xf32>
  %hi = kiln.slice %x {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %lo = kiln.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %n = kiln.neg %hi : tensor<1x2x4x4xf32>
  %rot = kiln.concat %n, %lo {axis = 3 : i64} : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x8xf32>
  %a = kiln.mul %x, %cos : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x2x4x8xf32>
  %b = kiln.mul %rot, %sin : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x2x4x8xf32>
  %y = kiln.add %a, %b : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// The same with every operand order swapped (sin * rotated + cos * x) and
// [S, D] tables from function arguments: cos and sin are still told apart by
// which product reads x.
// CHECK-LABEL: func.func @rotary_operands_swapped
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x2x4x8xf32>, %[[COS:[^:]+]]: tensor<4x8xf32>, %[[SIN:[^:]+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = kiln.rotary %[[X]], %[[COS]], %[[SIN]] : tensor<1x2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @rotary_operands_swapped(%x: tensor<1x2x4x8xf32>, %cos: tensor<4x8xf32>, %sin: tensor<4x8xf32>) -> tensor<1x2x4x8xf32> {
  %hi = kiln.slice %x {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %lo = kiln.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %n = kiln.neg %hi : tensor<1x2x4x4xf32>
  %rot = kiln.concat %n, %lo {axis = 3 : i64} : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x8xf32>
  %b = kiln.mul %sin, %rot : tensor<4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %a = kiln.mul %cos, %x : tensor<4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %y = kiln.add %b, %a : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Llama: RoPE on Q (4 heads) and K (2 KV heads) with shared [1, 1, S, D]
// tables, then repeat_kv, K^T, scaled scores, the causal constant, Softmax,
// MatMul with V and the head transpose. Both rotations are raised first, so
// the query and key of the kiln.attention are kiln.rotary results (the
// attention kernel applies them to its Q and K tiles), the key with 2 heads.
// CHECK-LABEL: func.func @llama_rotary_q_k
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x4x8xf32>, %[[K:[^:]+]]: tensor<1x2x4x8xf32>, %[[V:[^:]+]]: tensor<1x2x4x8xf32>, %[[COS:[^:]+]]: tensor<1x1x4x8xf32>, %[[SIN:[^:]+]]: tensor<1x1x4x8xf32>)
// CHECK-NEXT: %[[QR:.+]] = kiln.rotary %[[Q]], %[[COS]], %[[SIN]] : tensor<1x4x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x4x4x8xf32>
// CHECK-NEXT: %[[KR:.+]] = kiln.rotary %[[K]], %[[COS]], %[[SIN]] : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[QR]], %[[KR]], %[[V]] {bshd_output = true, causal = true, scale = 0.35355338454246521 : f64, zero_masked_rows = false} : tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x4x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @llama_rotary_q_k(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %cos: tensor<1x1x4x8xf32>, %sin: tensor<1x1x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %c = kiln.constant dense<0.353553391> : tensor<f32>
  %mask = kiln.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, -3.40282347E+38, -3.40282347E+38],
                                 [0.0, 0.0, 0.0, -3.40282347E+38],
                                 [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %qhi = kiln.slice %q {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x8xf32> -> tensor<1x4x4x4xf32>
  %qlo = kiln.slice %q {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x8xf32> -> tensor<1x4x4x4xf32>
  %qn = kiln.neg %qhi : tensor<1x4x4x4xf32>
  %qrot = kiln.concat %qn, %qlo {axis = 3 : i64} : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32> -> tensor<1x4x4x8xf32>
  %qc = kiln.mul %q, %cos : tensor<1x4x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x4x4x8xf32>
  %qs = kiln.mul %qrot, %sin : tensor<1x4x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x4x4x8xf32>
  %qr = kiln.add %qc, %qs : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf32>
  %khi = kiln.slice %k {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %klo = kiln.slice %k {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %kn = kiln.neg %khi : tensor<1x2x4x4xf32>
  %krot = kiln.concat %kn, %klo {axis = 3 : i64} : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x8xf32>
  %kc = kiln.mul %k, %cos : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x2x4x8xf32>
  %ks = kiln.mul %krot, %sin : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x2x4x8xf32>
  %kr = kiln.add %kc, %ks : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %k5 = kiln.reshape %kr : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %ke = kiln.expand %k5 : tensor<1x2x1x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %kq = kiln.reshape %ke : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %v5 = kiln.reshape %v : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %ve = kiln.expand %v5 : tensor<1x2x1x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %vq = kiln.reshape %ve : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %kt = kiln.transpose %kq {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x4x8xf32> -> tensor<1x4x8x4xf32>
  %s = kiln.matmul %qr, %kt : tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32> -> tensor<1x4x4x4xf32>
  %s2 = kiln.mul %s, %c : tensor<1x4x4x4xf32>, tensor<f32> -> tensor<1x4x4x4xf32>
  %sm = kiln.add %s2, %mask : tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x4x4x4xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x4x4x4xf32>
  %o = kiln.matmul %p, %vq : tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf32>
  %ob = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf32>
  return %ob : tensor<1x4x4x8xf32>
}

// -----

// Near miss: the halves swapped, concat(-x[..., :D/2], x[..., D/2:]), is not
// rotate_half (it negates the first half in place). Nothing is raised.
// CHECK-LABEL: func.func @near_miss_rotary_halves_swapped
// CHECK-NOT: kiln.rotary
// CHECK: kiln.concat
// CHECK: kiln.add
// CHECK-NOT: kiln.rotary
func.func @near_miss_rotary_halves_swapped(%x: tensor<1x2x4x8xf32>, %cos: tensor<4x8xf32>, %sin: tensor<4x8xf32>) -> tensor<1x2x4x8xf32> {
  %lo = kiln.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %hi = kiln.slice %x {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %n = kiln.neg %lo : tensor<1x2x4x4xf32>
  %rot = kiln.concat %n, %hi {axis = 3 : i64} : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x8xf32>
  %a = kiln.mul %x, %cos : tensor<1x2x4x8xf32>, tensor<4x8xf32> -> tensor<1x2x4x8xf32>
  %b = kiln.mul %rot, %sin : tensor<1x2x4x8xf32>, tensor<4x8xf32> -> tensor<1x2x4x8xf32>
  %y = kiln.add %a, %b : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Near miss: the negation on the second concat input, concat(x[..., D/2:],
// -x[..., :D/2]) = -rotate_half(x). Nothing is raised.
// CHECK-LABEL: func.func @near_miss_rotary_sign_swapped
// CHECK-NOT: kiln.rotary
// CHECK: kiln.concat
// CHECK: kiln.add
// CHECK-NOT: kiln.rotary
func.func @near_miss_rotary_sign_swapped(%x: tensor<1x2x4x8xf32>, %cos: tensor<4x8xf32>, %sin: tensor<4x8xf32>) -> tensor<1x2x4x8xf32> {
  %hi = kiln.slice %x {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %lo = kiln.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %n = kiln.neg %lo : tensor<1x2x4x4xf32>
  %rot = kiln.concat %hi, %n {axis = 3 : i64} : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x8xf32>
  %a = kiln.mul %x, %cos : tensor<1x2x4x8xf32>, tensor<4x8xf32> -> tensor<1x2x4x8xf32>
  %b = kiln.mul %rot, %sin : tensor<1x2x4x8xf32>, tensor<4x8xf32> -> tensor<1x2x4x8xf32>
  %y = kiln.add %a, %b : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Near miss: the rotation is along the sequence axis (slices and concat on
// axis 2), not the last one.
// CHECK-LABEL: func.func @near_miss_rotary_concat_axis
// CHECK-NOT: kiln.rotary
// CHECK: kiln.concat %{{.+}}, %{{.+}} {axis = 2 : i64}
// CHECK: kiln.add
// CHECK-NOT: kiln.rotary
func.func @near_miss_rotary_concat_axis(%x: tensor<1x2x4x8xf32>, %cos: tensor<4x8xf32>, %sin: tensor<4x8xf32>) -> tensor<1x2x4x8xf32> {
  %hi = kiln.slice %x {starts = array<i64: 0, 0, 2, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x2x8xf32>
  %lo = kiln.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x2x8xf32>
  %n = kiln.neg %hi : tensor<1x2x2x8xf32>
  %rot = kiln.concat %n, %lo {axis = 2 : i64} : tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32> -> tensor<1x2x4x8xf32>
  %a = kiln.mul %x, %cos : tensor<1x2x4x8xf32>, tensor<4x8xf32> -> tensor<1x2x4x8xf32>
  %b = kiln.mul %rot, %sin : tensor<1x2x4x8xf32>, tensor<4x8xf32> -> tensor<1x2x4x8xf32>
  %y = kiln.add %a, %b : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Near miss: an odd head dim D = 7 (halves of 3 and 4, as torch slices
// x[..., :D//2] and x[..., D//2:]); kiln.rotary needs an even D.
// CHECK-LABEL: func.func @near_miss_rotary_odd_head_dim
// CHECK-NOT: kiln.rotary
// CHECK: kiln.concat
// CHECK: kiln.add
// CHECK-NOT: kiln.rotary
func.func @near_miss_rotary_odd_head_dim(%x: tensor<1x2x4x7xf32>, %cos: tensor<4x7xf32>, %sin: tensor<4x7xf32>) -> tensor<1x2x4x7xf32> {
  %hi = kiln.slice %x {starts = array<i64: 0, 0, 0, 3>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x7xf32> -> tensor<1x2x4x4xf32>
  %lo = kiln.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x7xf32> -> tensor<1x2x4x3xf32>
  %n = kiln.neg %hi : tensor<1x2x4x4xf32>
  %rot = kiln.concat %n, %lo {axis = 3 : i64} : tensor<1x2x4x4xf32>, tensor<1x2x4x3xf32> -> tensor<1x2x4x7xf32>
  %a = kiln.mul %x, %cos : tensor<1x2x4x7xf32>, tensor<4x7xf32> -> tensor<1x2x4x7xf32>
  %b = kiln.mul %rot, %sin : tensor<1x2x4x7xf32>, tensor<4x7xf32> -> tensor<1x2x4x7xf32>
  %y = kiln.add %a, %b : tensor<1x2x4x7xf32>, tensor<1x2x4x7xf32> -> tensor<1x2x4x7xf32>
  return %y : tensor<1x2x4x7xf32>
}

// -----

// Head dims above 256 exceed the attention kernels: left as it is, with the
// reason (it compiles unfused, as with --no-fuse).
// CHECK-LABEL: func.func @near_miss_head_dim_320
// CHECK: kiln.softmax {{.*}}kiln.unfused = "attention: head dim above 256 (the attention kernels' limit)"
// CHECK-NOT: kiln.attention
func.func @near_miss_head_dim_320(%q: tensor<1x1x4x320xf32>, %kt: tensor<1x1x320x4xf32>, %v: tensor<1x1x4x320xf32>) -> tensor<1x1x4x320xf32> {
  %s = kiln.matmul %q, %kt : tensor<1x1x4x320xf32>, tensor<1x1x320x4xf32> -> tensor<1x1x4x4xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<1x1x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x1x4x4xf32>, tensor<1x1x4x320xf32> -> tensor<1x1x4x320xf32>
  return %o : tensor<1x1x4x320xf32>
}

// -----

// Dynamic dims (kiln-opt input without --shape): left as it is.
// CHECK-LABEL: func.func @near_miss_dynamic
// CHECK: kiln.softmax {{.*}}kiln.unfused = "attention: dynamic shapes (kiln compiles static --shape values)"
// CHECK-NOT: kiln.attention
func.func @near_miss_dynamic(%q: tensor<1x?x4x8xf32>, %kt: tensor<1x?x8x4xf32>, %v: tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32> {
  %s = kiln.matmul %q, %kt : tensor<1x?x4x8xf32>, tensor<1x?x8x4xf32> -> tensor<1x?x4x4xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<1x?x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<1x?x4x4xf32>, tensor<1x?x4x8xf32> -> tensor<1x?x4x8xf32>
  return %o : tensor<1x?x4x8xf32>
}

// -----

// An fp16 export writes its causal mask with f16's lowest value, -65504:
// still causal (every causal row has an unmasked key, so the masked
// probabilities underflow to 0 exactly as with the mask).
// CHECK-LABEL: func.func @causal_f16_lowest
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 {bshd_output = false, causal = true
// CHECK-NEXT: return %[[O]]
func.func @causal_f16_lowest(%q: tensor<1x2x3x8xf16>, %k: tensor<1x2x3x8xf16>, %v: tensor<1x2x3x8xf16>) -> tensor<1x2x3x8xf16> {
  %mask = kiln.constant dense<[[[[0.0, -65504.0, -65504.0],
                                 [0.0, 0.0, -65504.0],
                                 [0.0, 0.0, 0.0]]]]> : tensor<1x1x3x3xf16>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x3x8xf16> -> tensor<1x2x8x3xf16>
  %s = kiln.matmul %q, %kt : tensor<1x2x3x8xf16>, tensor<1x2x8x3xf16> -> tensor<1x2x3x3xf16>
  %sm = kiln.add %s, %mask : tensor<1x2x3x3xf16>, tensor<1x1x3x3xf16> -> tensor<1x2x3x3xf16>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x2x3x3xf16>
  %o = kiln.matmul %p, %v : tensor<1x2x3x3xf16>, tensor<1x2x3x8xf16> -> tensor<1x2x3x8xf16>
  return %o : tensor<1x2x3x8xf16>
}

// -----

// BERT's padding mask as the dynamo exporter builds it: Where(And(true [1, 1, S, 1],
// keep [B, 1, 1, S]), 0, min) is [B, 1, S, S] but the same for every query. The attention's
// mask is computed again without the query dim ([B, 1, 1, S]; the And with a splat true
// drops out), so no kernel stores [B, 1, S, S] and attention reads one row per batch.
// The full-size And / Where are erased (the gather feeding the mask keeps one reader).
// CHECK-LABEL: func.func @bert_dynamo_padding_mask
// CHECK-NOT: kiln.and
// CHECK: %[[M:.+]] = kiln.where %arg3, %{{.+}}, %{{.+}} : tensor<2x1x1x4xi1>, tensor<f32>, tensor<f32> -> tensor<2x1x1x4xf32>
// CHECK-NEXT: kiln.attention %arg0, %arg1, %arg2, %[[M]] {{.+}} : tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x1x1x4xf32> -> tensor<2x2x4x8xf32>
func.func @bert_dynamo_padding_mask(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %keep: tensor<2x1x1x4xi1>) -> tensor<2x2x4x8xf32> {
  %c = kiln.constant dense<0.353553385> : tensor<f32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %min = kiln.constant dense<-3.40282347E+38> : tensor<f32>
  %true = kiln.constant dense<true> : tensor<1x1x4x1xi1>
  %both = kiln.and %true, %keep : tensor<1x1x4x1xi1>, tensor<2x1x1x4xi1> -> tensor<2x1x4x4xi1>
  %mask = kiln.where %both, %zero, %min : tensor<2x1x4x4xi1>, tensor<f32>, tensor<f32> -> tensor<2x1x4x4xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = kiln.matmul %q, %kt : tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32> -> tensor<2x2x4x4xf32>
  %ss = kiln.mul %s, %c : tensor<2x2x4x4xf32>, tensor<f32> -> tensor<2x2x4x4xf32>
  %sm = kiln.add %ss, %mask : tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32> -> tensor<2x2x4x4xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<2x2x4x4xf32>
  %o = kiln.matmul %p, %v : tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32> -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// An attention imported as one op (ONNX Attention-23, as a generation step's attention_mask of
// ones leaves it): its all-zero mask goes, `causal` stays.
// CHECK-LABEL: func.func @imported_attention_zero_mask
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 {bshd_output = false, causal = true, scale = 1.250000e-01 : f64, zero_masked_rows = true} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @imported_attention_zero_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %m = kiln.constant dense<0.0> : tensor<1x1x4x4xf32>
  %0 = kiln.attention %q, %k, %v, %m {bshd_output = false, causal = true, scale = 0.125 : f64, zero_masked_rows = true} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// Its bottom-right causal mask (2 queries, 4 keys) becomes `causal`.
// CHECK-LABEL: func.func @imported_attention_causal_mask
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 {bshd_output = false, causal = true, scale = 1.250000e-01 : f64, zero_masked_rows = true} : tensor<1x2x2x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x2x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @imported_attention_causal_mask(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32> {
  %m = kiln.constant dense<[[[[0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x2x4xf32>
  %0 = kiln.attention %q, %k, %v, %m {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = true} : tensor<1x2x2x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x2x4xf32> -> tensor<1x2x2x8xf32>
  return %0 : tensor<1x2x2x8xf32>
}

// -----

// A top-left triangle is not the bottom-right causal mask: it stays.
// CHECK-LABEL: func.func @imported_attention_other_mask_kept
// CHECK: kiln.attention %arg0, %arg1, %arg2, %{{.+}} {bshd_output = false, causal = false
func.func @imported_attention_other_mask_kept(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32> {
  %m = kiln.constant dense<[[[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000]]]]> : tensor<1x1x2x4xf32>
  %0 = kiln.attention %q, %k, %v, %m {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = true} : tensor<1x2x2x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x2x4xf32> -> tensor<1x2x2x8xf32>
  return %0 : tensor<1x2x2x8xf32>
}

// -----

// An imported attention read only by the head transpose writes [B, S, H, D] itself.
// CHECK-LABEL: func.func @imported_attention_head_transpose
// CHECK-NEXT: %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 {bshd_output = true, causal = true, scale = 1.250000e-01 : f64, zero_masked_rows = true} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x4x2x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @imported_attention_head_transpose(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x2x8xf32> {
  %0 = kiln.attention %q, %k, %v {bshd_output = false, causal = true, scale = 0.125 : f64, zero_masked_rows = true} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %1 = kiln.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x4x8xf32> -> tensor<1x4x2x8xf32>
  return %1 : tensor<1x4x2x8xf32>
}

// -----

// Read by anything else as well, it keeps [B, H, S, D].
// CHECK-LABEL: func.func @imported_attention_output_read_twice
// CHECK: kiln.attention %arg0, %arg1, %arg2 {bshd_output = false
// CHECK: kiln.transpose
func.func @imported_attention_output_read_twice(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x4x2x8xf32>, tensor<1x2x4x8xf32>) {
  %0 = kiln.attention %q, %k, %v {bshd_output = false, causal = true, scale = 0.125 : f64, zero_masked_rows = true} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %1 = kiln.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x4x8xf32> -> tensor<1x4x2x8xf32>
  return %1, %0 : tensor<1x4x2x8xf32>, tensor<1x2x4x8xf32>
}
