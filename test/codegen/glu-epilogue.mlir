// Gated MLP units as the GEMM's pair epilogue (kiln-interleave-glu -> kiln::makePairEpilogue,
// cuda/gemm_tc.cuh PairEpilogue) and rotary embeddings as the attention kernel's prologue
// (kiln.rotary -> kiln::makeRope, cuda/attention.cuh). Inputs from gen_codegen_tests.py:
// swiglu_mlp (Llama MLP: x @ Wg, x @ Wu, silu(g) * u, @ Wd; B = 2, S = 16, E = 32, F = 64)
// and attention_rope (Llama attention, rotate-half RoPE on Q and K, GQA Hq = 4, Hkv = 2,
// D = 64, causal constant mask; B = 2, S = 16).

// fp16: the gate and up projections are one GEMM [16x32] x [32x128] (sibling fusion), its
// columns interleaved, so each thread's accumulator pair (n, n + 1) holds gate and up of output
// column n / 2: silu(acc0) * acc1 is computed in the epilogue and stored once ([2, 16, 64]; the
// [.., 128] GEMM result is never written). Two kernels: gate/up and down. The gate/up GEMM reads
// the f32 input through a converting functor, which TMA cannot load, so it keeps the mma.sync
// tile kiln-select-tiles records beside the Hopper one; the down GEMM's operands are f16 views
// of parameters and it runs on kiln::gemmSm90 (TMA + wgmma): A is batched (a rank-3 tensor map
// over the 2 batches), the weight is one rank-2 map shared by both.
// RUN: rm -rf %t.mlp16 && kiln-compile %S/Inputs/swiglu_mlp.onnx --precision fp16 -o %t.mlp16.kiln --dump-cuda %t.mlp16 | FileCheck %s --check-prefix=MLP-PAIR-SUMMARY
// RUN: cat %t.mlp16/module*.cu | FileCheck %s --check-prefix=MLP16
// RUN: %if ptxas %{ for f in %t.mlp16/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.mlp16.cubin || exit 1; done %}
// MLP-PAIR-SUMMARY: kernels: 2 (2 distinct
// MLP16: // the Hopper GEMM tile is not used: TMA cannot read an operand
// MLP16-NEXT: // [16x32] x [32x128], batch 2, tensor cores (mma.sync)
// MLP16-NEXT: extern "C" __global__ void __launch_bounds__({{[0-9]+}}) kiln_k0(const float *__restrict__ in0, const kiln::f16 *__restrict__ in1, kiln::f16 *__restrict__ out0)
// MLP16: auto epilogue = kiln::makePairEpilogue([&](int m, int n, float acc0, float acc1) {
// MLP16-NEXT: const long long e = bz * 1024LL + (long long)m * 64LL + (n >> 1);
// MLP16: const float [[SIG:t[0-9]+]] = (1.0f / (1.0f + expf(-acc0)));
// MLP16-NEXT: const float [[SILU:t[0-9]+]] = (acc0 * [[SIG]]);
// MLP16-NEXT: const float [[H:t[0-9]+]] = ([[SILU]] * acc1);
// MLP16-NEXT: out0[e] = kiln::cvt<kiln::f16>([[H]]);
// MLP16-NEXT: });
// MLP16-NEXT: kiln::gemmTileTC<kiln::f16, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>(16, 128, 32, blockIdx.y, blockIdx.x, opA, opB, epilogue, kiln_smem);
// MLP16: // [16x64] x [64x32], batch 2, Hopper TMA + wgmma (gemm_sm90.cuh)
// MLP16-NEXT: extern "C" __global__ void __launch_bounds__(384, 1) kiln_k1(const kiln::f16 *__restrict__ in0, const kiln::f16 *__restrict__ in1, float *__restrict__ out0, const __grid_constant__ kiln::TensorMap tmap0, const __grid_constant__ kiln::TensorMap tmap1)
// MLP16-NOT: makePairEpilogue
// MLP16: const kiln::sm90::TmaOperand<true, 3> opA{&tmap0};
// MLP16-NEXT: const kiln::sm90::TmaOperand<false, 2> opB{&tmap1};
// MLP16: kiln::gemmSm90<kiln::f16, float, {{.+}}>(16, 32, 64, 2, opA, opB, out0, epilogue, kiln_smem);

