// MatMul, Gemm, Softmax, LayerNormalization, reductions (compiler/onnx/OnnxMath.cpp).
// RUN: kiln-compile %S/Inputs/math.onnx --emit=graph --print-constants | FileCheck %s
// RUN: kiln-compile %S/Inputs/layernorm_mean.onnx --emit=graph --print-constants | FileCheck %s --check-prefix=LN-MEAN
// RUN: kiln-compile %S/Inputs/reduce18.onnx --emit=graph --print-constants | FileCheck %s --check-prefix=R18
// RUN: kiln-compile %S/Inputs/reduce13.onnx --emit=graph --print-constants | FileCheck %s --check-prefix=R13

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4xf32> {kiln.name = "a"}, %[[V:[^:]+]]: tensor<4xf32> {kiln.name = "v"}, %[[M:[^:]+]]: tensor<3x4xf32> {kiln.name = "m"}, %[[MT:[^:]+]]: tensor<4x3xf32> {kiln.name = "mt"})
// CHECK: %[[W:.+]] = kiln.constant dense<1.000000e+00> : tensor<4x5xf32>
// CHECK: kiln.matmul %[[A]], %[[W]] : tensor<2x3x4xf32>, tensor<4x5xf32> -> tensor<2x3x5xf32>
// A 1-D lhs becomes [1, K] and the 1 is dropped from the result.
// CHECK: %[[V2:.+]] = kiln.reshape %[[V]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK: %[[MV:.+]] = kiln.matmul %[[V2]], %[[W]] : tensor<1x4xf32>, tensor<4x5xf32> -> tensor<1x5xf32>
// CHECK: kiln.reshape %[[MV]] : tensor<1x5xf32> -> tensor<5xf32>
// A 1-D rhs becomes [K, 1] (a constant here, so the reshape folds).
// CHECK: %[[U:.+]] = kiln.constant dense<1.000000e+00> : tensor<4x1xf32>
// CHECK: %[[AU:.+]] = kiln.matmul %[[A]], %[[U]] : tensor<2x3x4xf32>, tensor<4x1xf32> -> tensor<2x3x1xf32>
// CHECK: kiln.reshape %[[AU]] : tensor<2x3x1xf32> -> tensor<2x3xf32>
// Gemm transB on a constant weight folds; alpha = 2 multiplies; beta * C folds.
// CHECK: %[[WT:.+]] = kiln.constant dense<{{.*}}> : tensor<4x5xf32>
// CHECK: %[[G:.+]] = kiln.matmul %[[M]], %[[WT]] : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
// CHECK: %[[ALPHA:.+]] = kiln.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[GA:.+]] = kiln.mul %[[G]], %[[ALPHA]] : tensor<3x5xf32>, tensor<f32> -> tensor<3x5xf32>
// CHECK: %[[C:.+]] = kiln.constant dense<5.000000e-01> : tensor<5xf32>
// CHECK: kiln.add %[[GA]], %[[C]] : tensor<3x5xf32>, tensor<5xf32> -> tensor<3x5xf32>
// Gemm transA on a runtime operand is a kiln.transpose.
// CHECK: %[[AT:.+]] = kiln.transpose %[[MT]] {perm = array<i64: 1, 0>} : tensor<4x3xf32> -> tensor<3x4xf32>
// CHECK: kiln.matmul %[[AT]], %[[W]]
// CHECK: kiln.softmax %[[A]] {axis = 2 : i64} : tensor<2x3x4xf32>
// CHECK: kiln.layer_norm %[[A]], %{{.+}}, %{{.+}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
// CHECK: kiln.layer_norm %[[A]], %{{[^,]+}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>

// Opset 18: axes are an operand; no axes reduces all (or is a no-op with
// noop_with_empty_axes).
// R18-LABEL: func.func @main(
// R18-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>
// R18: kiln.reduce <mean> %[[X]] {axes = array<i64: 2>, keep_dims = true} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// R18: kiln.reduce <sum> %[[X]] {axes = array<i64: 0, 1>, keep_dims = false} : tensor<2x3x4xf32> -> tensor<4xf32>
// R18: kiln.reduce <max> %[[X]] {axes = array<i64: 0, 1, 2>, keep_dims = false} : tensor<2x3x4xf32> -> tensor<f32>
// R18: return {{.*}}, %[[X]] :

// Opset 13: ReduceMean takes an `axes` attribute, ReduceSum an operand.
// R13-LABEL: func.func @main(
// R13: kiln.reduce <mean> %{{.+}} {axes = array<i64: 1>, keep_dims = true} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// R13: kiln.reduce <sum> %{{.+}} {axes = array<i64: 2>, keep_dims = true} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>

// LayerNormalization's optional Mean output (used here; InvStdDev is not, so it
// is not computed) comes from a mean reduction over the normalized axes, in
// float32; Y stays one kiln.layer_norm.
// LN-MEAN: %[[M:.+]] = kiln.reduce <mean> %arg0 {axes = array<i64: 1>, keep_dims = true} : tensor<2x3xf32> -> tensor<2x1xf32>
// LN-MEAN-NOT: kiln.sqrt
// LN-MEAN: %[[Y:.+]] = kiln.layer_norm %arg0
// LN-MEAN: return %[[Y]], %[[M]]
