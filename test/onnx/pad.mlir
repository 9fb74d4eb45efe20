// ONNX Pad (compiler/onnx/OnnxMovement.cpp): negative pads crop with one kiln.slice; constant
// mode concatenates the fill value expanded to each pad block; edge, reflect and wrap gather
// each padded axis with a constant index table. Values against onnxruntime (and numpy.pad for
// pads wider than the axis): check_import_numerics.py --pad-einsum and small_models_test.py.

// RUN: kiln-compile %S/Inputs/pad.onnx --emit=graph --print-constants | FileCheck %s
// RUN: kiln-compile %S/Inputs/pad_opset7.onnx --emit=graph --print-constants | FileCheck %s --check-prefix=OPSET7
// RUN: kiln-compile %S/Inputs/pad_opset24.onnx --emit=graph --print-constants | FileCheck %s --check-prefix=OPSET24
// RUN: kiln-compile %S/Inputs/pad_wide.onnx --emit=graph --print-constants | FileCheck %s --check-prefix=WIDE

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32> {kiln.name = "x"}, %[[V:[^:]+]]: tensor<f32> {kiln.name = "v"})
// Constant 1.5, pads [0, 1, 2, 1, 0, -1]: the -1 crops dim 2's end, then one concat per axis.
// CHECK: %[[CROP:.+]] = kiln.slice %[[X]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x3x4xf32> -> tensor<2x3x3xf32>
// CHECK: %[[F0:.+]] = kiln.constant dense<1.500000e+00> : tensor<1x3x3xf32>
// CHECK: %[[C0:.+]] = kiln.concat %[[CROP]], %[[F0]] {axis = 0 : i64} : tensor<2x3x3xf32>, tensor<1x3x3xf32> -> tensor<3x3x3xf32>
// CHECK: %[[F1:.+]] = kiln.constant dense<1.500000e+00> : tensor<3x1x3xf32>
// CHECK: %[[C1:.+]] = kiln.concat %[[F1]], %[[C0]] {axis = 1 : i64} : tensor<3x1x3xf32>, tensor<3x3x3xf32> -> tensor<3x4x3xf32>
// CHECK: %[[F2:.+]] = kiln.constant dense<1.500000e+00> : tensor<3x4x2xf32>
// CHECK: %[[CONSTANT:.+]] = kiln.concat %[[F2]], %[[C1]] {axis = 2 : i64} : tensor<3x4x2xf32>, tensor<3x4x3xf32> -> tensor<3x4x5xf32>
// Without constant_value the fill is 0.
// CHECK: kiln.constant dense<0.000000e+00> : tensor<1x3x4xf32>
// CHECK: %[[ZERO:.+]] = kiln.concat {{.*}} {axis = 2 : i64} : tensor<3x3x4xf32>, tensor<3x3x2xf32> -> tensor<3x3x6xf32>
// A run-time constant_value is expanded to the pad blocks.
// CHECK: %[[V0:.+]] = kiln.reshape %[[V]] : tensor<f32> -> tensor<1x1x1xf32>
// CHECK: %[[E0:.+]] = kiln.expand %[[V0]] : tensor<1x1x1xf32> -> tensor<1x3x4xf32>
// CHECK: %[[R0:.+]] = kiln.concat %[[E0]], %[[X]] {axis = 0 : i64} : tensor<1x3x4xf32>, tensor<2x3x4xf32> -> tensor<3x3x4xf32>
// CHECK: %[[V1:.+]] = kiln.reshape %[[V]] : tensor<f32> -> tensor<1x1x1xf32>
// CHECK: %[[E1:.+]] = kiln.expand %[[V1]] : tensor<1x1x1xf32> -> tensor<3x3x2xf32>
// CHECK: %[[RUNTIME:.+]] = kiln.concat %[[R0]], %[[E1]] {axis = 2 : i64}
// Reflect, pads [1, 2, 0, 0, 1, 3]: the border element is not repeated.
// CHECK: %[[I0:.+]] = kiln.constant dense<[1, 0, 1]> : tensor<3xi64>
// CHECK: %[[G0:.+]] = kiln.gather %[[X]], %[[I0]] {axis = 0 : i64} : tensor<2x3x4xf32>, tensor<3xi64> -> tensor<3x3x4xf32>
// CHECK: %[[I1:.+]] = kiln.constant dense<[2, 1, 0, 1, 2, 1]> : tensor<6xi64>
// CHECK: %[[G1:.+]] = kiln.gather %[[G0]], %[[I1]] {axis = 1 : i64} : tensor<3x3x4xf32>, tensor<6xi64> -> tensor<3x6x4xf32>
// CHECK: %[[I2:.+]] = kiln.constant dense<[0, 1, 2, 3, 2, 1, 0]> : tensor<7xi64>
// CHECK: %[[REFLECT:.+]] = kiln.gather %[[G1]], %[[I2]] {axis = 2 : i64} : tensor<3x6x4xf32>, tensor<7xi64> -> tensor<3x6x7xf32>
// Edge on the opset-18 axes [-1] only, pads [2, 3].
// CHECK: %[[I3:.+]] = kiln.constant dense<[0, 0, 0, 1, 2, 3, 3, 3, 3]> : tensor<9xi64>
// CHECK: %[[EDGE:.+]] = kiln.gather %[[X]], %[[I3]] {axis = 2 : i64} : tensor<2x3x4xf32>, tensor<9xi64> -> tensor<2x3x9xf32>
// Wrap (opset 19), pads [0, 1, 3, 1, 2, 4].
// CHECK: kiln.constant dense<[0, 1, 0]> : tensor<3xi64>
// CHECK: kiln.constant dense<[2, 0, 1, 2, 0, 1]> : tensor<6xi64>
// CHECK: %[[I4:.+]] = kiln.constant dense<[1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]> : tensor<11xi64>
// CHECK: %[[WRAP:.+]] = kiln.gather %{{.+}}, %[[I4]] {axis = 2 : i64} : tensor<3x6x4xf32>, tensor<11xi64> -> tensor<3x6x11xf32>
// Edge with pads [0, -1, 1, 0, -1, 0]: dim 1 cropped on both sides, then dim 2 padded.
// CHECK: %[[CROP2:.+]] = kiln.slice %[[X]] {starts = array<i64: 0, 1, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK: %[[I5:.+]] = kiln.constant dense<[0, 0, 1, 2, 3]> : tensor<5xi64>
// CHECK: %[[EDGE_CROP:.+]] = kiln.gather %[[CROP2]], %[[I5]] {axis = 2 : i64} : tensor<2x1x4xf32>, tensor<5xi64> -> tensor<2x1x5xf32>
// CHECK: return %[[CONSTANT]], %[[ZERO]], %[[RUNTIME]], %[[REFLECT]], %[[EDGE]], %[[WRAP]], %[[EDGE_CROP]]

