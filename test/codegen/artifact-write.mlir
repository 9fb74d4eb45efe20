// How kiln-compile writes the artifact: to stdout with `-o -`, atomically over
// an existing file (a failed write keeps the previous artifact), in place for
// special files, and never over the input model.
// RUN: rm -rf %t && mkdir -p %t

// -o FILE: the summary goes to stdout.
// RUN: kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t/file.kiln | FileCheck %s --check-prefix=SUMMARY-FILE
// SUMMARY-FILE: wrote {{.*}}file.kiln ({{[0-9]+}} bytes, weights

// -o - writes exactly the artifact to stdout (byte-identical to -o FILE, since
// kiln-compile is deterministic) and the summary to stderr.
// RUN: kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o - > %t/stdout.kiln 2> %t/stdout.summary
// RUN: FileCheck %s --check-prefix=SUMMARY-STDOUT --input-file=%t/stdout.summary
// SUMMARY-STDOUT: wrote <stdout> ({{[0-9]+}} bytes, weights
// SUMMARY-STDOUT-NEXT: kernels: 1 (1 distinct, in 1 CUDA module)
// RUN: cmp %t/file.kiln %t/stdout.kiln
// RUN: kiln-run %t/stdout.kiln --info | FileCheck %s --check-prefix=INFO
// INFO: artifact: {{.*}}stdout.kiln (producer 'kiln-compile')

// The same through a pipe, and for a path that names stdout (/dev/stdout
// redirected to a file): the summary must not land on the artifact.
// RUN: kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o - 2>/dev/null | cat > %t/pipe.kiln
// RUN: cmp %t/file.kiln %t/pipe.kiln
// RUN: kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o /dev/stdout > %t/devstdout.kiln 2> %t/devstdout.summary
// RUN: cmp %t/file.kiln %t/devstdout.kiln
// RUN: FileCheck %s --check-prefix=SUMMARY-STDOUT --input-file=%t/devstdout.summary

// A failed write to stdout is an error, not an abort.
// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o - > /dev/full 2> %t/full.err
// RUN: FileCheck %s --check-prefix=STDOUT-FULL --input-file=%t/full.err
// STDOUT-FULL: error: cannot write the artifact to stdout: No space left on device
// STDOUT-FULL-NOT: LLVM ERROR

// --emit=graph/kernels with -o - keep printing MLIR to stdout.
// RUN: kiln-compile %S/Inputs/chain.onnx --shape x=2x8 --emit=kernels -o - | FileCheck %s --check-prefix=EMIT-STDOUT
// EMIT-STDOUT: kiln.kernel @k0_fused_add_tanh_mul

// A write that fails half-way (here: the file size limit, which holds for root
// too; SIGXFSZ ignored so write() fails with EFBIG) leaves the previous
// artifact untouched and no temporary file behind. (LLVM's signal handler
// still prints a stack dump for the SIGXFSZ before write() returns the error.)
// RUN: cp %t/file.kiln %t/keep.kiln
// RUN: not sh -c 'trap "" XFSZ; ulimit -f 2; exec kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t/keep.kiln' 2>&1 | FileCheck %s --check-prefix=TOO-LARGE
// TOO-LARGE: error: cannot write '{{.*}}keep.kiln': File too large
// RUN: cmp %t/file.kiln %t/keep.kiln
// RUN: ls %t | FileCheck %s --check-prefix=NO-TEMP
// NO-TEMP-NOT: .tmp-
// A model that fails to compile leaves it untouched too.
// RUN: not kiln-compile %S/Inputs/error_no_outputs.onnx -o %t/keep.kiln 2>&1 | FileCheck %s --check-prefix=NO-OUTPUTS
// NO-OUTPUTS: kiln-compile: error:
// RUN: cmp %t/file.kiln %t/keep.kiln
// So does a failing --emit=graph/kernels for an existing text file.
// RUN: echo keep > %t/keep.mlir
// RUN: not kiln-compile %S/../onnx/Inputs/error_gather_empty_axis.onnx --emit=kernels -o %t/keep.mlir 2> /dev/null
// RUN: FileCheck %s --check-prefix=KEEP-TEXT --input-file=%t/keep.mlir
// KEEP-TEXT: keep

// Writing through a symbolic link replaces its target and keeps the link.
// RUN: ln -s keep.kiln %t/link.kiln
// RUN: kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t/link.kiln > /dev/null
// RUN: test -L %t/link.kiln
// RUN: cmp %t/file.kiln %t/keep.kiln

// Special files are written in place (and never replaced or removed).
// RUN: kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o /dev/null | FileCheck %s --check-prefix=DEV-NULL
// DEV-NULL: wrote /dev/null (
// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: error: cannot write '{{.*}}': it is a directory

// -o naming the input model (same path, a hard link, or stdout redirected into
// it) is an error before anything is written; the model is unchanged.
// RUN: cp %S/Inputs/chain.onnx %t/model.onnx
// RUN: not kiln-compile %t/model.onnx --shape x=2x8 -o %t/model.onnx 2>&1 | FileCheck %s --check-prefix=SAME
// SAME: kiln-compile: error: output '{{.*}}model.onnx' is the input model '{{.*}}model.onnx' (the same file); choose another -o
// RUN: ln %t/model.onnx %t/hardlink.onnx
// RUN: not kiln-compile %t/model.onnx --shape x=2x8 -o %t/hardlink.onnx 2>&1 | FileCheck %s --check-prefix=SAME-LINK
// SAME-LINK: error: output '{{.*}}hardlink.onnx' is the input model '{{.*}}model.onnx' (the same file)
// RUN: not kiln-compile %t/model.onnx --shape x=2x8 --emit=graph -o %t/hardlink.onnx 2>&1 | FileCheck %s --check-prefix=SAME-LINK
// RUN: not kiln-compile %t/model.onnx --shape x=2x8 -o - >> %t/model.onnx 2> %t/same-stdout.err
// RUN: FileCheck %s --check-prefix=SAME-STDOUT --input-file=%t/same-stdout.err
// SAME-STDOUT: error: output '-' is the input model '{{.*}}model.onnx' (the same file)
// RUN: cmp %S/Inputs/chain.onnx %t/model.onnx
