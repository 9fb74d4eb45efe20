// RUN: rm -rf %t && kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t.kiln --dump-cuda %t > %t.summary
// RUN: FileCheck %s --input-file=%t/module0.cu
// RUN: FileCheck %s --check-prefix=SUMMARY --input-file=%t.summary
// The same input gives a byte-identical artifact.
// RUN: kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t.again.kiln
// RUN: cmp %t.kiln %t.again.kiln
// Every emitted PTX assembles for sm_90a (sm_90 targets build as sm_90a).
// RUN: %if ptxas %{ %cuda_home/bin/ptxas -arch=sm_90a %t/module0.ptx -o %t.cubin %}

// Add + Tanh + Mul fuse into one kernel: the bias is a parameter, the splat
// 0.5 an exact literal; the result is written once.
// CHECK: #include "kiln/common.cuh"
// CHECK: // used by @k0_fused_add_tanh_mul
// CHECK: extern "C" __global__ void __launch_bounds__(256) kiln_k0(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out0)
// CHECK: for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < 16LL;
// CHECK: const float [[X:t[0-9]+]] = kiln::ldg(in0 + (c0 * 8LL + c1));
// CHECK: const float [[B:t[0-9]+]] = kiln::ldg(in1 + (c1));
// CHECK: const float [[S:t[0-9]+]] = ([[X]] + [[B]]);
// CHECK: const float [[T:t[0-9]+]] = tanhf([[S]]);
// CHECK: const float [[M:t[0-9]+]] = ([[T]] * __int_as_float(0x3f000000));
// CHECK: out0[i] = [[M]];

// SUMMARY: kernels: 1 (1 distinct, in 1 CUDA module)
// SUMMARY: arena bytes: 256 (sum of intermediate tensor bytes: 256)
