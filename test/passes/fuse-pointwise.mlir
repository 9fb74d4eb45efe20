// RUN: kiln-opt %s --split-input-file --kiln-fuse-pointwise=recompute-rotary-tables=true | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fuse-pointwise | FileCheck %s --check-prefix=TABLES
// RUN: kiln-opt %s --split-input-file --kiln-fuse-pointwise=fuse-epilogues=false | FileCheck %s --check-prefix=NOEPI
// RUN: kiln-opt %s --split-input-file --kiln-fuse-pointwise=fuse-reduction-prologues=false | FileCheck %s --check-prefix=NOPRO
// RUN: kiln-opt %s --split-input-file --kiln-fuse-pointwise=fuse-gemm-prologues=false | FileCheck %s --check-prefix=NOGEMMPRO
// RUN: kiln-opt %s --split-input-file --kiln-fuse-pointwise="recompute-rotary-tables=true max-ops-per-kernel=20" | FileCheck %s --check-prefix=ROOM
// RUN: not kiln-opt %s --split-input-file --kiln-fuse-pointwise=max-ops-per-kernel=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: max-ops-per-kernel must be at least 1
// RUN: kiln-opt %s --split-input-file --kiln-fuse-pointwise=max-inputs-per-kernel=2 | FileCheck %s --check-prefix=INPUTS
// RUN: not kiln-opt %s --split-input-file --kiln-fuse-pointwise=max-inputs-per-kernel=0 2>&1 | FileCheck %s --check-prefix=ZEROIN
// ZEROIN: max-inputs-per-kernel must be at least 1
// RUN: kiln-opt %s --split-input-file --kiln-fuse-pointwise=max-ops-per-kernel=2 | FileCheck %s --check-prefix=CAP2

// NOEPI-LABEL: func.func @gemm_bias_gelu
// NOEPI: kiln.kernel @fused_matmul(
// NOEPI: kiln.kernel @fused_add_tanh(

