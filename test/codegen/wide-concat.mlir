// Concats of many operands compile into kernels of bounded size and argument
// count (kiln-split-wide-concats, fusion's max-inputs-per-kernel), and the
// artifact loads. Regressions: 10,000 Neg nodes into one Concat crashed
// kiln-compile (NVRTC overflowed its stack on one `else if` per operand;
// 3,000 took 17-36 s); a Concat of 513 graph inputs compiled into a launch
// of 514 arguments that kiln-run refused (the limit is 512).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/gen_wide_concat.py neg 10000 %t/neg.onnx
// RUN: kiln-compile %t/neg.onnx -o %t/neg.kiln --dump-cuda %t/neg-cuda | FileCheck %s --check-prefix=NEG
// NEG: wrote {{.*}}neg.kiln
// RUN: kiln-run %t/neg.kiln --info | FileCheck %s --check-prefix=INFO
// INFO: y: f32[10000x4]
// The operand is found by a binary search over the offsets: no `else if`
// chain, and nesting stays shallow.
// RUN: cat %t/neg-cuda/*.cu > %t/neg.cu
// RUN: not grep -q "else if" %t/neg.cu
// RUN: FileCheck %s --check-prefix=CUDA --input-file %t/neg.cu
// CUDA: if (c0 < {{[0-9]+}}LL) {
// CUDA: } else {
//
// RUN: %python %S/gen_wide_concat.py inputs 513 %t/inputs.onnx
// RUN: kiln-compile %t/inputs.onnx -o %t/inputs.kiln
// RUN: kiln-run %t/inputs.kiln --info | FileCheck %s --check-prefix=INPUTS
// INPUTS: x512: f32[1x4]
// INPUTS: y: f32[513x4]
//
// A value re-read at exponentially many coordinates (24 nested concats of
// one tensor) stops at the kernel source limit with an error, not a crash.
// RUN: %python %S/gen_wide_concat.py nested 24 %t/nested.onnx
// RUN: not kiln-compile %t/nested.onnx -o %t/nested.kiln 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: error: node 's23' (Slice): unsupported: the CUDA source of kernel @k0_fused_concat_slice exceeds 4 MiB (a value is re-evaluated at too many coordinates, e.g. nested concats of one tensor); compile with --no-fuse
// NESTED: kiln-compile: error: CUDA code generation failed for '{{.*}}nested.onnx'
