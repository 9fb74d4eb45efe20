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
