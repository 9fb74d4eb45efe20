// Fused attention kernels (kiln-raise-attention -> kiln.attention -> AttentionEmitter,
// cuda/attention.cuh). Inputs from gen_codegen_tests.py: attention_gqa (Llama-style GQA,
// Hq = 4, Hkv = 2, D = 64, causal constant mask, NaN guard, [B, S, H, D] output) and
// attention_mask (BERT-style, H = 2, D = 16, additive padding mask computed from an int64
// input), both B = 2, S = 16, Q, K and V slices of one projection.

// GQA at --precision fp16: the tensor-core kernel, Q/K/V read as strided views of the QKV
// projection [2, 16, 512] (batch stride 16 * 512, head stride 64, row stride 512; K at column
// 256 and V at 384 with 2 heads), the output written [B, S, Hq, D] (4 * 16 * 64, 64, 4 * 64).
// RUN: rm -rf %t.gqa16 && kiln-compile %S/Inputs/attention_gqa.onnx --precision fp16 -o %t.gqa16.kiln --dump-cuda %t.gqa16 | FileCheck %s --check-prefix=GQA16-SUMMARY
// RUN: cat %t.gqa16/module*.cu | FileCheck %s --check-prefix=GQA16
// RUN: %if ptxas %{ for f in %t.gqa16/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.gqa16.cubin || exit 1; done %}
// GQA16-SUMMARY: kernels: 3 (3 distinct
// GQA16: // attention [2x4x16x64] keys 16 (kv heads 2), causal, tensor cores (mma.sync)
// GQA16-NEXT: extern "C" __global__ void __launch_bounds__({{[0-9]+}}) kiln_k{{[0-9]+}}(const kiln::f16 *__restrict__ in0, kiln::f16 *__restrict__ out0)
// GQA16: const kiln::AttnShape shape{4, 2, 16, 16, __int_as_float(0x3e000000), true};
// GQA16-NEXT: const auto q = kiln::AttnTensor<kiln::f16>{in0, 8192LL, 64LL, 512LL};
// GQA16-NEXT: const auto k = kiln::AttnTensor<kiln::f16>{in0 + 256LL, 8192LL, 64LL, 512LL};
// GQA16-NEXT: const auto v = kiln::AttnTensor<kiln::f16>{in0 + 384LL, 8192LL, 64LL, 512LL};
// GQA16-NEXT: const kiln::AttnOut<kiln::f16> o{out0, 4096LL, 64LL, 256LL};
// GQA16-NEXT: auto mask = kiln::NoMask{};
// GQA16: kiln::attentionTC<kiln::f16, 64, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, true>(q, k, v, mask, o, shape, kiln_smem
// GQA16-NOT: attentionSimt

// The graph after the pipeline: one attention in the kernel between the two GEMMs, reading
// 2 KV heads (repeat_kv removed), no softmax or batched matmul left.
// RUN: kiln-compile %S/Inputs/attention_gqa.onnx --precision fp16 --emit=kernels -o - | FileCheck %s --check-prefix=GQA-IR
// GQA-IR-LABEL: func.func @main
// GQA-IR-NOT: kiln.softmax
// GQA-IR: kiln.kernel @k0_{{.*}}matmul
// GQA-IR: kiln.kernel @k1_
// GQA-IR: kiln.attention %{{.+}}, %{{.+}}, %{{.+}} {bshd_output = true, causal = true, scale = 1.250000e-01 : f64, zero_masked_rows = true} : tensor<2x4x16x64xf16>, tensor<2x2x16x64xf16>, tensor<2x2x16x64xf16> -> tensor<2x16x4x64xf16>
// GQA-IR: kiln.kernel @k2_{{.*}}matmul
// GQA-IR-NOT: kiln.softmax
// GQA-IR-NOT: kiln.kernel

// The same model in fp32: the CUDA-core kernel, operands through loader lambdas.
// RUN: rm -rf %t.gqa32 && kiln-compile %S/Inputs/attention_gqa.onnx -o %t.gqa32.kiln --dump-cuda %t.gqa32 | FileCheck %s --check-prefix=GQA32-SUMMARY
// RUN: cat %t.gqa32/module*.cu | FileCheck %s --check-prefix=GQA32
// RUN: %if ptxas %{ for f in %t.gqa32/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.gqa32.cubin || exit 1; done %}
// GQA32-SUMMARY: kernels: 3 (3 distinct
// GQA32: // attention [2x4x16x64] keys 16 (kv heads 2), causal, CUDA cores
// GQA32: const kiln::AttnShape shape{4, 2, 16, 16, __int_as_float(0x3e000000), true};
// GQA32: auto mask = kiln::NoMask{};
// GQA32-NEXT: auto store = [&](long long b, long long h, long long i, long long d, float x) {
// GQA32-NEXT: out0[b * 4096LL + h * 64LL + i * 256LL + d] = x;
// GQA32: kiln::attentionSimt<64, 64, 8, true>(qf, kf, vf, mask, store, shape, kiln_smem
// GQA32-NOT: attentionTC