// The graph after the pipeline: the interleaved weight [32, 128] in fp16, the step-2 slices and
// the SwiGLU inside the GEMM kernel, whose result is [2, 16, 64].
// RUN: kiln-compile %S/Inputs/swiglu_mlp.onnx --precision fp16 --emit=kernels -o - | FileCheck %s --check-prefix=MLP16-IR
// MLP16-IR: kiln.kernel @k0_{{.*}}matmul{{.*}} : (tensor<2x16x32xf32>, tensor<32x128xf16>) -> tensor<2x16x64xf16> {
// MLP16-IR: %[[Y:.+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<2x16x32xf16>, tensor<32x128xf16> -> tensor<2x16x128xf16>
// MLP16-IR-NEXT: %[[G:.+]] = kiln.slice %[[Y]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>} : tensor<2x16x128xf16> -> tensor<2x16x64xf16>
// MLP16-IR-NEXT: %[[U:.+]] = kiln.slice %[[Y]] {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>} : tensor<2x16x128xf16> -> tensor<2x16x64xf16>
// MLP16-IR-NEXT: %[[S:.+]] = kiln.sigmoid %[[G]]
// MLP16-IR-NEXT: %[[SILU:.+]] = kiln.mul %[[G]], %[[S]]
// MLP16-IR-NEXT: %[[H:.+]] = kiln.mul %[[SILU]], %[[U]]
// MLP16-IR-NEXT: kiln.yield %[[H]] : tensor<2x16x64xf16>
// MLP16-IR: kiln.kernel @k1_{{.*}}matmul
// MLP16-IR-NOT: kiln.kernel

// fp32 GEMMs (FFMA, kiln::gemmTileF32) have no pair epilogue: the weight is still interleaved,
// and the SwiGLU is its own pointwise kernel reading the step-2 slices. Three kernels.
// RUN: rm -rf %t.mlp32 && kiln-compile %S/Inputs/swiglu_mlp.onnx -o %t.mlp32.kiln --dump-cuda %t.mlp32 | FileCheck %s --check-prefix=MLP32-SUMMARY
// RUN: cat %t.mlp32/module*.cu | FileCheck %s --check-prefix=MLP32
// RUN: %if ptxas %{ for f in %t.mlp32/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.mlp32.cubin || exit 1; done %}
// MLP32-SUMMARY: kernels: 3 (3 distinct
// MLP32-NOT: makePairEpilogue
// MLP32: kiln::gemmTileF32<{{.+}}>(16, 128, 32,
// MLP32: kiln_k1(const float *__restrict__ in0, float *__restrict__ out0)
// MLP32: expf(
// MLP32: kiln::gemmTileF32<{{.+}}>(16, 32, 64,
// MLP32-NOT: makePairEpilogue
// RUN: kiln-compile %S/Inputs/swiglu_mlp.onnx --emit=kernels -o - | FileCheck %s --check-prefix=MLP32-IR
// MLP32-IR: kiln.kernel @k0_fused_matmul({{.+}} -> tensor<2x16x128xf32>
// MLP32-IR: kiln.kernel @k1_{{.+}} -> tensor<2x16x64xf32>
// MLP32-IR-NEXT: ^bb0
// MLP32-IR-NEXT: kiln.slice %{{.+}} {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>}
// MLP32-IR-NEXT: kiln.slice %{{.+}} {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>}
// MLP32-IR: kiln.kernel @k2_fused_matmul

// tf32: fp32 storage, the GEMMs on TF32 tensor cores (kiln::gemmTileTC<float>), so the pair
// epilogue applies again: two kernels, the output stored in fp32.
// RUN: rm -rf %t.mlptf32 && kiln-compile %S/Inputs/swiglu_mlp.onnx --precision tf32 -o %t.mlptf32.kiln --dump-cuda %t.mlptf32 | FileCheck %s --check-prefix=MLP-PAIR-SUMMARY
// RUN: cat %t.mlptf32/module*.cu | FileCheck %s --check-prefix=MLPTF32
// RUN: %if ptxas %{ for f in %t.mlptf32/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.mlptf32.cubin || exit 1; done %}
// MLPTF32: auto epilogue = kiln::makePairEpilogue([&](int m, int n, float acc0, float acc1) {
// MLPTF32: expf(-acc0)
// MLPTF32: out0[e] = t{{[0-9]+}};
// MLPTF32: kiln::gemmTileTC<float, {{.+}}>(16, 128, 32,
// MLPTF32-NOT: makePairEpilogue
// MLPTF32: kiln::gemmTileTC<float, {{.+}}>(16, 32, 64,

