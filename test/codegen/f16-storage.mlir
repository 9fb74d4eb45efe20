// A model with f16 tensors (an fp16 export) compiles: 16-bit floats are kept
// in memory as kiln::f16 and computed in fp32 registers; stores round and
// saturate through kiln::cvt.
// RUN: rm -rf %t.dir && kiln-compile %S/Inputs/f16_cast_relu.onnx -o %t.kiln --dump-cuda %t.dir
// RUN: cat %t.dir/module0.cu | FileCheck %s
// CHECK: kiln::f16 *__restrict__ out0
// CHECK: kiln::cvt<kiln::f16>(

// --precision fp16 stores an f32 model in fp16; GEMMs run on the tensor
// cores (kiln::gemmTileTC) and the f32 graph output is converted back.
// RUN: rm -rf %t.gpt2 && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 -o %t.gpt2.kiln --dump-cuda %t.gpt2
// RUN: cat %t.gpt2/module*.cu | FileCheck %s --check-prefix=GPT2
// GPT2-DAG: kiln::gemmTileTC<kiln::f16,
// GPT2-DAG: kiln::StridedOperand<kiln::f16, true>
// GPT2-DAG: kiln::layerNormRow(
// GPT2-DAG: float *__restrict__ out0
// GPT2-NOT: gemmTileF32

// bf16 likewise.
// RUN: rm -rf %t.bf16 && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision bf16 -o %t.bf16.kiln --dump-cuda %t.bf16
// RUN: cat %t.bf16/module*.cu | FileCheck %s --check-prefix=BF16
// BF16-DAG: kiln::gemmTileTC<kiln::bf16,
// BF16-DAG: kiln::cvt<kiln::bf16>(
