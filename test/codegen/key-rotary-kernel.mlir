// RUN: rm -rf %t.fused %t.kernel
// RUN: kiln-compile %S/Inputs/attention_rope.onnx --precision fp16 --attention-key-rotary=fused -o %t.fused.kiln --dump-cuda %t.fused
// RUN: cat %t.fused/module*.cu | FileCheck %s --check-prefix=FUSED
// RUN: kiln-compile %S/Inputs/attention_rope.onnx --precision fp16 --attention-key-rotary=kernel -o %t.kernel.kiln --dump-cuda %t.kernel
// RUN: cat %t.kernel/module*.cu | FileCheck %s --check-prefix=KERNEL
// RUN: %if ptxas %{ for f in %t.kernel/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}
// RUN: not kiln-compile %S/Inputs/attention_rope.onnx --attention-key-rotary=kernel --pass-pipeline='builtin.module(kiln-pipeline)' -o %t.x.kiln 2>&1 | FileCheck %s --check-prefix=PIPELINE

// attention_rope.onnx (Llama attention with RoPE, GQA). By default (--attention-key-rotary=kernel)
// K is rotated once, in a pointwise kernel of its own, and attention reads the rotated K; Q's
// rotary stays fused (each block rotates its Q tile once in shared memory).
// --attention-key-rotary=fused rotates each K tile in shared memory in every block that reads it
// (8% slower on the 0.8B Llama at 4x512, H200, docs/results.md session 10).
// RUN: kiln-compile %S/Inputs/attention_rope.onnx --precision fp16 -o %t.default.kiln --dump-cuda %t.default
// RUN: cat %t.default/module*.cu | FileCheck %s --check-prefix=KERNEL
// FUSED: const auto ropeQ = kiln::makeRope(
// FUSED: const auto ropeK = kiln::makeRope(
// KERNEL-DAG: used by @k{{[0-9]+}}_fused_rotary_slice_transpose
// KERNEL-DAG: const auto ropeQ = kiln::makeRope(
// KERNEL-DAG: const auto ropeK = kiln::NoRope{};

// PIPELINE: error: --attention-key-rotary configures the default pipeline and has no effect with --pass-pipeline; give it as a pipeline option in the text: kiln-pipeline{fuse-key-rotary=false}
