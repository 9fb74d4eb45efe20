// RUN: kiln-opt %s --split-input-file --kiln-assign-precision=precision=fp16 | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-assign-precision=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: kiln-opt %s --split-input-file --kiln-assign-precision=precision=fp32 | FileCheck %s --check-prefix=FP32

// Arguments and results keep their f32 types through casts at the edges;
// everything inside is stored in the new type.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>) -> tensor<2x4xf32>
// CHECK-SAME: kiln.precision = #kiln.precision<fp16>
// CHECK-NEXT: %[[XH:.+]] = kiln.cast %[[X]] {saturate_finite} : tensor<2x8xf32> -> tensor<2x8xf16>
// CHECK-NEXT: %[[W:.+]] = kiln.constant dense<{{.+}}> : tensor<8x4xf16>
// CHECK-NEXT: %[[MM:.+]] = kiln.matmul %[[XH]], %[[W]] : tensor<2x8xf16>, tensor<8x4xf16> -> tensor<2x4xf16>
// CHECK-NEXT: %[[Y:.+]] = kiln.cast %[[MM]] : tensor<2x4xf16> -> tensor<2x4xf32>
// CHECK-NEXT: return %[[Y]]
// BF16-LABEL: func.func @linear
// BF16: kiln.matmul %{{.+}}, %{{.+}} : tensor<2x8xbf16>, tensor<8x4xbf16> -> tensor<2x4xbf16>
// FP32-LABEL: func.func @linear
// FP32-SAME: kiln.precision = #kiln.precision<fp32>
// FP32-NEXT: kiln.constant dense<{{.+}}> : tensor<8x4xf32>
func.func @linear(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = kiln.constant dense<0.5> : tensor<8x4xf32>
  %mm = kiln.matmul %x, %w : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return %mm : tensor<2x4xf32>
}

// -----

