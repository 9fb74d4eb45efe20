// The Hopper TMA GEMM (cuda/gemm_sm90.cuh) in generated code: on an sm_90 target kiln-select-tiles
// gives 16-bit GEMMs a #kiln.sm90_gemm_tile, and the GEMM emitter calls kiln::gemmSm90 with two
// tensor maps (A, then B) after the pointer parameters, __launch_bounds__(threads, 1), a cluster
// for split-K, and a persistent grid of at most one block per SM. GPT-2 tiny at 2x128, fp16:
// M = 256 (batch x sequence, flattened), hidden 128, MLP 512; 256 rows is short enough for
// --programmatic-launch=auto to trigger the next launch early (kiln::gridDependencySync).
// RUN: rm -rf %t.d && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=2x128 --precision fp16 -o %t.kiln --dump-cuda %t.d
// RUN: cat %t.d/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t.d/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}
// A --pass-pipeline that keeps sm90-gemm (its default) with a target besides sm_90 is refused
// before NVRTC, naming the kernel and the option that fixes it.
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --target sm_90,sm_80 --pass-pipeline='builtin.module(kiln-pipeline{precision=fp16})' -o %t.mixed.kiln 2>&1 | FileCheck %s --check-prefix=MIXED
// MIXED: error: kernel @k{{[0-9]+}}_{{[a-z_]+}} has a Hopper GEMM tile (#kiln.sm90_gemm_tile), whose kernels exist for sm_90 alone, but --target lists other architectures; give sm90-gemm=false

// The fused QKV projection [256x128] x [128x384] (no epilogue beyond the store).
// CHECK-LABEL: // [256x128] x [128x384], batch 1, Hopper TMA + wgmma (gemm_sm90.cuh)
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(384, 1) kiln_k{{[0-9]+}}(const kiln::f16 *__restrict__ in0, const kiln::f16 *__restrict__ in1, kiln::f16 *__restrict__ out0, const __grid_constant__ kiln::TensorMap tmap0, const __grid_constant__ kiln::TensorMap tmap1) {
// CHECK-NEXT: kiln::gridDependencySync();
// CHECK-NEXT: extern __shared__ __align__(1024) char kiln_smem[];
// CHECK-NEXT: const kiln::sm90::TmaOperand<true, 2> opA{&tmap0};
// CHECK-NEXT: const kiln::sm90::TmaOperand<false, 2> opB{&tmap1};
// CHECK-NEXT: auto epilogue = [&](long long bz, int m, int n, float acc) -> float {
// CHECK: return
// CHECK: kiln::gemmSm90<kiln::f16, kiln::f16, {{[0-9]+}}, {{[0-9]+}}, {{[12]}}, {{[0-9]+}}, 1, {{true|false}}>(256, 384, 128, 1, opA, opB, out0, epilogue, kiln_smem);

// The MLP down projection [256x512] x [512x128] + residual: 8 output tiles of 64x64 on 132 SMs,
// so split-K over a cluster of blocks; the residual is read in the epilogue.
// CHECK-LABEL: // [256x512] x [512x128], batch 1, Hopper TMA + wgmma (gemm_sm90.cuh)
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256, 1) __cluster_dims__([[SPLIT:[2-8]]], 1, 1) kiln_k{{[0-9]+}}(
// CHECK: kiln::ld(kiln::ldg(in2
// CHECK: kiln::gemmSm90<kiln::f16, kiln::f16, 64, 64, 1, 4, [[SPLIT]], false>(256, 128, 512, 1,

// The tiles and the launches: kiln-select-tiles' choice with its reason, and kiln-run --info
// lists each launch's tensor maps (A [256, 128] K-major, box 64 x BM; B the [128, 384] weight,
// MN-major, boxes of 64 x 64).
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=2x128 --precision fp16 --emit=kernels -o - | FileCheck %s --check-prefix=PLAN
// PLAN: kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = {{[0-9]+}}, bn = {{[0-9]+}}, consumers = {{[12]}}, stages = {{[0-9]+}}, split_k = {{[0-9]}}, pingpong = {{true|false}}>, kiln.tile_reason = "sm90: {{.+}}; mma.sync if TMA cannot read an operand: {{.+}}"
// RUN: kiln-run %t.kiln --info | FileCheck %s --check-prefix=INFO
// INFO: tensor map 0: arg 0 +0: f16 rank 2, dims 128x256, strides 256, box 64x{{64|128}}, swizzle 128B
// INFO-NEXT: tensor map 1: arg 1 +0: f16 rank 2, dims 384x128, strides 768, box 64x64, swizzle 128B

// --sm90-gemm=false, and any target list with an architecture other than sm_90 (the kernels
// exist for sm_90a alone), keep the mma.sync GEMM.
// RUN: rm -rf %t.off && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=2x128 --precision fp16 --sm90-gemm=false -o %t.off.kiln --dump-cuda %t.off
// RUN: cat %t.off/module*.cu | FileCheck %s --check-prefix=OFF
// RUN: rm -rf %t.mixed && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=2x128 --precision fp16 --target sm_90,sm_80 -o %t.mixed.kiln --dump-cuda %t.mixed
// RUN: cat %t.mixed/module*.cu | FileCheck %s --check-prefix=OFF
// OFF-NOT: kiln::gemmSm90<
// OFF: kiln::gemmTileTC<kiln::f16,
// OFF-NOT: kiln::gemmSm90<