// A padding mask: the additive mask (1 - m) * f32 minimum is computed inside the kernel by
// the mask lambda from the int64 attention_mask (in1), broadcast over heads and queries.
// fp32: CUDA cores.
// RUN: rm -rf %t.mask32 && kiln-compile %S/Inputs/attention_mask.onnx -o %t.mask32.kiln --dump-cuda %t.mask32 | FileCheck %s --check-prefix=MASK-SUMMARY
// RUN: cat %t.mask32/module*.cu | FileCheck %s --check-prefix=MASK32
// RUN: %if ptxas %{ for f in %t.mask32/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.mask32.cubin || exit 1; done %}
// MASK-SUMMARY: kernels: 3 (3 distinct
// MASK32: // attention [2x2x16x16] keys 16 (kv heads 2), not causal, additive mask, CUDA cores
// MASK32-NEXT: (const float *__restrict__ in0, const long long *__restrict__ in1, float *__restrict__ out0)
// MASK32: const kiln::AttnShape shape{2, 2, 16, 16, __int_as_float(0x3e800000), false};
// The mask has size 1 along the queries, so it is wrapped as row-invariant (attentionTC reads it
// once per key column; attentionSimt just calls it).
// MASK32: auto mask = kiln::makeRowInvariantMask([&](long long b, long long h, long long i, long long j) -> float {
// MASK32-NEXT: const long long [[M:t[0-9]+]] = kiln::ldg(in1 + (b * 16LL + j));
// MASK32-NEXT: const float [[MF:t[0-9]+]] = (float)([[M]]);
// MASK32-NEXT: const float [[INV:t[0-9]+]] = (__int_as_float(0x3f800000) - [[MF]]);
// MASK32-NEXT: const float [[ADD:t[0-9]+]] = ([[INV]] * __int_as_float(0xff7fffff));
// MASK32-NEXT: return [[ADD]];
// MASK32: kiln::attentionSimt<16, 16, 8, false>(qf, kf, vf, mask, store, shape, kiln_smem

// fp16: tensor cores with the same mask lambda (the f32 minimum saturates to -65504 in fp16).
// RUN: rm -rf %t.mask16 && kiln-compile %S/Inputs/attention_mask.onnx --precision fp16 -o %t.mask16.kiln --dump-cuda %t.mask16 | FileCheck %s --check-prefix=MASK-SUMMARY
// RUN: cat %t.mask16/module*.cu | FileCheck %s --check-prefix=MASK16
// RUN: %if ptxas %{ for f in %t.mask16/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.mask16.cubin || exit 1; done %}
// MASK16: // attention [2x2x16x16] keys 16 (kv heads 2), not causal, additive mask, tensor cores (mma.sync)
// MASK16: const auto q = kiln::AttnTensor<kiln::f16>{in0, 1536LL, 16LL, 96LL};
// MASK16-NEXT: const auto k = kiln::AttnTensor<kiln::f16>{in0 + 32LL, 1536LL, 16LL, 96LL};
// MASK16-NEXT: const auto v = kiln::AttnTensor<kiln::f16>{in0 + 64LL, 1536LL, 16LL, 96LL};
// MASK16-NEXT: const kiln::AttnOut<kiln::f16> o{out0, 512LL, 16LL, 32LL};
// MASK16-NEXT: auto mask = kiln::makeRowInvariantMask([&](long long b, long long h, long long i, long long j) -> float {
// MASK16-NEXT: kiln::ldg(in1 + (b * 16LL + j));
// MASK16: * __int_as_float(0xc77fe000));
// MASK16: kiln::attentionTC<kiln::f16, 16, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, false>(q, k, v, mask, o, shape, kiln_smem

// The shipped GPT-2 example at 1x16: each layer's QK^T GEMM, softmax and PV GEMM (22 kernels
// before kiln-raise-attention) are one causal attention kernel reading the QKV projection:
// 16 kernels, in fp32 and fp16.
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 -o %t.gpt2.kiln | FileCheck %s --check-prefix=GPT2-SUMMARY
// RUN: rm -rf %t.gpt2 && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 -o %t.gpt2.16.kiln --dump-cuda %t.gpt2 | FileCheck %s --check-prefix=GPT2-SUMMARY
// RUN: cat %t.gpt2/module*.cu | FileCheck %s --check-prefix=GPT2
// GPT2-SUMMARY: kernels: 16 (
// GPT2: // attention [1x4x16x32] keys 16 (kv heads 4), causal, tensor cores (mma.sync)
// GPT2: kiln::attentionTC<kiln::f16, 32, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, true>(q, k, v, mask, o, shape, kiln_smem
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --emit=kernels -o - | FileCheck %s --check-prefix=GPT2-IR
// GPT2-IR-NOT: kiln.softmax
// GPT2-IR-COUNT-2: kiln.attention {{.+}} {bshd_output = true, causal = true, scale = 0.17677670050080341 : f64, zero_masked_rows = true}
// GPT2-IR-NOT: kiln.softmax
