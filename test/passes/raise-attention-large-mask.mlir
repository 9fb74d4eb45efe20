// RUN: kiln-opt %s --split-input-file --canonicalize --kiln-raise-attention | FileCheck %s

// A causal mask too large to fold (2100 x 2100 = 4.41M elements > kMaxFoldElements, 2^22), as
// Llama's dynamo export computes it from position vectors at 4096 tokens: Where(LessEqual(key
// position, query position), 0, f16 lowest). kiln-raise-attention evaluates it row by row
// without materializing it, finds it causal, and the attention reads no mask.
// CHECK-LABEL: func.func @causal_positions
// CHECK: kiln.attention %arg0, %{{.+}}, %arg2 {bshd_output = false, causal = true
// CHECK-NOT: kiln.less_equal
// CHECK-NOT: kiln.causal_check
func.func @causal_positions(%q: tensor<1x2x2100x16xf16>, %k: tensor<1x2x2100x16xf16>, %v: tensor<1x2x2100x16xf16>) -> tensor<1x2x2100x16xf16> {
  %z = kiln.constant dense<0> : tensor<i64>
  %n = kiln.constant dense<2100> : tensor<i64>
  %o = kiln.constant dense<1> : tensor<i64>
  %pos = kiln.range %z, %n, %o : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<2100xi64>
  %kpos = kiln.reshape %pos : tensor<2100xi64> -> tensor<1x1x1x2100xi64>
  %qpos = kiln.reshape %pos : tensor<2100xi64> -> tensor<1x1x2100x1xi64>
  %keep = kiln.less_equal %kpos, %qpos : tensor<1x1x1x2100xi64>, tensor<1x1x2100x1xi64> -> tensor<1x1x2100x2100xi1>
  %t = kiln.constant dense<true> : tensor<i1>
  %keep2 = kiln.and %t, %keep : tensor<i1>, tensor<1x1x2100x2100xi1> -> tensor<1x1x2100x2100xi1>
  %zero = kiln.constant dense<0.0> : tensor<f16>
  %low = kiln.constant dense<-65504.0> : tensor<f16>
  %mask = kiln.where %keep2, %zero, %low : tensor<1x1x2100x2100xi1>, tensor<f16>, tensor<f16> -> tensor<1x1x2100x2100xf16>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x2100x16xf16> -> tensor<1x2x16x2100xf16>
  %s = kiln.matmul %q, %kt : tensor<1x2x2100x16xf16>, tensor<1x2x16x2100xf16> -> tensor<1x2x2100x2100xf16>
  %sm = kiln.add %s, %mask : tensor<1x2x2100x2100xf16>, tensor<1x1x2100x2100xf16> -> tensor<1x2x2100x2100xf16>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x2x2100x2100xf16>
  %r = kiln.matmul %p, %v : tensor<1x2x2100x2100xf16>, tensor<1x2x2100x16xf16> -> tensor<1x2x2100x16xf16>
  return %r : tensor<1x2x2100x16xf16>
}

// -----

