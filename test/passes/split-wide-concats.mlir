// RUN: kiln-opt %s --split-input-file --kiln-split-wide-concats=max-inputs=2 | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-split-wide-concats | FileCheck %s --check-prefix=DEFAULT
// RUN: not kiln-opt %s --split-input-file --kiln-split-wide-concats=max-inputs=1 2>&1 | FileCheck %s --check-prefix=ONE
// ONE: kiln-split-wide-concats: max-inputs must be at least 2, got 1

// Five operands, at most two per concat: a balanced tree of three levels
// whose part types add up along the axis.
// CHECK-LABEL: func.func @five_operands
// CHECK-SAME: (%[[A:.+]]: tensor<1x4xf32>, %[[B:.+]]: tensor<2x4xf32>, %[[C:.+]]: tensor<1x4xf32>, %[[D:.+]]: tensor<1x4xf32>, %[[E:.+]]: tensor<3x4xf32>)
// CHECK: %[[AB:.+]] = kiln.concat %[[A]], %[[B]] {axis = 0 : i64} : tensor<1x4xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
// CHECK: %[[CD:.+]] = kiln.concat %[[C]], %[[D]] {axis = 0 : i64} : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
// CHECK: %[[ABCD:.+]] = kiln.concat %[[AB]], %[[CD]] {axis = 0 : i64} : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<5x4xf32>
// CHECK: %[[Y:.+]] = kiln.concat %[[ABCD]], %[[E]] {axis = 0 : i64} : tensor<5x4xf32>, tensor<3x4xf32> -> tensor<8x4xf32>
// CHECK: return %[[Y]]
// DEFAULT-LABEL: func.func @five_operands
// DEFAULT: kiln.concat %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {axis = 0 : i64}
func.func @five_operands(%a: tensor<1x4xf32>, %b: tensor<2x4xf32>, %c: tensor<1x4xf32>, %d: tensor<1x4xf32>, %e: tensor<3x4xf32>) -> tensor<8x4xf32> {
  %y = kiln.concat %a, %b, %c, %d, %e {axis = 0 : i64} : tensor<1x4xf32>, tensor<2x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<3x4xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// A concat that already fits is left alone; the axis is kept (here 1).
// CHECK-LABEL: func.func @narrow_concat
// CHECK: kiln.concat %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<2x3xi64>, tensor<2x5xi64> -> tensor<2x8xi64>
// CHECK-NOT: kiln.concat
func.func @narrow_concat(%a: tensor<2x3xi64>, %b: tensor<2x5xi64>) -> tensor<2x8xi64> {
  %y = kiln.concat %a, %b {axis = 1 : i64} : tensor<2x3xi64>, tensor<2x5xi64> -> tensor<2x8xi64>
  return %y : tensor<2x8xi64>
}

// -----

// The same value many times (a CSE'd fan-in) splits like distinct operands.
// CHECK-LABEL: func.func @repeated_operand
// CHECK-COUNT-2: kiln.concat %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<2x1xf32>, tensor<2x1xf32> -> tensor<2x2xf32>
// CHECK: kiln.concat %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x4xf32>
func.func @repeated_operand(%x: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %y = kiln.concat %x, %x, %x, %x {axis = 1 : i64} : tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