// Constants outside the type's range saturate to its largest finite value
// (an additive mask of -1e12 or the f32 minimum never becomes -inf); true
// infinities stay infinite. fp16's largest is 65504; bf16 holds 1e12 itself.
// CHECK-LABEL: func.func @mask_constants
// CHECK-DAG: kiln.constant dense<-6.550400e+04> : tensor<f16>
// CHECK-DAG: kiln.constant dense<6.550400e+04> : tensor<f16>
// CHECK-DAG: kiln.constant dense<0xFC00> : tensor<f16>
// BF16-LABEL: func.func @mask_constants
// BF16-DAG: kiln.constant dense<-1.000730e+12> : tensor<bf16>
// BF16-DAG: kiln.constant dense<-3.389530e+38> : tensor<bf16>
// BF16-DAG: kiln.constant dense<0xFF80> : tensor<bf16>
func.func @mask_constants(%s: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %big = kiln.constant dense<-1.0e12> : tensor<f32>
  %min = kiln.constant dense<-3.40282347e+38> : tensor<f32>
  %inf = kiln.constant dense<0xFF800000> : tensor<f32>
  %a = kiln.add %s, %big : tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  %b = kiln.add %s, %min : tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  %c = kiln.add %s, %inf : tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  %pos = kiln.constant dense<1.0e5> : tensor<f32>
  %d = kiln.mul %a, %pos : tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  return %d, %b, %c : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Integer tensors and casts from them are untouched except for the f32
// result type (such a cast now stores 16 bits, so it saturates); a dense
// (non-splat) payload converts element by element with round-to-nearest-even
// (1 + 2^-11 is a tie and rounds to 1; 1 + 3*2^-11 rounds up to 1 + 2^-9).
// CHECK-LABEL: func.func @ints_and_dense
// CHECK-DAG: kiln.cast %{{.+}} {saturate_finite} : tensor<4xi64> -> tensor<4xf16>
// CHECK-DAG: kiln.constant dense<[1.000000e+00, 1.001950e+00, -2.000000e+00, 0.000000e+00]> : tensor<4xf16>
func.func @ints_and_dense(%ids: tensor<4xi64>) -> tensor<4xf32> {
  %f = kiln.cast %ids : tensor<4xi64> -> tensor<4xf32>
  %c = kiln.constant dense<[1.00048828125, 1.00146484375, -2.0, 0.0]> : tensor<4xf32>
  %y = kiln.add %f, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// An argument returned as it is keeps its exact f32 value (no round trip
// through 16 bits); declarations have no body and are left alone.
// CHECK-LABEL: func.func @passthrough
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[H:.+]] = kiln.cast %[[X]] {saturate_finite} : tensor<4xf32> -> tensor<4xf16>
// CHECK: %[[N:.+]] = kiln.neg %[[H]]
// CHECK: %[[Y:.+]] = kiln.cast %[[N]] : tensor<4xf16> -> tensor<4xf32>
// CHECK: return %[[X]], %[[Y]]
// CHECK-LABEL: func.func private @declaration
func.func @passthrough(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = kiln.neg %x : tensor<4xf32>
  return %x, %n : tensor<4xf32>, tensor<4xf32>
}
func.func private @declaration(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// The model's own casts: the cast of the argument to bf16 reads the f32
// argument itself (one rounding from the exact value, no entry cast: through
// an f16 copy it would round twice) and keeps ONNX Cast's rounding (no
// attribute); the cast back to f32, now a cast to the storage type,
// saturates like a store; nothing folds the pair away.
// CHECK-LABEL: func.func @model_casts
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[B:.+]] = kiln.cast %[[X]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT: %[[Y:.+]] = kiln.cast %[[B]] {saturate_finite} : tensor<4xbf16> -> tensor<4xf16>
// CHECK-NEXT: %[[R:.+]] = kiln.cast %[[Y]] : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT: return %[[R]]
// With bf16 storage the cast back becomes a bf16 -> bf16 identity (the
// canonicalizer removes it; only equal types fold).
// BF16-LABEL: func.func @model_casts
// BF16-NEXT: %[[B:.+]] = kiln.cast %{{.+}} : tensor<4xf32> -> tensor<4xbf16>
// BF16-NEXT: %[[Y:.+]] = kiln.cast %[[B]] {saturate_finite} : tensor<4xbf16> -> tensor<4xbf16>
// BF16-NEXT: %[[R:.+]] = kiln.cast %[[Y]] : tensor<4xbf16> -> tensor<4xf32>
// BF16-NEXT: return %[[R]]
// FP32-LABEL: func.func @model_casts
// FP32-NEXT: kiln.cast %{{.+}} : tensor<4xf32> -> tensor<4xbf16>
// FP32-NEXT: kiln.cast %{{.+}} : tensor<4xbf16> -> tensor<4xf32>
func.func @model_casts(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = kiln.cast %x : tensor<4xf32> -> tensor<4xbf16>
  %y = kiln.cast %b : tensor<4xbf16> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// An argument read by a cast and by other ops: the others read the entry
// cast's 16-bit copy, the cast (to int64 here) the exact f32 value.
// CHECK-LABEL: func.func @argument_cast_and_use
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[H:.+]] = kiln.cast %[[X]] {saturate_finite} : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT: %[[I:.+]] = kiln.cast %[[X]] : tensor<4xf32> -> tensor<4xi64>
// CHECK-NEXT: %[[N:.+]] = kiln.neg %[[H]] : tensor<4xf16>
func.func @argument_cast_and_use(%x: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>) {
  %i = kiln.cast %x : tensor<4xf32> -> tensor<4xi64>
  %n = kiln.neg %x : tensor<4xf32>
  return %i, %n : tensor<4xi64>, tensor<4xf32>
}

// -----

// Rotary angles stay f32: cos and sin read position x inverse frequency
// computed in f32 from the f32 cast of the integer positions and the f32
// frequencies (at position 2048 an f16 angle is off by up to 1 rad); cos and
// sin round once, where their results are used. A constant the slice shares
// with the rest of the graph is converted for the others (a copy).
// CHECK-LABEL: func.func @rotary_angles
// CHECK-SAME: (%[[POS:.+]]: tensor<1x16xi64>, %[[X:.+]]: tensor<1x16x8xf32>)
// CHECK: %[[XH:.+]] = kiln.cast %[[X]] {saturate_finite} : tensor<1x16x8xf32> -> tensor<1x16x8xf16>
// CHECK: %[[INV:.+]] = kiln.constant dense<{{.+}}> : tensor<4x1xf32>
// CHECK: %[[P:.+]] = kiln.cast %[[POS]] : tensor<1x16xi64> -> tensor<1x16xf32>
// CHECK: %[[P1:.+]] = kiln.reshape %[[P]] : tensor<1x16xf32> -> tensor<1x1x16xf32>
// CHECK: %[[F:.+]] = kiln.matmul %[[INV]], %[[P1]] : tensor<4x1xf32>, tensor<1x1x16xf32> -> tensor<1x4x16xf32>
// CHECK: %[[T:.+]] = kiln.transpose %[[F]] {{.+}} -> tensor<1x16x4xf32>
// CHECK: %[[ONE:.+]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[ONEH:.+]] = kiln.constant dense<1.000000e+00> : tensor<f16>
// CHECK: %[[S:.+]] = kiln.mul %[[T]], %[[ONE]] : tensor<1x16x4xf32>, tensor<f32> -> tensor<1x16x4xf32>
// CHECK: %[[E:.+]] = kiln.concat %[[S]], %[[S]] {{.+}} -> tensor<1x16x8xf32>
// CHECK: %[[C:.+]] = kiln.cos %[[E]] : tensor<1x16x8xf32>
// CHECK: %[[CH:.+]] = kiln.cast %[[C]] {saturate_finite} : tensor<1x16x8xf32> -> tensor<1x16x8xf16>
// CHECK: %[[SN:.+]] = kiln.sin %[[E]] : tensor<1x16x8xf32>
// CHECK: %[[SH:.+]] = kiln.cast %[[SN]] {saturate_finite} : tensor<1x16x8xf32> -> tensor<1x16x8xf16>
// CHECK: %[[XC:.+]] = kiln.mul %[[XH]], %[[CH]] : tensor<1x16x8xf16>, tensor<1x16x8xf16> -> tensor<1x16x8xf16>
// CHECK: %[[XS:.+]] = kiln.mul %[[XH]], %[[SH]] : tensor<1x16x8xf16>, tensor<1x16x8xf16> -> tensor<1x16x8xf16>
// CHECK: %[[Y:.+]] = kiln.add %[[XC]], %[[XS]] : tensor<1x16x8xf16>, tensor<1x16x8xf16> -> tensor<1x16x8xf16>
// CHECK: kiln.mul %[[Y]], %[[ONEH]] : tensor<1x16x8xf16>, tensor<f16> -> tensor<1x16x8xf16>
// BF16-LABEL: func.func @rotary_angles
// BF16: kiln.cos %{{.+}} : tensor<1x16x8xf32>
// BF16: kiln.cast %{{.+}} {saturate_finite} : tensor<1x16x8xf32> -> tensor<1x16x8xbf16>
func.func @rotary_angles(%pos: tensor<1x16xi64>, %x: tensor<1x16x8xf32>) -> tensor<1x16x8xf32> {
  %inv = kiln.constant dense<[[1.0], [0.1], [0.01], [0.001]]> : tensor<4x1xf32>
  %p = kiln.cast %pos : tensor<1x16xi64> -> tensor<1x16xf32>
  %p1 = kiln.reshape %p : tensor<1x16xf32> -> tensor<1x1x16xf32>
  %f = kiln.matmul %inv, %p1 : tensor<4x1xf32>, tensor<1x1x16xf32> -> tensor<1x4x16xf32>
  %t = kiln.transpose %f {perm = array<i64: 0, 2, 1>} : tensor<1x4x16xf32> -> tensor<1x16x4xf32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s = kiln.mul %t, %one : tensor<1x16x4xf32>, tensor<f32> -> tensor<1x16x4xf32>
  %e = kiln.concat %s, %s {axis = 2 : i64} : tensor<1x16x4xf32>, tensor<1x16x4xf32> -> tensor<1x16x8xf32>
  %c = kiln.cos %e : tensor<1x16x8xf32>
  %sn = kiln.sin %e : tensor<1x16x8xf32>
  %xc = kiln.mul %x, %c : tensor<1x16x8xf32>, tensor<1x16x8xf32> -> tensor<1x16x8xf32>
  %xs = kiln.mul %x, %sn : tensor<1x16x8xf32>, tensor<1x16x8xf32> -> tensor<1x16x8xf32>
  %y = kiln.add %xc, %xs : tensor<1x16x8xf32>, tensor<1x16x8xf32> -> tensor<1x16x8xf32>
  %z = kiln.mul %y, %one : tensor<1x16x8xf32>, tensor<f32> -> tensor<1x16x8xf32>
  return %z : tensor<1x16x8xf32>
}

// -----

// An f32 argument that an angle reads: the angle reads the argument itself,
// the other ops the entry cast's copy. The model's own cast of cos to f32
// (an identity) reads the f32 cosine as it is and stores it in f16.
// CHECK-LABEL: func.func @argument_angle
// CHECK-SAME: (%[[A:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[AH:.+]] = kiln.cast %[[A]] {saturate_finite} : tensor<8xf32> -> tensor<8xf16>
// CHECK-NEXT: %[[C:.+]] = kiln.cos %[[A]] : tensor<8xf32>
// CHECK-NEXT: %[[CH:.+]] = kiln.cast %[[C]] {saturate_finite} : tensor<8xf32> -> tensor<8xf16>
// CHECK-NEXT: kiln.add %[[CH]], %[[AH]] : tensor<8xf16>, tensor<8xf16> -> tensor<8xf16>
func.func @argument_angle(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = kiln.cos %a : tensor<8xf32>
  %c2 = kiln.cast %c : tensor<8xf32> -> tensor<8xf32>
  %y = kiln.add %c2, %a : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %y, %c2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A float value cast to an integer (a relative-position bucket: log of the
// distance, scaled, truncated) is computed in f32: in f16 the scaled log can
// round across an integer and pick another bucket.
// CHECK-LABEL: func.func @index_from_float
// CHECK: %[[D:.+]] = kiln.cast %{{.+}} : tensor<16xi64> -> tensor<16xf32>
// CHECK: %[[L:.+]] = kiln.log %[[D]] : tensor<16xf32>
// CHECK: %[[S:.+]] = kiln.mul %[[L]], %{{.+}} : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
// CHECK: kiln.cast %[[S]] : tensor<16xf32> -> tensor<16xi64>
func.func @index_from_float(%d: tensor<16xi64>) -> tensor<16xi64> {
  %f = kiln.cast %d : tensor<16xi64> -> tensor<16xf32>
  %l = kiln.log %f : tensor<16xf32>
  %k = kiln.constant dense<3.7> : tensor<f32>
  %s = kiln.mul %l, %k : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %i = kiln.cast %s : tensor<16xf32> -> tensor<16xi64>
  return %i : tensor<16xi64>
}

// -----

// A slice that reaches a weight (more than 65536 elements) is part of the
// network: it is stored in the narrow type as before (sin of x W).
// CHECK-LABEL: func.func @weight_in_slice
// CHECK: kiln.constant dense<{{.+}}> : tensor<256x257xf16>
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : tensor<2x256xf16>, tensor<256x257xf16> -> tensor<2x257xf16>
// CHECK: kiln.sin %{{.+}} : tensor<2x257xf16>
func.func @weight_in_slice(%x: tensor<2x256xf32>) -> tensor<2x257xf32> {
  %w = kiln.constant dense<0.25> : tensor<256x257xf32>
  %mm = kiln.matmul %x, %w : tensor<2x256xf32>, tensor<256x257xf32> -> tensor<2x257xf32>
  %s = kiln.sin %mm : tensor<2x257xf32>
  return %s : tensor<2x257xf32>
}

// -----

// A slice that reaches a GEMM contracting over K > 1 is the network (a SIREN's
// sin(x W)), whatever the size of W: stored narrow. A large splat constant is
// not a weight: the angle keeps f32.
// CHECK-LABEL: func.func @small_network_in_slice
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : tensor<2x16xf16>, tensor<16x16xf16> -> tensor<2x16xf16>
// CHECK: kiln.sin %{{.+}} : tensor<2x16xf16>
// CHECK-LABEL: func.func @splat_scale
// CHECK: kiln.constant dense<2.000000e+00> : tensor<70000xf32>
// CHECK: kiln.mul %{{.+}}, %{{.+}} : tensor<70000xf32>, tensor<70000xf32> -> tensor<70000xf32>
// CHECK: kiln.sin %{{.+}} : tensor<70000xf32>
func.func @small_network_in_slice(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %w = kiln.constant dense<0.25> : tensor<16x16xf32>
  %mm = kiln.matmul %x, %w : tensor<2x16xf32>, tensor<16x16xf32> -> tensor<2x16xf32>
  %s = kiln.sin %mm : tensor<2x16xf32>
  return %s : tensor<2x16xf32>
}
func.func @splat_scale(%pos: tensor<70000xi64>) -> tensor<70000xf32> {
  %p = kiln.cast %pos : tensor<70000xi64> -> tensor<70000xf32>
  %two = kiln.constant dense<2.0> : tensor<70000xf32>
  %a = kiln.mul %p, %two : tensor<70000xf32>, tensor<70000xf32> -> tensor<70000xf32>
  %s = kiln.sin %a : tensor<70000xf32>
  return %s : tensor<70000xf32>
}