// Pad-2 (opset 7): pads and value are attributes.
// OPSET7-LABEL: func.func @main(
// OPSET7: kiln.constant dense<[0, 1, 0]> : tensor<3xi64>
// OPSET7: kiln.constant dense<[1, 0, 1, 2, 1, 0]> : tensor<6xi64>
// OPSET7: kiln.gather {{.*}} -> tensor<3x6x5xf32>
// OPSET7: kiln.constant dense<7.000000e+00> : tensor<1x3x4xf32>
// OPSET7: kiln.constant dense<7.000000e+00> : tensor<3x3x1xf32>
// OPSET7: kiln.concat {{.*}} -> tensor<3x3x5xf32>

// Pad-24: int64 and float16 constants, edge on bool.
// OPSET24-LABEL: func.func @main(
// OPSET24: kiln.constant dense<-7> : tensor<1x3x4xi64>
// OPSET24: kiln.concat {{.*}} -> tensor<3x5x6xi64>
// OPSET24: kiln.gather {{.*}} : tensor<3x5x4xi1>, tensor<6xi64> -> tensor<3x5x6xi1>
// OPSET24: kiln.constant dense<-2.500000e+00> : tensor<3x5x1xf16>
// OPSET24: kiln.concat {{.*}} -> tensor<3x5x6xf16>

