// Constant, Shape, Size, ConstantOfShape, Range, CumSum (compiler/onnx/OnnxShapeOps.cpp).
// After --shape specialization the whole shape subgraph folds at import.
// RUN: kiln-compile %S/Inputs/shape_ops.onnx --shape x=2x5x4 --emit=graph | FileCheck %s
// RUN: kiln-compile %S/Inputs/cumsum.onnx --shape x=2x3 --emit=graph | FileCheck %s --check-prefix=CUMSUM

// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<2x5x4xf32> {kiln.name = "x"}
// CHECK-NOT: kiln.shape
// CHECK-NOT: kiln.range
// CHECK-NOT: kiln.cumsum
// Shape, Shape(start=1, end=-1), Size.
// CHECK: %[[SHAPE:.+]] = kiln.constant dense<[2, 5, 4]> : tensor<3xi64>
// CHECK: %[[MID:.+]] = kiln.constant dense<5> : tensor<1xi64>
// CHECK: %[[SIZE:.+]] = kiln.constant dense<40> : tensor<i64>
// ConstantOfShape with an int64 value, and with the default float 0.
// CHECK: %[[ONES:.+]] = kiln.constant dense<1> : tensor<2x5x4xi64>
// CHECK: %[[ZEROS:.+]] = kiln.constant dense<0.000000e+00> : tensor<5xf32>
// Range(0, shape[1], 1) and CumSum (plain, exclusive + reverse).
// CHECK: %[[RANGE:.+]] = kiln.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK: %[[CS:.+]] = kiln.constant dense<[0, 1, 3, 6, 10]> : tensor<5xi64>
// CHECK: %[[CSR:.+]] = kiln.constant dense<[10, 9, 7, 4, 0]> : tensor<5xi64>
// Constant value_float / value_floats.
// CHECK: %[[HALF:.+]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[FLOATS:.+]] = kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: return %[[SHAPE]], %[[MID]], %[[SIZE]], %[[ONES]], %[[ZEROS]], %[[RANGE]], %[[CS]], %[[CSR]], %[[HALF]], %[[FLOATS]]

// CumSum of a runtime tensor stays; the constant axis -1 is normalized.
// CUMSUM-LABEL: func.func @main(
// CUMSUM-SAME: %[[X:.+]]: tensor<2x3xi64>
// CUMSUM: kiln.cumsum %[[X]] {axis = 1 : i64, exclusive = false, reverse = false} : tensor<2x3xi64>
