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