// Reflect and wrap wider than the axis (pads [5, 4] on dim 1 of size 3): numpy.pad repeats the
// reflection (period 2 * (3 - 1)) and the wrap.
// WIDE: kiln.constant dense<[1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2]> : tensor<12xi64>
// WIDE: kiln.constant dense<[1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]> : tensor<12xi64>

// Errors, each naming the node.
// RUN: not kiln-compile %S/Inputs/error_pad_runtime_pads.onnx --shape p=6 --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-RUNTIME
// ERR-RUNTIME: error: node 'pad' (Pad, opset 19): unsupported: pads of Pad must be a constant after shape specialization
// RUN: not kiln-compile %S/Inputs/error_pad_mode.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-MODE
// ERR-MODE: error: node 'pad' (Pad, opset 19): unsupported: mode 'symmetric' (Pad's modes are constant, reflect, edge and wrap)
// RUN: not kiln-compile %S/Inputs/error_pad_wrap18.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-WRAP
// ERR-WRAP: error: node 'pad' (Pad, opset 18): mode 'wrap' first appears in Pad-19 (the model imports opset 18)
// RUN: not kiln-compile %S/Inputs/error_pad_attribute.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-ATTR
// ERR-ATTR: error: node 'pad' (Pad, opset 19): unsupported: attribute 'pads' (an operand since opset 11)
// RUN: not kiln-compile %S/Inputs/error_pad_no_pads.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-NO-PADS
// ERR-NO-PADS: error: node 'pad' (Pad, opset 7): needs the 'pads' attribute (Pad-2, opset 7)
// RUN: not kiln-compile %S/Inputs/error_pad_count.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-COUNT
// ERR-COUNT: error: node 'pad' (Pad, opset 19): pads [1, 1, 1, 1] must hold 2 values per padded axis (6 for 3 axes)
// RUN: not kiln-compile %S/Inputs/error_pad_rank.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-RANK
// ERR-RANK: error: node 'pad' (Pad, opset 19): 'pads' must be a 1-D tensor, got 'tensor<1x6xi64>'
// RUN: not kiln-compile %S/Inputs/error_pad_crop.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-CROP
// ERR-CROP: error: node 'pad' (Pad, opset 19): pads [0, -2, 0, 0, -2, 0] crop more than the 3 elements of dim 1 of 'tensor<2x3x4xf32>'
// RUN: not kiln-compile %S/Inputs/error_pad_axes.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-AXES
// ERR-AXES: error: node 'pad' (Pad, opset 19): axes [0, -3] repeat an axis
// RUN: not kiln-compile %S/Inputs/error_pad_axis_range.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-AXIS
// ERR-AXIS: error: node 'pad' (Pad, opset 19): axis 3 is out of range for rank 3
// RUN: not kiln-compile %S/Inputs/error_pad_value_type.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-VALUE
// ERR-VALUE: error: node 'pad' (Pad, opset 19): constant_value must be one element of the data's type 'f32', got 'tensor<i64>'
// RUN: not kiln-compile %S/Inputs/error_pad_empty_edge.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-EMPTY
// ERR-EMPTY: error: node 'pad' (Pad, opset 19): cannot pad dim 1 of size 0 in mode 'edge' (it has no elements to repeat)
// RUN: not kiln-compile %S/Inputs/error_pad_table.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-TABLE
// ERR-TABLE: error: node 'pad' (Pad, opset 19): unsupported: mode 'reflect' padding dim 2 to 16777220 elements (kiln's index table is limited to 2^24)
// RUN: not kiln-compile %S/Inputs/error_pad_huge.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-HUGE
// ERR-HUGE: error: node 'pad' (Pad, opset 19): pads [0, 0, 4611686018427387904, 0, 0, 0] of 'tensor<2x3x4xf32>' give more than 2^40 elements
// RUN: not kiln-compile %S/Inputs/error_pad_pads_int32.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-INT32
// ERR-INT32: error: node 'pad' (Pad, opset 19): 'pads' must be int64 (Pad's type constraint), got 'tensor<6xi32>'
