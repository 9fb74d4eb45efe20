// Errors of the compiler driver (the importer's own errors are in test/onnx/errors.mlir).
// -o defaults to <model>.kiln in the current directory; an unwritable -o
// fails before the compile: test/cli/output-and-shapes.test.

// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t.kiln --target sm_9x 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: invalid --target 'sm_9x': expected one of sm_75,{{.*}}sm_90

// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t.missing-dir/sub/out.kiln 2>&1 | FileCheck %s --check-prefix=WRITE
// WRITE: error: cannot write '{{.*}}out.kiln': the directory '{{.*}}sub' does not exist

// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t.kiln --dump-cuda /proc/kiln-no-such-dir 2>&1 | FileCheck %s --check-prefix=DUMP
// DUMP: error: cannot create --dump-cuda directory '/proc/kiln-no-such-dir'

// Errors found by passes name the ONNX node (from the op's location) and
// print no IR: a GPT-2 position table of 128 rows compiled for 200 tokens.
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x200 -o %t.kiln 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: gpt2_tiny.onnx: error: node 'node_embedding_1' (Gather): index 128 is out of range for a dimension of size 128 (valid: [-128, 128)); the indices are constant at these input shapes, so an input dimension may be too large for the model (e.g. a sequence longer than a position table of 128 rows)
// RANGE-NOT: see current operation
// RANGE: kiln-compile: error: the kiln pass pipeline failed

// Graphs that import but that codegen does not support stop with an
// `unsupported:` error naming the ONNX node and the kernel.


// Range on constants runs at compile time; past the folding limit the error
// says so.
// RUN: not kiln-compile %S/Inputs/error_range_too_large.onnx -o %t.kiln 2>&1 | FileCheck %s --check-prefix=RANGE-BIG
// RANGE-BIG: error: node 'Range_0' (Range): unsupported: no CUDA emitter for kiln.range in kernel @k0_range; its 8388608-element result exceeds the 4194304-element limit of compile-time folding (use a smaller --shape)

// RUN: not kiln-compile %S/Inputs/error_gemm_batch.onnx --shape x=70000x2x2 -o %t.kiln 2>&1 | FileCheck %s --check-prefix=GEMM-BATCH
// GEMM-BATCH: error: node 'MatMul_0' (MatMul): unsupported: GEMM batch count 70000 (M=2 N=2 K=2) exceeds 65535, the CUDA grid's z limit (one block row per batch); use a smaller --shape

// An empty result (Slice with step -1 from 0 to 4) is an empty constant
// (kiln-eliminate-empty-tensors), never a zero-sized launch.
// RUN: kiln-compile %S/Inputs/error_empty_slice.onnx -o %t.kiln | FileCheck %s --check-prefix=EMPTY
// EMPTY: kernels: 0

// Graphs whose artifact the runtime could not use are rejected before writing.
// RUN: not kiln-compile %S/Inputs/error_no_outputs.onnx -o %t.kiln 2>&1 | FileCheck %s --check-prefix=NO-OUTPUTS
// NO-OUTPUTS: error: the model has no outputs; nothing to compile
// RUN: not kiln-compile %S/Inputs/error_duplicate_output.onnx -o %t.kiln 2>&1 | FileCheck %s --check-prefix=DUP-OUTPUT
// DUP-OUTPUT: error: graph output 'y' is listed twice in '{{.*}}error_duplicate_output.onnx'; kiln binds outputs by name, so each may be listed once

// Tensors larger than any GPU are an error naming the node, not an attempt to
// materialize them (a 4 TB constant from a 200-byte model).
// RUN: not kiln-compile %S/Inputs/error_huge_constant.onnx -o %t.kiln 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error_huge_constant.onnx: error: node 'ConstantOfShape_0' (ConstantOfShape): unsupported: tensor 'tensor<1048576x1048576xf32>' is larger than the 128 GiB kiln compiles; use smaller --shape values
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=4294967296x2 -o %t.kiln 2>&1 | FileCheck %s --check-prefix=HUGE-SHAPE
// HUGE-SHAPE: error: node 'node_Gemm_347' (Gemm, opset 18): output 0 ('addmm') is 'tensor<8589934592x384xf32>', more than 2^40 elements; use smaller --shape values

// Targets are checked against what this NVRTC supports (CUDA 13 dropped Volta).
// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t.kiln --target sm_70 2>&1 | FileCheck %s --check-prefix=SM70
// SM70: error: invalid --target 'sm_70': expected one of sm_75,{{.*}}sm_90

// A full disk is a clean error, and no partial artifact stays behind.
// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o /dev/full 2>&1 | FileCheck %s --check-prefix=FULL
// FULL: error: cannot write '/dev/full': No space left on device

// --emit=graph / kernels write MLIR to -o when given.
// RUN: kiln-compile %S/Inputs/chain.onnx --shape x=2x8 --emit=kernels -o %t.mlir | count 0
// RUN: FileCheck %s --check-prefix=EMIT-FILE --input-file=%t.mlir
// EMIT-FILE: kiln.kernel @k0_fused_add_tanh_mul

// A repeated --shape is one spec: a name given twice is an error, not "last wins".
// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 --shape x=4x8 -o %t.kiln 2>&1 | FileCheck %s --check-prefix=SHAPE-TWICE
// SHAPE-TWICE: error: invalid --shape 'x=4x8': input 'x' is given twice (first as 'x=2x8')

// --dump-cuda needs code generation.
// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 --emit=graph --dump-cuda %t.cuda 2>&1 | FileCheck %s --check-prefix=DUMP-GRAPH
// DUMP-GRAPH: error: --dump-cuda needs --emit=artifact (the default)