// Rotary attention at fp16 with --attention-key-rotary=fused (the default rotates K in a kernel
// of its own: key-rotary-kernel.mlir): Q and K are read from the QKV projection as strided views of the
// rotary inputs (the pre-rotation heads), and the rotation is applied to the tiles in shared
// memory with cos/sin loaded through lambdas from the [1, 1, 16, 64] tables (in1, in2), the same
// tables for Q and K (K rotated per key position, 2 KV heads). Three kernels: QKV projection,
// attention, output projection.
// RUN: rm -rf %t.rope16 && kiln-compile %S/Inputs/attention_rope.onnx --precision fp16 --attention-key-rotary=fused -o %t.rope16.kiln --dump-cuda %t.rope16 | FileCheck %s --check-prefix=ROPE-SUMMARY
// RUN: cat %t.rope16/module*.cu | FileCheck %s --check-prefix=ROPE16
// RUN: %if ptxas %{ for f in %t.rope16/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.rope16.cubin || exit 1; done %}
// ROPE-SUMMARY: kernels: 3 (3 distinct
// ROPE16: // attention [2x4x16x64] keys 16 (kv heads 2), causal, tensor cores (mma.sync)
// ROPE16-NEXT: kiln_k1(const kiln::f16 *__restrict__ in0, const kiln::f16 *__restrict__ in1, const kiln::f16 *__restrict__ in2, kiln::f16 *__restrict__ out0)
// ROPE16: const auto q = kiln::AttnTensor<kiln::f16>{in0, 8192LL, 64LL, 512LL};
// ROPE16-NEXT: const auto k = kiln::AttnTensor<kiln::f16>{in0 + 256LL, 8192LL, 64LL, 512LL};
// ROPE16-NEXT: const auto v = kiln::AttnTensor<kiln::f16>{in0 + 384LL, 8192LL, 64LL, 512LL};
// ROPE16: auto mask = kiln::NoMask{};
// ROPE16-NEXT: const auto ropeQ = kiln::makeRope([&](long long b, long long h, long long i, long long j) -> float {
// ROPE16-NEXT: kiln::ld(kiln::ldg(in1 + (i * 64LL + j)));
// ROPE16: }, [&](long long b, long long h, long long i, long long j) -> float {
// ROPE16-NEXT: kiln::ld(kiln::ldg(in2 + (i * 64LL + j)));
// ROPE16: const auto ropeK = kiln::makeRope([&](long long b, long long h, long long i, long long j) -> float {
// ROPE16-NEXT: kiln::ld(kiln::ldg(in1 + (i * 64LL + j)));
// ROPE16: }, [&](long long b, long long h, long long i, long long j) -> float {
// ROPE16-NEXT: kiln::ld(kiln::ldg(in2 + (i * 64LL + j)));
// ROPE16: kiln::attentionTC<kiln::f16, 64, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, true>(q, k, v, mask, o, shape, kiln_smem, ropeQ, ropeK);
// ROPE16-NOT: attentionSimt

// The graph: both rotations raised and fused into the attention kernel as its Q and K.
// RUN: kiln-compile %S/Inputs/attention_rope.onnx --precision fp16 --attention-key-rotary=fused --emit=kernels -o - | FileCheck %s --check-prefix=ROPE-IR
// ROPE-IR-NOT: kiln.softmax
// ROPE-IR: %[[QR:.+]] = kiln.rotary %{{.+}}, %[[COS:[^,]+]], %[[SIN:[^ ]+]] : tensor<2x4x16x64xf16>, tensor<1x1x16x64xf16>, tensor<1x1x16x64xf16> -> tensor<2x4x16x64xf16>
// ROPE-IR-NEXT: %[[KR:.+]] = kiln.rotary %{{.+}}, %[[COS]], %[[SIN]] : tensor<2x2x16x64xf16>, tensor<1x1x16x64xf16>, tensor<1x1x16x64xf16> -> tensor<2x2x16x64xf16>
// ROPE-IR-NEXT: kiln.attention %[[QR]], %[[KR]], %{{.+}} {bshd_output = true, causal = true, scale = 1.250000e-01 : f64, zero_masked_rows = false}
// ROPE-IR-NOT: kiln.softmax
// ROPE-IR-NOT: kiln.concat

// fp32: the CUDA-core kernel; the rotation is evaluated per element in the Q and K loaders
// (x * cos + (j < 32 ? -x[j + 32] : x[j - 32]) * sin).
// RUN: rm -rf %t.rope32 && kiln-compile %S/Inputs/attention_rope.onnx --attention-key-rotary=fused -o %t.rope32.kiln --dump-cuda %t.rope32 | FileCheck %s --check-prefix=ROPE-SUMMARY
// RUN: cat %t.rope32/module*.cu | FileCheck %s --check-prefix=ROPE32
// RUN: %if ptxas %{ for f in %t.rope32/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.rope32.cubin || exit 1; done %}
// ROPE32: // attention [2x4x16x64] keys 16 (kv heads 2), causal, CUDA cores
// ROPE32: auto qf = [&](long long b, long long h, long long i, long long j) -> float {
// ROPE32: (j < 32LL ? j + 32LL : j - 32LL)
// ROPE32: (j < 32LL ? -[[P:t[0-9]+]] : [[P]])
// ROPE32: auto kf = [&](long long b, long long h, long long i, long long j) -> float {
// ROPE32: (j < 32LL ? -[[P2:t[0-9]+]] : [[P2]])
// ROPE32: kiln::attentionSimt<64, {{[0-9]+}}, {{[0-9]+}}, true>(qf, kf, vf, mask, store, shape, kiln_smem
// ROPE32-NOT: attentionTC
// ROPE32-NOT: makeRope