// A chain of single-use pointwise ops becomes one kernel.
// CHECK-LABEL: func.func @chain
// With a cap of two ops per kernel the three-op chain splits (grouping runs bottom-up).
// CAP2-LABEL: func.func @chain
// CAP2: kiln.kernel @fused_add(
// CAP2: kiln.kernel @fused_mul_tanh(
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>)
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[K:.+]] = kiln.kernel @fused_add_mul_tanh(%[[A]], %[[B]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: kiln.add
  // CHECK: kiln.mul
  // CHECK: kiln.tanh
  // CHECK: kiln.yield
  // CHECK: return %[[K]]
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = kiln.mul %0, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = kiln.tanh %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A value read by several ops of one group is evaluated once per element
// inside that group's kernel; a value also read outside the group (here
// returned) is materialized and ends its own kernel.
// CHECK-LABEL: func.func @multi_use
func.func @multi_use(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // CHECK: %[[K0:.+]] = kiln.kernel @fused_sin(
  // CHECK: %[[K1:.+]] = kiln.kernel @fused_exp_tanh_neg_add(%[[K0]])
  // CHECK: return %[[K1]], %[[K0]]
  %s = kiln.sin %a : tensor<8xf32>
  %0 = kiln.exp %s : tensor<8xf32>
  %1 = kiln.tanh %0 : tensor<8xf32>
  %2 = kiln.neg %0 : tensor<8xf32>
  %3 = kiln.add %1, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %3, %s : tensor<8xf32>, tensor<8xf32>
}

// -----

// The expensive producer of a GEMM operand (sigmoid) stays its own kernel,
// and a reshape read directly by the GEMM is never a prologue (it moves no
// data); the elementwise consumer group, through a reshape, is its epilogue.
// CHECK-LABEL: func.func @around_matmul
func.func @around_matmul(%x: tensor<2x4x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x4x8xf32> {
  // CHECK: kiln.kernel @fused_sigmoid(
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: kiln.sigmoid
  // CHECK-NEXT: kiln.reshape
  // CHECK-NEXT: kiln.yield
  // CHECK: kiln.kernel @fused_matmul_relu(
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: kiln.matmul
  // CHECK-NEXT: kiln.reshape
  // CHECK-NEXT: kiln.relu
  // CHECK-NEXT: kiln.yield
  %s = kiln.sigmoid %x : tensor<2x4x8xf32>
  %r = kiln.reshape %s : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %m = kiln.matmul %r, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %r2 = kiln.reshape %m : tensor<8x8xf32> -> tensor<2x4x8xf32>
  %o = kiln.relu %r2 : tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Attention scores: the head split (slice, reshape, transpose) and the
// scaling of Q and K by a constant fuse into the score GEMM's operand
// loaders. Ops reading further tensors do not (see @gemm_operand_sum).
// CHECK-LABEL: func.func @attention_scores_prologue
// NOGEMMPRO-LABEL: func.func @attention_scores_prologue
func.func @attention_scores_prologue(%qkv: tensor<16x64xf32>) -> tensor<2x16x16xf32> {
  %scale = kiln.constant dense<0.5> : tensor<f32>
  // CHECK: kiln.kernel @fused_matmul_mul_slice_transpose(
  // CHECK: kiln.matmul
  // CHECK-NOT: kiln.kernel
  // NOGEMMPRO: kiln.kernel @fused_mul_slice_transpose(
  // NOGEMMPRO: kiln.kernel @fused_mul_slice_transpose(
  // NOGEMMPRO: kiln.matmul
  %q = kiln.slice %qkv {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<16x64xf32> -> tensor<16x32xf32>
  %q3 = kiln.reshape %q : tensor<16x32xf32> -> tensor<16x2x16xf32>
  %qt = kiln.transpose %q3 {perm = array<i64: 1, 0, 2>} : tensor<16x2x16xf32> -> tensor<2x16x16xf32>
  %qs = kiln.mul %qt, %scale : tensor<2x16x16xf32>, tensor<f32> -> tensor<2x16x16xf32>
  %k = kiln.slice %qkv {starts = array<i64: 0, 32>, steps = array<i64: 1, 1>} : tensor<16x64xf32> -> tensor<16x32xf32>
  %k3 = kiln.reshape %k : tensor<16x32xf32> -> tensor<16x2x16xf32>
  %kt = kiln.transpose %k3 {perm = array<i64: 1, 2, 0>} : tensor<16x2x16xf32> -> tensor<2x16x16xf32>
  %ks = kiln.mul %kt, %scale : tensor<2x16x16xf32>, tensor<f32> -> tensor<2x16x16xf32>
  %s = kiln.matmul %qs, %ks : tensor<2x16x16xf32>, tensor<2x16x16xf32> -> tensor<2x16x16xf32>
  return %s : tensor<2x16x16xf32>
}

// -----

// Bias add and activation fuse into the GEMM epilogue.
// CHECK-LABEL: func.func @gemm_bias_gelu
func.func @gemm_bias_gelu(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  // CHECK: kiln.kernel @fused_matmul_add_tanh(
  // CHECK-NOT: kiln.kernel
  %m = kiln.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %a = kiln.add %m, %b : tensor<16x64xf32>, tensor<64xf32> -> tensor<16x64xf32>
  %t = kiln.tanh %a : tensor<16x64xf32>
  return %t : tensor<16x64xf32>
}

// -----

// A GEMM result that its consumer broadcasts, or moves (transpose), is
// not an epilogue: the GEMM keeps its own kernel.
// CHECK-LABEL: func.func @gemm_not_epilogue
func.func @gemm_not_epilogue(%x: tensor<16x32xf32>, %w: tensor<32x1xf32>, %y: tensor<16x8xf32>,
                             %v: tensor<32x16xf32>) -> (tensor<16x8xf32>, tensor<16x16xf32>) {
  // CHECK: %[[M:.+]] = kiln.kernel @fused_matmul(
  // CHECK: kiln.kernel @fused_add(%[[M]]
  %m = kiln.matmul %x, %w : tensor<16x32xf32>, tensor<32x1xf32> -> tensor<16x1xf32>
  %a = kiln.add %m, %y : tensor<16x1xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  // CHECK: %[[N:.+]] = kiln.kernel @fused_matmul(
  // CHECK: kiln.kernel @fused_exp_transpose(%[[N]]
  %n = kiln.matmul %x, %v : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
  %t = kiln.transpose %n {perm = array<i64: 1, 0>} : tensor<16x16xf32> -> tensor<16x16xf32>
  %e = kiln.exp %t : tensor<16x16xf32>
  return %a, %e : tensor<16x8xf32>, tensor<16x16xf32>
}

// -----

// Data movement fuses too: split + transpose of a QKV projection.
// CHECK-LABEL: func.func @movement
func.func @movement(%qkv: tensor<16x96xf32>) -> tensor<4x16x8xf32> {
  // CHECK: kiln.kernel @fused_slice_transpose(
  // CHECK-NOT: kiln.kernel
  %q = kiln.slice %qkv {starts = array<i64: 0, 32>, steps = array<i64: 1, 1>} : tensor<16x96xf32> -> tensor<16x32xf32>
  %r = kiln.reshape %q : tensor<16x32xf32> -> tensor<16x4x8xf32>
  %t = kiln.transpose %r {perm = array<i64: 1, 0, 2>} : tensor<16x4x8xf32> -> tensor<4x16x8xf32>
  return %t : tensor<4x16x8xf32>
}

// -----

// The attention NaN guard reads the softmax twice inside one group: the
// softmax becomes the group's anchor and the guard its epilogue.
// CHECK-LABEL: func.func @softmax_nan_guard
func.func @softmax_nan_guard(%s: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  // CHECK: kiln.kernel @fused_softmax_is_nan_where(
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: kiln.softmax
  // CHECK-NEXT: kiln.is_nan
  // CHECK-NEXT: kiln.where
  // CHECK-NEXT: kiln.yield
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %n = kiln.is_nan %p : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xi1>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %w = kiln.where %n, %z, %p : tensor<2x4x8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  return %w : tensor<2x4x8x8xf32>
}

// -----

// A softmax whose result is also read outside the group stays unfused.
// CHECK-LABEL: func.func @softmax_escapes
func.func @softmax_escapes(%s: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: %[[P:.+]] = kiln.softmax
  // CHECK: kiln.kernel @fused_exp(%[[P]])
  %p = kiln.softmax %s {axis = 1 : i64} : tensor<4x8xf32>
  %e = kiln.exp %p : tensor<4x8xf32>
  return %p, %e : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A reduction anchors a group its producers join (prologue); the consumers
// of its (broadcast) result form their own kernel.
// CHECK-LABEL: func.func @rms_norm
// NOPRO-LABEL: func.func @rms_norm
func.func @rms_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[R:.+]] = kiln.kernel @fused_reduce_pow(
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: kiln.pow
  // CHECK-NEXT: kiln.reduce <mean>
  // CHECK: kiln.kernel @fused_add_sqrt_reciprocal_mul(%[[R]],
  // NOPRO: kiln.kernel @fused_pow(
  // NOPRO: kiln.reduce <mean>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %sq = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m = kiln.reduce <mean> %sq {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = kiln.constant dense<1.0e-6> : tensor<f32>
  %a = kiln.add %m, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s = kiln.sqrt %a : tensor<4x1xf32>
  %r = kiln.reciprocal %s : tensor<4x1xf32>
  %y = kiln.mul %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A GEMM operand computed from two tensors stays a pointwise kernel: as a
// prologue, every tile would re-read both tensors.
// CHECK-LABEL: func.func @gemm_operand_sum
func.func @gemm_operand_sum(%a: tensor<16x32xf32>, %b: tensor<16x32xf32>, %w: tensor<32x8xf32>) -> tensor<16x8xf32> {
  // CHECK: %[[S:.+]] = kiln.kernel @fused_add(
  // CHECK: kiln.kernel @fused_matmul(%[[S]]
  %s = kiln.add %a, %b : tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
  %m = kiln.matmul %s, %w : tensor<16x32xf32>, tensor<32x8xf32> -> tensor<16x8xf32>
  return %m : tensor<16x8xf32>
}

// -----

// A group stops growing before it would read more than max-inputs-per-kernel
// values (each is a launch argument): with 2, the chain of adds over four
// tensors becomes three kernels of two operands each.
// CHECK-LABEL: func.func @bounded_kernel_inputs
// CHECK-COUNT-1: kiln.kernel
// CHECK-NOT: kiln.kernel
// INPUTS-LABEL: func.func @bounded_kernel_inputs
// INPUTS: %[[S1:.+]] = kiln.kernel @fused_add(%{{.+}}, %{{.+}}) :
// INPUTS: %[[S2:.+]] = kiln.kernel @fused_add(%[[S1]], %{{.+}}) :
// INPUTS: kiln.kernel @fused_add(%[[S2]], %{{.+}}) :
func.func @bounded_kernel_inputs(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>) -> tensor<8xf32> {
  %s1 = kiln.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %s2 = kiln.add %s1, %c : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %s3 = kiln.add %s2, %d : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %s3 : tensor<8xf32>
}

// -----

// A matmul with K = 1 (an outer product: a decode step's rotary angles,
// inverse frequencies x position) is a broadcast multiply: it fuses with the
// transpose and the concat after it into one kernel, where a GEMM kernel would
// have been its own launch. The operand ranks differ; batch dims broadcast.
// With GEMM prologues off it is still a multiply.
// CHECK-LABEL: func.func @outer_product
// CHECK: kiln.kernel @fused_cast_mul_transpose_concat(
// CHECK: kiln.mul %{{.+}}, %{{.+}} : tensor<4x1xf32>, tensor<1x1x16xf32> -> tensor<1x4x16xf32>
// CHECK-NOT: kiln.matmul
// NOGEMMPRO-LABEL: func.func @outer_product
// NOGEMMPRO-NOT: kiln.matmul
// NOGEMMPRO: kiln.mul %{{.+}}, %{{.+}} : tensor<4x1xf32>, tensor<1x1x16xf32> -> tensor<1x4x16xf32>
// A K of 2 stays a GEMM.
// CHECK-LABEL: func.func @not_outer_product
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : tensor<4x2xf32>, tensor<2x16xf32> -> tensor<4x16xf32>
func.func @outer_product(%inv: tensor<4x1xf32>, %pos: tensor<1x1x16xi64>) -> tensor<1x16x8xf32> {
  %p = kiln.cast %pos : tensor<1x1x16xi64> -> tensor<1x1x16xf32>
  %f = kiln.matmul %inv, %p : tensor<4x1xf32>, tensor<1x1x16xf32> -> tensor<1x4x16xf32>
  %t = kiln.transpose %f {perm = array<i64: 0, 2, 1>} : tensor<1x4x16xf32> -> tensor<1x16x4xf32>
  %e = kiln.concat %t, %t {axis = 2 : i64} : tensor<1x16x4xf32>, tensor<1x16x4xf32> -> tensor<1x16x8xf32>
  return %e : tensor<1x16x8xf32>
}
func.func @not_outer_product(%a: tensor<4x2xf32>, %b: tensor<2x16xf32>) -> tensor<4x16xf32> {
  %f = kiln.matmul %a, %b : tensor<4x2xf32>, tensor<2x16xf32> -> tensor<4x16xf32>
  return %f : tensor<4x16xf32>
}

// -----

// A group of cheap ops read by two pointwise groups (a generation step's
// rotary angles, read by the cos and the sin tables) joins them: one kernel
// with a result per consumer, each evaluating the shared ops per element.
// CHECK-LABEL: func.func @shared_angles
// CHECK: %[[K:.+]]:2 = kiln.kernel @fused_mul_cos_cast_sin(
// CHECK: kiln.yield %{{.+}}, %{{.+}} : tensor<1x16x8xf16>, tensor<1x16x8xf16>
// CHECK-NOT: kiln.kernel
// CHECK: return %[[K]]#0, %[[K]]#1
func.func @shared_angles(%inv: tensor<1x4x1xf32>, %pos: tensor<1x1x16xf32>) -> (tensor<1x16x8xf16>, tensor<1x16x8xf16>) {
  %f = kiln.mul %inv, %pos : tensor<1x4x1xf32>, tensor<1x1x16xf32> -> tensor<1x4x16xf32>
  %t = kiln.transpose %f {perm = array<i64: 0, 2, 1>} : tensor<1x4x16xf32> -> tensor<1x16x4xf32>
  %e = kiln.concat %t, %t {axis = 2 : i64} : tensor<1x16x4xf32>, tensor<1x16x4xf32> -> tensor<1x16x8xf32>
  %c = kiln.cos %e : tensor<1x16x8xf32>
  %ch = kiln.cast %c : tensor<1x16x8xf32> -> tensor<1x16x8xf16>
  %s = kiln.sin %e : tensor<1x16x8xf32>
  %sh = kiln.cast %s : tensor<1x16x8xf32> -> tensor<1x16x8xf16>
  return %ch, %sh : tensor<1x16x8xf16>, tensor<1x16x8xf16>
}

// -----

// Left as three kernels: the shared value is also a result of the function
// (it is stored anyway); the shared group computes an exponential (not
// cheap to evaluate once per consumer element).
// CHECK-LABEL: func.func @shared_value_returned
// CHECK-COUNT-3: kiln.kernel @
// CHECK-LABEL: func.func @shared_exp
// CHECK-COUNT-3: kiln.kernel @
func.func @shared_value_returned(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %m = kiln.mul %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %c = kiln.cos %m : tensor<8xf32>
  %s = kiln.sin %m : tensor<8xf32>
  return %m, %c, %s : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
func.func @shared_exp(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = kiln.exp %a : tensor<8xf32>
  %c = kiln.cos %e : tensor<8xf32>
  %s = kiln.sin %e : tensor<8xf32>
  return %c, %s : tensor<8xf32>, tensor<8xf32>
}

// -----

// Left apart: an op outside any group (a cumulative sum) reads the cos
// group's result and feeds the sin group, so one kernel holding both would
// need its own result as an input.
// CHECK-LABEL: func.func @reader_between_consumers
// CHECK: kiln.kernel @fused_mul(
// CHECK: kiln.kernel @fused_cos(
// CHECK: kiln.cumsum
// CHECK: kiln.kernel @fused_sin_add(
func.func @reader_between_consumers(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %m = kiln.mul %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %c = kiln.cos %m : tensor<8xf32>
  %cs = kiln.cumsum %c {axis = 0 : i64, exclusive = false, reverse = false} : tensor<8xf32>
  %s = kiln.sin %m : tensor<8xf32>
  %y = kiln.add %s, %cs : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Large tensors: three consumers of a sum of three inputs would read 9 inputs'
// worth where storing the sum and reading it back moves 7: left apart (four
// kernels). Two consumers of one input's cast would read 2 where the store
// and reads move 4: merged.
// CHECK-LABEL: func.func @large_shared_sum
// CHECK-COUNT-4: kiln.kernel @
// CHECK-NOT: kiln.kernel @
// CHECK-LABEL: func.func @large_shared_cast
// CHECK: kiln.kernel @fused_cast_cos_sin(
// CHECK-NOT: kiln.kernel @
func.func @large_shared_sum(%a: tensor<131072xf32>, %b: tensor<131072xf32>, %c: tensor<131072xf32>) -> (tensor<131072xf32>, tensor<131072xf32>, tensor<131072xf32>) {
  %s1 = kiln.add %a, %b : tensor<131072xf32>, tensor<131072xf32> -> tensor<131072xf32>
  %s = kiln.add %s1, %c : tensor<131072xf32>, tensor<131072xf32> -> tensor<131072xf32>
  %x = kiln.cos %s : tensor<131072xf32>
  %y = kiln.sin %s : tensor<131072xf32>
  %z = kiln.exp %s : tensor<131072xf32>
  return %x, %y, %z : tensor<131072xf32>, tensor<131072xf32>, tensor<131072xf32>
}
func.func @large_shared_cast(%a: tensor<131072xf16>) -> (tensor<131072xf32>, tensor<131072xf32>) {
  %f = kiln.cast %a : tensor<131072xf16> -> tensor<131072xf32>
  %x = kiln.cos %f : tensor<131072xf32>
  %y = kiln.sin %f : tensor<131072xf32>
  return %x, %y : tensor<131072xf32>, tensor<131072xf32>
}

// -----

// Readers that are only reshapes (views of the stored value) do not merge: a
// merged kernel would write the value once per view.
// CHECK-LABEL: func.func @two_views
// CHECK: kiln.kernel @fused_add(%{{.+}}, %{{.+}}) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-NOT: kiln.kernel
func.func @two_views(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x4xf32>, tensor<4x2xf32>) {
  %m = kiln.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %r1 = kiln.reshape %m : tensor<8xf32> -> tensor<2x4xf32>
  %r2 = kiln.reshape %m : tensor<8xf32> -> tensor<4x2xf32>
  return %r1, %r2 : tensor<2x4xf32>, tensor<4x2xf32>
}

// -----

// A decode step's rotary tables (cos and sin of position x inverse frequency, [1, 1, 1, 32]):
// each rotary that the KV cache append (keys) or the paged attention (query) reads gets its own
// copy of both tables' chains, which join the prologue: no table kernel, the position and the
// frequencies are the kernels' inputs. With max-ops-per-kernel 20 the copies (2 x 8 ops) and the
// prologue's views would not fit together: the table stays one kernel of two results.
// CHECK-LABEL: func.func @decode_rotary_tables
// CHECK-NOT: _cos
// CHECK: kiln.kernel @fused_kv_cache_append_rotary_slice_transpose(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6)
// CHECK: kiln.cos
// CHECK: kiln.sin
// CHECK: kiln.kernel @fused_paged_attention_rotary_slice_transpose(%arg0, %arg1, %arg2, %{{.+}}#0, %{{.+}}#1, %arg5, %arg6)
// CHECK: kiln.cos
// CHECK: kiln.sin
// ROOM-LABEL: func.func @decode_rotary_tables
// By default (recompute-rotary-tables=false, measured faster on the H200) the tables are that one
// kernel of two results as well.
// TABLES-LABEL: func.func @decode_rotary_tables
// TABLES: %[[T:.+]]:2 = kiln.kernel @fused_cast_mul_cos_sin(%arg1, %arg2)
// TABLES: kiln.kernel @fused_kv_cache_append_rotary_slice_transpose(%arg0, %[[T]]#0, %[[T]]#1,
// TABLES-NOT: kiln.cos
// TABLES: kiln.kernel @fused_paged_attention_rotary_slice_transpose(%arg0, %[[T]]#0, %[[T]]#1,
// ROOM: %[[T:.+]]:2 = kiln.kernel @fused_cast_mul_cos_sin(%arg1, %arg2)
// ROOM: kiln.kernel @fused_kv_cache_append_rotary_slice_transpose(%arg0, %[[T]]#0, %[[T]]#1,
// ROOM: kiln.kernel @fused_paged_attention_rotary_slice_transpose(%arg0, %[[T]]#0, %[[T]]#1,
func.func @decode_rotary_tables(%qkv: tensor<1x1x256xf16>, %pos: tensor<1x1xi64>, %inv: tensor<1x16x1xf32>,
                  %kc: tensor<4x2x16x32xf16>, %vc: tensor<4x2x16x32xf16>,
                  %table: tensor<1x4xi32>, %lens: tensor<1xi32>) -> tensor<1x1x4x32xf16> {
  %p0 = kiln.reshape %pos : tensor<1x1xi64> -> tensor<1x1x1xi64>
  %p1 = kiln.cast %p0 : tensor<1x1x1xi64> -> tensor<1x1x1xf32>
  %f = kiln.mul %inv, %p1 : tensor<1x16x1xf32>, tensor<1x1x1xf32> -> tensor<1x16x1xf32>
  %ft = kiln.transpose %f {perm = array<i64: 0, 2, 1>} : tensor<1x16x1xf32> -> tensor<1x1x16xf32>
  %ang = kiln.concat %ft, %ft {axis = 2 : i64} : tensor<1x1x16xf32>, tensor<1x1x16xf32> -> tensor<1x1x32xf32>
  %c32 = kiln.cos %ang : tensor<1x1x32xf32>
  %s32 = kiln.sin %ang : tensor<1x1x32xf32>
  %c16 = kiln.cast %c32 : tensor<1x1x32xf32> -> tensor<1x1x32xf16>
  %s16 = kiln.cast %s32 : tensor<1x1x32xf32> -> tensor<1x1x32xf16>
  %c = kiln.reshape %c16 : tensor<1x1x32xf16> -> tensor<1x1x1x32xf16>
  %s = kiln.reshape %s16 : tensor<1x1x32xf16> -> tensor<1x1x1x32xf16>
  %0 = kiln.slice %qkv {starts = array<i64: 0, 0, 128>, steps = array<i64: 1, 1, 1>} : tensor<1x1x256xf16> -> tensor<1x1x64xf16>
  %1 = kiln.slice %qkv {starts = array<i64: 0, 0, 192>, steps = array<i64: 1, 1, 1>} : tensor<1x1x256xf16> -> tensor<1x1x64xf16>
  %2 = kiln.reshape %0 : tensor<1x1x64xf16> -> tensor<1x1x2x32xf16>
  %3 = kiln.transpose %2 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x2x32xf16> -> tensor<1x2x1x32xf16>
  %4 = kiln.reshape %1 : tensor<1x1x64xf16> -> tensor<1x1x2x32xf16>
  %5 = kiln.transpose %4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x2x32xf16> -> tensor<1x2x1x32xf16>
  %6 = kiln.rotary %3, %c, %s : tensor<1x2x1x32xf16>, tensor<1x1x1x32xf16>, tensor<1x1x1x32xf16> -> tensor<1x2x1x32xf16>
  %kr, %vr = kiln.kv_cache_append %6, %5, %kc, %vc, %table, %lens : tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>
  %q0 = kiln.slice %qkv {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x1x256xf16> -> tensor<1x1x128xf16>
  %q1 = kiln.reshape %q0 : tensor<1x1x128xf16> -> tensor<1x1x4x32xf16>
  %q2 = kiln.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x4x32xf16> -> tensor<1x4x1x32xf16>
  %q3 = kiln.rotary %q2, %c, %s : tensor<1x4x1x32xf16>, tensor<1x1x1x32xf16>, tensor<1x1x1x32xf16> -> tensor<1x4x1x32xf16>
  %o = kiln.paged_attention %q3, %kr, %vr, %table, %lens {bshd_output = true, scale = 0.1767766922712326 : f64} : tensor<1x4x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<1x1x4x32xf16>
  return %o : tensor<1x1x4x32xf16>
}

// -----

// The cos table is also a result of the function: it is stored by its own kernel, and the
// prologues compute theirs.
// CHECK-LABEL: func.func @decode_rotary_table_returned
// CHECK: %[[C:.+]] = kiln.kernel @fused_cast_mul_cos_transpose(%arg1, %arg2)
// CHECK: kiln.kernel @fused_kv_cache_append_rotary_slice_transpose(%arg0, %arg1, %arg2,
// CHECK: kiln.kernel @fused_paged_attention_rotary_slice_transpose(%arg0, %arg1, %arg2,
// CHECK: return %{{.+}}, %[[C]]
func.func @decode_rotary_table_returned(%qkv: tensor<1x1x256xf16>, %pos: tensor<1x1xi64>, %inv: tensor<1x16x1xf32>,
                  %kc: tensor<4x2x16x32xf16>, %vc: tensor<4x2x16x32xf16>,
                  %table: tensor<1x4xi32>, %lens: tensor<1xi32>) -> (tensor<1x1x4x32xf16>, tensor<1x1x1x32xf16>) {
  %p0 = kiln.reshape %pos : tensor<1x1xi64> -> tensor<1x1x1xi64>
  %p1 = kiln.cast %p0 : tensor<1x1x1xi64> -> tensor<1x1x1xf32>
  %f = kiln.mul %inv, %p1 : tensor<1x16x1xf32>, tensor<1x1x1xf32> -> tensor<1x16x1xf32>
  %ft = kiln.transpose %f {perm = array<i64: 0, 2, 1>} : tensor<1x16x1xf32> -> tensor<1x1x16xf32>
  %ang = kiln.concat %ft, %ft {axis = 2 : i64} : tensor<1x1x16xf32>, tensor<1x1x16xf32> -> tensor<1x1x32xf32>
  %c32 = kiln.cos %ang : tensor<1x1x32xf32>
  %s32 = kiln.sin %ang : tensor<1x1x32xf32>
  %c16 = kiln.cast %c32 : tensor<1x1x32xf32> -> tensor<1x1x32xf16>
  %s16 = kiln.cast %s32 : tensor<1x1x32xf32> -> tensor<1x1x32xf16>
  %c = kiln.reshape %c16 : tensor<1x1x32xf16> -> tensor<1x1x1x32xf16>
  %s = kiln.reshape %s16 : tensor<1x1x32xf16> -> tensor<1x1x1x32xf16>
  %0 = kiln.slice %qkv {starts = array<i64: 0, 0, 128>, steps = array<i64: 1, 1, 1>} : tensor<1x1x256xf16> -> tensor<1x1x64xf16>
  %1 = kiln.slice %qkv {starts = array<i64: 0, 0, 192>, steps = array<i64: 1, 1, 1>} : tensor<1x1x256xf16> -> tensor<1x1x64xf16>
  %2 = kiln.reshape %0 : tensor<1x1x64xf16> -> tensor<1x1x2x32xf16>
  %3 = kiln.transpose %2 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x2x32xf16> -> tensor<1x2x1x32xf16>
  %4 = kiln.reshape %1 : tensor<1x1x64xf16> -> tensor<1x1x2x32xf16>
  %5 = kiln.transpose %4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x2x32xf16> -> tensor<1x2x1x32xf16>
  %6 = kiln.rotary %3, %c, %s : tensor<1x2x1x32xf16>, tensor<1x1x1x32xf16>, tensor<1x1x1x32xf16> -> tensor<1x2x1x32xf16>
  %kr, %vr = kiln.kv_cache_append %6, %5, %kc, %vc, %table, %lens : tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>
  %q0 = kiln.slice %qkv {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x1x256xf16> -> tensor<1x1x128xf16>
  %q1 = kiln.reshape %q0 : tensor<1x1x128xf16> -> tensor<1x1x4x32xf16>
  %q2 = kiln.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x4x32xf16> -> tensor<1x4x1x32xf16>
  %q3 = kiln.rotary %q2, %c, %s : tensor<1x4x1x32xf16>, tensor<1x1x1x32xf16>, tensor<1x1x1x32xf16> -> tensor<1x4x1x32xf16>
  %o = kiln.paged_attention %q3, %kr, %vr, %table, %lens {bshd_output = true, scale = 0.1767766922712326 : f64} : tensor<1x4x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<1x1x4x32xf16>
  return %o, %c : tensor<1x1x4x32xf16>, tensor<1x1x1x32xf16>
}
