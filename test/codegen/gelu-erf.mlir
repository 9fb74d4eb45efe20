// Exact GELU in a GEMM epilogue (BERT's MLP up: MatMul + bias, then 0.5 x (1 + Erf(x / sqrt 2))).
// 1 + erf(u) is kiln::onePlusErf (cuda/common.cuh: branch-free erfc of Numerical Recipes,
// accurate where 1 + erf cancels, instead of erff plus 1), and the division by the constant
// sqrt 2 is a multiplication by its reciprocal (fp32: 1 / 1.41421354 = 0x3f3504f3; fp16 stores
// the constant as 1.4140625 first, whose reciprocal is 0x3f3509e7). No erff and no division
// remain in the kernel.
// RUN: rm -rf %t32 %t16
// RUN: kiln-compile %S/Inputs/gelu_erf.onnx -o %t32.kiln --dump-cuda %t32
// RUN: cat %t32/module*.cu | FileCheck %s --check-prefixes=CHECK,F32
// RUN: kiln-compile %S/Inputs/gelu_erf.onnx --precision fp16 -o %t16.kiln --dump-cuda %t16
// RUN: cat %t16/module*.cu | FileCheck %s --check-prefixes=CHECK,F16
// RUN: %if ptxas %{ for f in %t32/*.ptx %t16/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// CHECK-NOT: erff(
// CHECK: const float [[H:t[0-9]+]] = (acc + t{{[0-9]+}});
// F32-NEXT: const float [[U:t[0-9]+]] = ([[H]] * __int_as_float(0x3f3504f3));
// F16-NEXT: const float [[U:t[0-9]+]] = ([[H]] * __int_as_float(0x3f3509e7));
// CHECK-NEXT: const float [[E:t[0-9]+]] = kiln::onePlusErf([[U]]);
// CHECK-NEXT: const float [[G:t[0-9]+]] = ([[H]] * [[E]]);
// CHECK-NEXT: ([[G]] * __int_as_float(0x3f000000));
// CHECK-NOT: erff(
// CHECK-NOT: / __int_as_float