// Off by one (Less: a query does not see its own key): not causal, so the mask stays.
// CHECK-LABEL: func.func @strictly_below
// CHECK: %[[M:.+]] = kiln.where
// CHECK: kiln.attention %arg0, %{{.+}}, %arg2, %[[M]] {bshd_output = false, causal = false
func.func @strictly_below(%q: tensor<1x2x2100x16xf16>, %k: tensor<1x2x2100x16xf16>, %v: tensor<1x2x2100x16xf16>) -> tensor<1x2x2100x16xf16> {
  %z = kiln.constant dense<0> : tensor<i64>
  %n = kiln.constant dense<2100> : tensor<i64>
  %o = kiln.constant dense<1> : tensor<i64>
  %pos = kiln.range %z, %n, %o : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<2100xi64>
  %kpos = kiln.reshape %pos : tensor<2100xi64> -> tensor<1x1x1x2100xi64>
  %qpos = kiln.reshape %pos : tensor<2100xi64> -> tensor<1x1x2100x1xi64>
  %keep = kiln.less %kpos, %qpos : tensor<1x1x1x2100xi64>, tensor<1x1x2100x1xi64> -> tensor<1x1x2100x2100xi1>
  %zero = kiln.constant dense<0.0> : tensor<f16>
  %low = kiln.constant dense<-65504.0> : tensor<f16>
  %mask = kiln.where %keep, %zero, %low : tensor<1x1x2100x2100xi1>, tensor<f16>, tensor<f16> -> tensor<1x1x2100x2100xf16>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x2100x16xf16> -> tensor<1x2x16x2100xf16>
  %s = kiln.matmul %q, %kt : tensor<1x2x2100x16xf16>, tensor<1x2x16x2100xf16> -> tensor<1x2x2100x2100xf16>
  %sm = kiln.add %s, %mask : tensor<1x2x2100x2100xf16>, tensor<1x1x2100x2100xf16> -> tensor<1x2x2100x2100xf16>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x2x2100x2100xf16>
  %r = kiln.matmul %p, %v : tensor<1x2x2100x2100xf16>, tensor<1x2x2100x16xf16> -> tensor<1x2x2100x16xf16>
  return %r : tensor<1x2x2100x16xf16>
}

// -----

// A sliding window of 1024 keys (LessEqual and Greater than position - 1024): not causal.
// Two attentions share the mask: the answer is kept on the mask's producer while the pass runs
// and removed afterwards.
// CHECK-LABEL: func.func @sliding_window_shared
// CHECK: %[[M:.+]] = kiln.where
// CHECK: kiln.attention %arg0, %{{.+}}, %arg2, %[[M]] {bshd_output = false, causal = false
// CHECK: kiln.attention %arg0, %{{.+}}, %arg2, %[[M]] {bshd_output = false, causal = false
// CHECK-NOT: kiln.causal_check
func.func @sliding_window_shared(%q: tensor<1x2x2100x16xf16>, %k: tensor<1x2x2100x16xf16>, %v: tensor<1x2x2100x16xf16>) -> (tensor<1x2x2100x16xf16>, tensor<1x2x2100x16xf16>) {
  %z = kiln.constant dense<0> : tensor<i64>
  %n = kiln.constant dense<2100> : tensor<i64>
  %o = kiln.constant dense<1> : tensor<i64>
  %w = kiln.constant dense<1024> : tensor<i64>
  %pos = kiln.range %z, %n, %o : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<2100xi64>
  %kpos = kiln.reshape %pos : tensor<2100xi64> -> tensor<1x1x1x2100xi64>
  %qpos = kiln.reshape %pos : tensor<2100xi64> -> tensor<1x1x2100x1xi64>
  %first = kiln.sub %qpos, %w : tensor<1x1x2100x1xi64>, tensor<i64> -> tensor<1x1x2100x1xi64>
  %c1 = kiln.less_equal %kpos, %qpos : tensor<1x1x1x2100xi64>, tensor<1x1x2100x1xi64> -> tensor<1x1x2100x2100xi1>
  %c2 = kiln.greater %kpos, %first : tensor<1x1x1x2100xi64>, tensor<1x1x2100x1xi64> -> tensor<1x1x2100x2100xi1>
  %keep = kiln.and %c1, %c2 : tensor<1x1x2100x2100xi1>, tensor<1x1x2100x2100xi1> -> tensor<1x1x2100x2100xi1>
  %zero = kiln.constant dense<0.0> : tensor<f16>
  %low = kiln.constant dense<-65504.0> : tensor<f16>
  %mask = kiln.where %keep, %zero, %low : tensor<1x1x2100x2100xi1>, tensor<f16>, tensor<f16> -> tensor<1x1x2100x2100xf16>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x2100x16xf16> -> tensor<1x2x16x2100xf16>
  %s = kiln.matmul %q, %kt : tensor<1x2x2100x16xf16>, tensor<1x2x16x2100xf16> -> tensor<1x2x2100x2100xf16>
  %sm = kiln.add %s, %mask : tensor<1x2x2100x2100xf16>, tensor<1x1x2100x2100xf16> -> tensor<1x2x2100x2100xf16>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<1x2x2100x2100xf16>
  %r = kiln.matmul %p, %v : tensor<1x2x2100x2100xf16>, tensor<1x2x2100x16xf16> -> tensor<1x2x2100x16xf16>
  %kt2 = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x2100x16xf16> -> tensor<1x2x16x2100xf16>
  %s2 = kiln.matmul %q, %kt2 : tensor<1x2x2100x16xf16>, tensor<1x2x16x2100xf16> -> tensor<1x2x2100x2100xf16>
  %sm2 = kiln.add %s2, %mask : tensor<1x2x2100x2100xf16>, tensor<1x1x2100x2100xf16> -> tensor<1x2x2100x2100xf16>
  %p2 = kiln.softmax %sm2 {axis = 3 : i64} : tensor<1x2x2100x2100xf16>
  %r2 = kiln.matmul %p2, %v : tensor<1x2x2100x2100xf16>, tensor<1x2x2100x16xf16> -> tensor<1x2x2100x16xf16>
  return %r, %r2 : tensor<1x2x2100x16xf16>, tensor<1x2x2100x16xf16>
}

