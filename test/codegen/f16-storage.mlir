// A model with f16 tensors (an fp16 export) compiles: 16-bit floats are kept
// in memory as kiln::f16 and computed in fp32 registers; stores round and
// saturate through kiln::cvt.
// RUN: rm -rf %t.dir && kiln-compile %S/Inputs/f16_cast_relu.onnx -o %t.kiln --dump-cuda %t.dir
// RUN: cat %t.dir/module0.cu | FileCheck %s
// CHECK: kiln::f16 *__restrict__ out0
// CHECK: kiln::cvt<kiln::f16>(

// --precision fp16 stores an f32 model in fp16; GEMMs run on the tensor
// cores (kiln::gemmSm90 on sm_90, its operands loaded by TMA; kiln::gemmTileTC
// with --sm90-gemm=false) and the f32 graph output is converted back. (At 1x16, 16 rows, the
// GEMMs would take the few-row kernel, skinny-gemm.mlir: --skinny-gemm=false keeps them here.)
// RUN: rm -rf %t.gpt2 && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --skinny-gemm=false -o %t.gpt2.kiln --dump-cuda %t.gpt2
// RUN: cat %t.gpt2/module*.cu | FileCheck %s --check-prefix=GPT2
// GPT2-DAG: kiln::gemmSm90<kiln::f16,
// GPT2-DAG: kiln::sm90::TmaOperand<true, 2>
// GPT2-DAG: kiln::layerNormRowVec<
// GELU-tanh's 1 + tanh(u) as kiln::onePlusTanh; the epilogue reads its row coordinates from
// the GEMM row (no division by the row width per element).
// GPT2-DAG: kiln::onePlusTanh(
// GPT2-DAG: const long long r = bz * 16LL + (long long)m;
// GPT2-DAG: float *__restrict__ out0
// GPT2-NOT: gemmTileF32
// RUN: %if ptxas %{ for f in %t.gpt2/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.gpt2.cubin || exit 1; done %}
// RUN: rm -rf %t.gpt2mma && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --sm90-gemm=false -o %t.gpt2mma.kiln --dump-cuda %t.gpt2mma
// RUN: cat %t.gpt2mma/module*.cu | FileCheck %s --check-prefix=GPT2-MMA
// GPT2-MMA-DAG: kiln::gemmTileTC<kiln::f16,
// GPT2-MMA-DAG: kiln::StridedOperand<kiln::f16, true>
// GPT2-MMA-NOT: gemmSm90<

// bf16 likewise; at 1x16 (16 rows) the GEMMs take the few-row kernel in bf16.
// RUN: rm -rf %t.bf16 && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision bf16 -o %t.bf16.kiln --dump-cuda %t.bf16
// RUN: cat %t.bf16/module*.cu | FileCheck %s --check-prefix=BF16
// BF16-DAG: kiln::gemmSkinny<kiln::bf16, 16,
// BF16-DAG: kiln::cvt<kiln::bf16>(
// RUN: %if ptxas %{ for f in %t.bf16/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.bf16.cubin || exit 1; done %}

// --precision tf32 keeps f32 storage and runs the GEMMs on TF32 tensor cores.
// RUN: rm -rf %t.tf32 && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision tf32 -o %t.tf32.kiln --dump-cuda %t.tf32
// RUN: cat %t.tf32/module*.cu | FileCheck %s --check-prefix=TF32
// TF32-DAG: kiln::gemmTileTC<float,
// TF32-DAG: kiln::StridedOperand<float, true>
// TF32-NOT: kiln::f16
// RUN: %if ptxas %{ for f in %t.tf32/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.tf32.cubin || exit 1; done %}

// --wgmma: Hopper wgmma when compiled for sm_90a, the mma.sync tile of the
// same block shape for any other target; the PTX assembles for sm_90a.
// RUN: rm -rf %t.wg && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --wgmma -o %t.wg.kiln --dump-cuda %t.wg
// RUN: cat %t.wg/module*.cu | FileCheck %s --check-prefix=WGMMA
// WGMMA: #if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// WGMMA-NEXT: kiln::gemmTileWgmma<kiln::f16, {{[0-9]+}}, {{[0-9]+}}, 64,
// WGMMA-NEXT: #else
// WGMMA-NEXT: kiln::gemmTileTC<kiln::f16,
// WGMMA-NEXT: #endif
// RUN: %if ptxas %{ for f in %t.wg/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.wg.cubin || exit 1; done %}

// A malformed --mma-tile is an error naming the rule it breaks (#kiln.mma_tile's verifier), or
// the first target's shared memory per block.
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --mma-tile 100x100x32x2x2x4 -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=BADTILE
// BADTILE: kiln-compile: error: invalid --mma-tile '100x100x32x2x2x4': mma_tile bm (100) must be a multiple of 16 x wm (32) and bn (100) of 8 x wn (16)
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --mma-tile 128x128x64x2x4x6 --target sm_86 -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=BADSMEM
// BADSMEM: kiln-compile: error: invalid --mma-tile '128x128x64x2x4x6': its 196608 bytes of shared memory (STAGES*(BM+BN)*BK*2) exceed sm_86's 101376 bytes per block

// Tensor-core GEMMs and bf16 conversions need sm_80: an older target is
// refused before any work.
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --target sm_75 -o %t.75.kiln 2>&1 | FileCheck %s --check-prefix=SM75
// SM75: kiln-compile: error: --precision fp16 needs every --target to be sm_80 or newer (tensor-core GEMMs), got sm_75

// A model that stores f16 tensors itself (an fp16 export) needs sm_80+ too, at any --precision:
// a clear error before code generation instead of an NVRTC failure.
// RUN: not kiln-compile %S/Inputs/f16_cast_relu.onnx --target sm_75 -o %t.f16m75.kiln 2>&1 | FileCheck %s --check-prefix=F16SM75
// F16SM75: kiln-compile: error: '{{.*}}f16_cast_relu.onnx' stores f16 tensors, which need every --target to be sm_80 or newer (tensor-core GEMMs, 16-bit conversions), got sm_75; compile it for sm_80+ or convert the model to fp32

// A model that already stores f16 tensors, compiled with --precision bf16:
// only its f32 tensors convert, and kiln-compile says so.
// RUN: kiln-compile %S/Inputs/f16_cast_relu.onnx --precision bf16 -o %t.kept.kiln 2>&1 | FileCheck %s --check-prefix=KEPT
// KEPT: warning: the model already stores tensors as 'f16'; --precision bf16 converts only its f32 tensors, so 'f16' ones stay 'f16'

// --wgmma without sm_90 as the first target (which decides tiling) would do nothing: it is an
// error, also when sm_90 comes later.
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --wgmma --target sm_80 -o %t.wg80.kiln 2>&1 | FileCheck %s --check-prefix=WG80
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --wgmma --target sm_80 --target sm_90 -o %t.wg80.kiln 2>&1 | FileCheck %s --check-prefix=WG80
// WG80: kiln-compile: error: --wgmma needs sm_90 as the first --target (the first target decides tiling; Hopper's wgmma is built as sm_90a), got sm_80
