// RUN: kiln-compile %S/Inputs/passthrough.onnx -o %t.kiln | FileCheck %s --check-prefix=SUMMARY
// RUN: kiln-run %t.kiln --info | FileCheck %s

// Graph outputs that are an input passed through or a constant need no
// kernel: the artifact points them at the input buffer or the weights.
// SUMMARY: kernels: 1 (1 distinct, in 1 CUDA module)
// CHECK: outputs: 3
// CHECK-NEXT: same: f32[2x3] (24 bytes)
// CHECK-NEXT: const: f32[3] (12 bytes)
// CHECK-NEXT: relu: f32[2x3] (24 bytes)
// CHECK: kernels: 1 launches in 1 modules

// A graph output may also be a graph input under the same name (ONNX allows
// it, onnxruntime runs it): the function returns the argument, and the
// artifact's output of that name is located at the input, as above. Inputs
// and outputs are bound by name through separate calls, so the names do not
// clash.
// RUN: kiln-compile %S/Inputs/passthrough_same_name.onnx --emit=graph | FileCheck %s --check-prefix=SAME-GRAPH
// RUN: kiln-compile %S/Inputs/passthrough_same_name.onnx -o %t.same.kiln | FileCheck %s --check-prefix=SUMMARY
// RUN: kiln-run %t.same.kiln --info | FileCheck %s --check-prefix=SAME
// SAME-GRAPH: func.func @main(%arg0: tensor<2x3xf32> {kiln.name = "x"}, %arg1: tensor<2x3xf32> {kiln.name = "y"}) -> (tensor<2x3xf32> {kiln.name = "y"}, tensor<2x3xf32> {kiln.name = "relu"}, tensor<2x3xf32> {kiln.name = "x"})
// SAME-GRAPH: %[[R:.+]] = kiln.relu %arg0
// SAME-GRAPH: return %arg1, %[[R]], %arg0
// SAME: inputs: 2
// SAME-NEXT: x: f32[2x3] (24 bytes)
// SAME-NEXT: y: f32[2x3] (24 bytes)
// SAME-NEXT: outputs: 3
// SAME-NEXT: y: f32[2x3] (24 bytes)
// SAME-NEXT: relu: f32[2x3] (24 bytes)
// SAME-NEXT: x: f32[2x3] (24 bytes)
// SAME: kernels: 1 launches in 1 modules
