// TensorScatter-24, a KV cache written in place: for cache position j along the axis,
// rel = j - write_indices[b] (circular: mod M); present = where(0 <= rel < S,
// GatherElements(update, clamp(rel, 0, S - 1)), past): fusible ops, one elementwise kernel.
// The numerics against onnxruntime (linear, circular, 3-D float16 without write indices) are
// check_import_numerics.py --pad-einsum (ctest import-numerics-pad-einsum).

// RUN: kiln-compile %S/Inputs/tensor_scatter_circular.onnx --emit=graph --print-constants | FileCheck %s --check-prefix=CIRC
// CIRC: %[[W:.*]] = kiln.reshape %arg2 : tensor<2xi64> -> tensor<2x1x1x1xi64>
// CIRC: %[[J:.*]] = kiln.constant dense<{{\[\[\[\[}}0], [1], [2], [3], [4], [5], [6], [7]]]]> : tensor<1x1x8x1xi64>
// CIRC: %[[REL:.*]] = kiln.sub %[[J]], %[[W]] : tensor<1x1x8x1xi64>, tensor<2x1x1x1xi64> -> tensor<2x1x8x1xi64>
// CIRC: kiln.mod %[[REL]], %{{.*}} : tensor<2x1x8x1xi64>, tensor<i64> -> tensor<2x1x8x1xi64>
// CIRC: kiln.gather_elements %arg1, %{{.*}} {axis = 2 : i64} : tensor<2x3x5x4xf32>, tensor<2x3x8x4xi64> -> tensor<2x3x8x4xf32>
// CIRC: kiln.where %{{.*}}, %{{.*}}, %arg0 : tensor<2x1x8x1xi1>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>

// Linear (the default axis -2): no mod; positions past the cache are dropped.
// RUN: kiln-compile %S/Inputs/tensor_scatter.onnx --emit=graph | FileCheck %s --check-prefix=LIN
// LIN-NOT: kiln.mod
// LIN: kiln.gather_elements %arg1, %{{.*}} {axis = 2 : i64} : tensor<2x3x3x4xf32>, tensor<2x3x10x4xi64> -> tensor<2x3x10x4xf32>

// Without write_indices every row starts at 0; after folding only the gather's constant
// indices and mask remain, and the whole graph is one kernel.
// RUN: kiln-compile %S/Inputs/tensor_scatter_3d.onnx --emit=kernels | FileCheck %s --check-prefix=K3D
// K3D-COUNT-1: kiln.kernel @
// K3D-NOT: kiln.kernel @

// Errors name the node.
// RUN: not kiln-compile %S/Inputs/error_tensor_scatter_axis0.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=AXIS0
// AXIS0: error: node 'scatter' (TensorScatter, opset 24): axis must not be 0, the batch dimension
// RUN: not kiln-compile %S/Inputs/error_tensor_scatter_mode.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: error: node 'scatter' (TensorScatter, opset 24): mode 'wrap' is not 'linear' or 'circular'
// RUN: not kiln-compile %S/Inputs/error_tensor_scatter_fit.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=FIT
// FIT: error: node 'scatter' (TensorScatter, opset 24): update 'tensor<2x5x3xf32>' does not fit past_cache 'tensor<2x4x3xf32>' (dim 1)
// RUN: not kiln-compile %S/Inputs/error_tensor_scatter_indices.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=IDX
// IDX: error: node 'scatter' (TensorScatter, opset 24): write_indices 'tensor<2xi32>' must be int64 [batch_size] = [2]
