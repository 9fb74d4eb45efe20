// Data-movement ops (compiler/onnx/OnnxMovement.cpp).
// RUN: kiln-compile %S/Inputs/movement.onnx --emit=graph --print-constants | FileCheck %s
// RUN: kiln-compile %S/Inputs/slice.onnx --emit=graph --print-constants | FileCheck %s --check-prefix=SLICE
// RUN: kiln-compile %S/Inputs/gather.onnx --shape ids=2x5 --emit=graph --print-constants | FileCheck %s --check-prefix=GATHER

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32> {kiln.name = "x"}, %[[SQ:[^:]+]]: tensor<3x3xf32> {kiln.name = "sq"})
// Reshape [0, -1]: 0 copies dim 0, -1 is inferred.
// CHECK: kiln.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<2x12xf32>
// Reshape with allowzero = 1.
// CHECK: kiln.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// Unsqueeze axes [-1, 0] index the result rank.
// CHECK: %[[UNSQ:.+]] = kiln.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<1x2x3x4x1xf32>
// Squeeze without axes drops all 1s; with axes [0] only dim 0.
// CHECK: kiln.reshape %[[UNSQ]] : tensor<1x2x3x4x1xf32> -> tensor<2x3x4xf32>
// CHECK: kiln.reshape %[[UNSQ]] : tensor<1x2x3x4x1xf32> -> tensor<2x3x4x1xf32>
// Flatten axis = -1.
// CHECK: kiln.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// Transpose: default perm reverses the dims.
// CHECK: kiln.transpose %[[X]] {perm = array<i64: 2, 1, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK: kiln.transpose %[[X]] {perm = array<i64: 1, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK: kiln.concat %[[X]], %[[X]] {axis = 2 : i64} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x8xf32>
// Expand of a constant folds; the shape broadcasts both ways ([2,1] with [3,1,4]).
// CHECK: kiln.constant dense<{{.*}}> : tensor<3x2x4xf32>
// Tile = reshape + expand + reshape.
// CHECK: %[[T0:.+]] = kiln.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<1x2x1x3x1x4xf32>
// CHECK: %[[T1:.+]] = kiln.expand %[[T0]] : tensor<1x2x1x3x1x4xf32> -> tensor<1x2x2x3x1x4xf32>
// CHECK: kiln.reshape %[[T1]] : tensor<1x2x2x3x1x4xf32> -> tensor<2x6x4xf32>
// Trilu: a constant mask and kiln.where (upper, k = 0; lower, k = 1).
// CHECK: %[[TRIU:.+]] = kiln.constant dense<{{\[}}[true, true, true], [false, true, true], [false, false, true]]> : tensor<3x3xi1>
// CHECK: kiln.where %[[TRIU]], %[[SQ]], %{{.+}} : tensor<3x3xi1>, tensor<3x3xf32>, tensor<f32> -> tensor<3x3xf32>
// CHECK: %[[TRIL:.+]] = kiln.constant dense<{{\[}}[true, true, false], [true, true, true], [true, true, true]]> : tensor<3x3xi1>
// CHECK: kiln.where %[[TRIL]], %[[SQ]]

// Slice normalization: negative starts, INT64_MAX / INT64_MIN ends, negative
// steps, clamping; Split with opset-18 num_outputs (7 = 3 + 3 + 1) and sizes.
// SLICE-LABEL: func.func @main(
// SLICE-SAME: %[[X:[^:]+]]: tensor<2x3x7xf32>
// SLICE: kiln.slice %[[X]] {starts = array<i64: 0, 1, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x3x7xf32> -> tensor<1x2x7xf32>
// SLICE: kiln.slice %[[X]] {starts = array<i64: 0, 0, 6>, steps = array<i64: 1, 1, -2>} : tensor<2x3x7xf32> -> tensor<2x3x4xf32>
// SLICE: kiln.slice %[[X]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x3x7xf32> -> tensor<2x3x6xf32>
// SLICE: kiln.slice %[[X]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x3x7xf32> -> tensor<2x3x3xf32>
// SLICE: kiln.slice %[[X]] {starts = array<i64: 0, 0, 3>, steps = array<i64: 1, 1, 1>} : tensor<2x3x7xf32> -> tensor<2x3x3xf32>
// SLICE: kiln.slice %[[X]] {starts = array<i64: 0, 0, 6>, steps = array<i64: 1, 1, 1>} : tensor<2x3x7xf32> -> tensor<2x3x1xf32>
// SLICE: kiln.slice %[[X]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x3x7xf32> -> tensor<2x3x3xf32>
// SLICE: kiln.slice %[[X]] {starts = array<i64: 0, 0, 3>, steps = array<i64: 1, 1, 1>} : tensor<2x3x7xf32> -> tensor<2x3x4xf32>
// Steps INT64_MAX (from 0) and INT64_MIN (from -1) take one element each.
// SLICE: kiln.slice %[[X]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x3x7xf32> -> tensor<2x3x1xf32>
// SLICE: kiln.slice %[[X]] {starts = array<i64: 0, 0, 6>, steps = array<i64: 1, 1, 1>} : tensor<2x3x7xf32> -> tensor<2x3x1xf32>

// GATHER-LABEL: func.func @main(
// GATHER-SAME: %[[IDS:[^:]+]]: tensor<2x5xi64> {kiln.name = "ids"}, %[[X:[^:]+]]: tensor<2x3x4xf32> {kiln.name = "x"})
// GATHER: %[[TABLE:.+]] = kiln.constant {{.*}} : tensor<10x2xf32>
// GATHER: kiln.gather %[[TABLE]], %[[IDS]] {axis = 0 : i64} : tensor<10x2xf32>, tensor<2x5xi64> -> tensor<2x5x2xf32>
// GATHER: kiln.gather %[[X]], %{{.+}} {axis = 2 : i64} : tensor<2x3x4xf32>, tensor<2xi32> -> tensor<2x3x2xf32>
// GATHER: kiln.gather_elements %[[X]], %{{.+}} {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<2x1x4xi64> -> tensor<2x1x4xf32>
// GATHER: kiln.gather_nd %[[X]], %{{.+}} {batch_dims = 0 : i64} : tensor<2x3x4xf32>, tensor<1x2xi64> -> tensor<1x4xf32>
// GATHER: kiln.gather_nd %[[X]], %{{.+}} {batch_dims = 1 : i64} : tensor<2x3x4xf32>, tensor<2x1xi64> -> tensor<2x4xf32>
