// A layer norm folded into the Hopper GEMMs that read it (kiln-compile --norm-into-gemm=fused,
// kiln-fuse-norm-into-gemm): GPT-2 tiny at 2x128, fp16. Each layer's two layer norms disappear
// (16 kernels -> 12), the QKV and MLP-up GEMMs read the residual stream and call
// kiln::gemmSm90 with ROWSTATS = 1 and the norm's epsilon; their epilogue lambdas take the row's
// mean and rstd and apply rstd (acc - mean c) + b' before the GEMM's own epilogue. The default
// (=kernel) keeps the norm kernels.
// RUN: rm -rf %t.d && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=2x128 --precision fp16 --norm-into-gemm=fused -o %t.kiln --dump-cuda %t.d | FileCheck %s --check-prefix=SUMMARY
// RUN: cat %t.d/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t.d/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=2x128 --precision fp16 --norm-into-gemm=fused --emit=kernels -o - | FileCheck %s --check-prefix=IR
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=2x128 --precision fp16 --emit=kernels -o - | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=2x128 --norm-into-gemm=fused --emit=kernels -o - | FileCheck %s --check-prefix=FP32
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --norm-into-gemm=yes -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --norm-into-gemm=fused --pass-pipeline='builtin.module(kiln-pipeline)' -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --precision fp16 --norm-into-gemm=fused --target sm_90,sm_80 -o %t.two.kiln 2>&1 | FileCheck %s --check-prefix=WARN-TARGET
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --precision fp16 --norm-into-gemm=fused --sm90-gemm=false -o %t.mma.kiln 2>&1 | FileCheck %s --check-prefix=WARN-MMA

// SUMMARY: kernels: 12 (

// CHECK-LABEL: // [256x128] x [128x384], batch 1, Hopper TMA + wgmma (gemm_sm90.cuh)
// CHECK: auto epilogue = [&](long long bz, int m, int n, float acc, float rowMean, float rowRstd) -> float {
// CHECK: (rowMean * t{{[0-9]+}})
// CHECK: * rowRstd)
// CHECK: kiln::gemmSm90<kiln::f16, kiln::f16, {{[0-9]+}}, {{[0-9]+}}, {{[12]}}, {{[0-9]+}}, 1, {{true|false}}, 1>(256, 384, 128, 1, opA, opB, out0, epilogue, kiln_smem, __int_as_float(0x3727c5ac));

// IR-NOT: kiln.layer_norm %{{.*}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x128x128xf16>, tensor<128xf16>, tensor<128xf16> -> tensor<2x128x128xf16>
// IR: kiln.kernel @k{{[0-9]+}}_fused_layer_norm_matmul(
// IR: kiln.row_stats %arg1 {epsilon = 9.99999974E-6 : f32, rms = false} : tensor<256x128xf16> -> tensor<256x1xf32>, tensor<256x1xf32>
// IR: kiln.sm90_gemm_tile
// IR-SAME: split_k = 1
// The final layer norm (followed by a cast to the fp32 output) stays a kernel.
// IR: kiln.kernel @k{{[0-9]+}}_fused_layer_norm_cast(

// DEFAULT: kiln.kernel @k1_fused_layer_norm(
// DEFAULT-NOT: kiln.row_stats

// fp32: no tensor-core GEMM of 16-bit operands, nothing to fold into.
// FP32-NOT: kiln.row_stats

// BAD: invalid value 'yes' for --norm-into-gemm (expected one of: fused, few-row, kernel)

// PIPELINE: --norm-into-gemm configures the default pipeline and has no effect with --pass-pipeline; give it as a pipeline option in the text: kiln-pipeline{fuse-norm-into-gemm=true}

// WARN-TARGET: warning: --norm-into-gemm=fused has no effect with target sm_80 (the Hopper GEMM needs every --target to be sm_90): only the Hopper TMA GEMM computes a folded norm's row statistics
// WARN-TARGET: kernels: 16 (
// WARN-MMA: warning: --norm-into-gemm=fused has no effect with --sm90-gemm=false
// WARN-MMA: kernels: 16 (
