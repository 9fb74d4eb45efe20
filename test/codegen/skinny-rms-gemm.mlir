// An RMS norm read only by few-row GEMMs (decode steps) runs in their A loader
// (kiln-fuse-norm-into-gemm few-row, kiln-compile's default --norm-into-gemm=few-row): the norm
// kernel disappears, each GEMM reads the norm's input x, multiplies it by the norm's scale as it
// stages A, sums x^2 per row (kiln::gemmSkinnyRms) and scales its accumulator by the row's rstd
// in the epilogue. The weight is the model's own (not rescaled), so the decode and prefill
// programs of one artifact share it. The model (gen_codegen_tests.py): four GEMM -> RMSNorm ->
// GEMM chains at 1 row (one norm read by two GEMMs, split-K 4), 8 rows (a batch of single rows
// against a shared weight, with a residual), 3 rows (R does not divide the block's 256 threads)
// and 16 rows. Numerics against onnxruntime: small_models_test.py on a GPU. --skinny-tensor-cores=off:
// the CUDA-core inner product at every row count (tensor cores: skinny-gemm-tensor-cores.test).
// RUN: rm -rf %t.d && kiln-compile %S/Inputs/skinny_rms_gemms.onnx --precision fp16 --skinny-tensor-cores=off -o %t.kiln --dump-cuda %t.d | FileCheck %s --check-prefix=SUMMARY
// RUN: cat %t.d/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t.d/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}
// RUN: kiln-compile %S/Inputs/skinny_rms_gemms.onnx --precision fp16 --skinny-tensor-cores=off --emit=kernels | FileCheck %s --check-prefix=PLAN
// --norm-into-gemm=kernel keeps the four norm kernels (A/B timing).
// RUN: kiln-compile %S/Inputs/skinny_rms_gemms.onnx --precision fp16 --norm-into-gemm=kernel -o %t.off.kiln | FileCheck %s --check-prefix=OFF
// RUN: kiln-compile %S/Inputs/skinny_rms_gemms.onnx --precision fp16 --norm-into-gemm=kernel --emit=kernels | FileCheck %s --check-prefix=OFF-PLAN
// fp32 GEMMs do not take the few-row kernel: the norms keep their kernels.
// RUN: kiln-compile %S/Inputs/skinny_rms_gemms.onnx --emit=kernels | FileCheck %s --check-prefix=FP32

// SUMMARY: kernels: 9 (
// OFF: kernels: 13 (

// CHECK-LABEL: // [1x512] x [512x64], batch 1: 1 rows, few-row GEMM (gemm_skinny.cuh), split-K 4, RMS norm in the A loader
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256) __cluster_dims__(4, 1, 1) kiln_k{{[0-9]+}}(const kiln::f16 *__restrict__ in0, const kiln::f16 *__restrict__ in1, const kiln::f16 *__restrict__ in2, float *__restrict__ out0)
// A = x * scale (in2: the norm's scale), per element:
// CHECK: auto loadA = [&](int skinnyRow, int k) -> float {
// CHECK: const float [[X:t[0-9]+]] = kiln::ld(kiln::ldg(in0 + ((long long)k)));
// CHECK-NEXT: const float [[G:t[0-9]+]] = kiln::ld(kiln::ldg(in2 + ((long long)k)));
// CHECK-NEXT: const float [[A:t[0-9]+]] = ([[X]] * [[G]]);
// CHECK-NEXT: return [[A]];
// CHECK: const float *kiln_row_rstd = kiln::skinny::rowRstd<1>(kiln_smem);
// CHECK-NEXT: auto loadX = [&](int skinnyRow, int k) -> float {
// CHECK: kiln::ld(kiln::ldg(in0 + ((long long)k)));
// The epilogue: rstd times the fp32 accumulator, rounded to f16 as the norm's GEMM stored it.
// CHECK: auto epilogue = [&](int skinnyRow, int n, float acc) {
// CHECK: const float [[Y:t[0-9]+]] = (float)(acc);
// CHECK-NEXT: const float [[Z:t[0-9]+]] = ([[Y]] * kiln_row_rstd[skinnyRow]);
// CHECK-NEXT: kiln::cvt<kiln::f16>((float)([[Z]]))
// CHECK: kiln::gemmSkinnyRms<kiln::f16, 1, 4>(64, 512, loadA, loadX, __int_as_float(0x358637bd), in1, 64LL, epilogue, kiln_smem);

// CHECK-LABEL: // [16x128] x [128x96], batch 1: 16 rows, few-row GEMM (gemm_skinny.cuh), split-K 1, RMS norm in the A loader
// CHECK: kiln::gemmSkinnyRms<kiln::f16, 16, 1>(96, 128, loadA, loadX, __int_as_float(0x358637bd), in1, 96LL, epilogue, kiln_smem);

// CHECK-LABEL: // [1x512] x [512x32], batch 1: 1 rows, few-row GEMM (gemm_skinny.cuh), split-K 4, RMS norm in the A loader
// CHECK: kiln::gemmSkinnyRms<kiln::f16, 1, 4>(32, 512,

// The batch of 8 single rows: x is row m of batch bz; epsilon 1e-5.
// CHECK-LABEL: // [1x256] x [256x64], batch 8: 8 rows, few-row GEMM (gemm_skinny.cuh), split-K 2, RMS norm in the A loader
// CHECK: const float *kiln_row_rstd = kiln::skinny::rowRstd<8>(kiln_smem);
// CHECK: kiln::gemmSkinnyRms<kiln::f16, 8, 2>(64, 256, loadA, loadX, __int_as_float(0x3727c5ac), in{{[0-9]}}, 64LL, epilogue, kiln_smem);

// CHECK-LABEL: // [3x128] x [128x64], batch 1: 3 rows, few-row GEMM (gemm_skinny.cuh), split-K 1, RMS norm in the A loader
// CHECK: (t{{[0-9]+}} < 0 ? 0 : t{{[0-9]+}})
// CHECK: kiln::gemmSkinnyRms<kiln::f16, 3, 1>(64, 128,

// PLAN-NOT: kiln.rms_norm
// PLAN: kiln.kernel @k{{[0-9]+}}_fused_rms_norm_matmul_cast({{.*}}kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 1, split_k = 4>, kiln.tile_reason = "skinny: 1 rows, 1 column tiles x split-K 4 = 4 blocks on 132 SMs ({{[0-9]+}} per SM), the weight read once (K=512); CUDA cores (skinny-tensor-cores=off); the RMS norm in the A loader (no other GEMM computes it)"
// PLAN: kiln.row_stats %[[X:arg[0-9]+]] {epsilon = 9.99999997E-7 : f32, rms = true} : tensor<1x512xf16> -> tensor<1x1xf32>, tensor<1x1xf32>
// PLAN-NEXT: kiln.mul %[[X]], %arg{{[0-9]+}} : tensor<1x512xf16>, tensor<512xf16> -> tensor<1x512xf16>
// PLAN-NOT: kiln.rms_norm

// OFF-PLAN-COUNT-4: kiln.rms_norm
// OFF-PLAN-NOT: kiln.row_stats

// FP32-COUNT-4: kiln.rms_norm
// FP32-NOT: kiln.row_stats