// -----

// The batch-2 specialization of a dynamic export: the [1, 1, 2048, 2048] causal keep-mask (folded:
// 2^22 elements, the limit) expanded over the batch, then Where: [2, 1, 2048, 2048] is over the
// limit; Expand only broadcasts, so it is still causal.
// CHECK-LABEL: func.func @expanded_over_batch
// CHECK: kiln.attention %arg0, %{{.+}}, %arg2 {bshd_output = false, causal = true
// CHECK-NOT: kiln.expand
func.func @expanded_over_batch(%q: tensor<2x2x2048x16xf16>, %k: tensor<2x2x2048x16xf16>, %v: tensor<2x2x2048x16xf16>) -> tensor<2x2x2048x16xf16> {
  %z = kiln.constant dense<0> : tensor<i64>
  %n = kiln.constant dense<2048> : tensor<i64>
  %o = kiln.constant dense<1> : tensor<i64>
  %pos = kiln.range %z, %n, %o : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<2048xi64>
  %kpos = kiln.reshape %pos : tensor<2048xi64> -> tensor<1x1x1x2048xi64>
  %qpos = kiln.reshape %pos : tensor<2048xi64> -> tensor<1x1x2048x1xi64>
  %keep = kiln.less_equal %kpos, %qpos : tensor<1x1x1x2048xi64>, tensor<1x1x2048x1xi64> -> tensor<1x1x2048x2048xi1>
  %keepb = kiln.expand %keep : tensor<1x1x2048x2048xi1> -> tensor<2x1x2048x2048xi1>
  %zero = kiln.constant dense<0.0> : tensor<f16>
  %low = kiln.constant dense<-65504.0> : tensor<f16>
  %mask = kiln.where %keepb, %zero, %low : tensor<2x1x2048x2048xi1>, tensor<f16>, tensor<f16> -> tensor<2x1x2048x2048xf16>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x2048x16xf16> -> tensor<2x2x16x2048xf16>
  %s = kiln.matmul %q, %kt : tensor<2x2x2048x16xf16>, tensor<2x2x16x2048xf16> -> tensor<2x2x2048x2048xf16>
  %sm = kiln.add %s, %mask : tensor<2x2x2048x2048xf16>, tensor<2x1x2048x2048xf16> -> tensor<2x2x2048x2048xf16>
  %p = kiln.softmax %sm {axis = 3 : i64} : tensor<2x2x2048x2048xf16>
  %r = kiln.matmul %p, %v : tensor<2x2x2048x2048xf16>, tensor<2x2x2048x16xf16> -> tensor<2x2x2048x16xf16>
  return %r : tensor<2x2x2048x16xf16>
}
