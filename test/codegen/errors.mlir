// Errors of the compiler driver (the importer's own errors are in test/onnx/errors.mlir).
// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 2>&1 | FileCheck %s --check-prefix=NO-OUT
// NO-OUT: error: missing -o <file.kiln>

// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t.kiln --target sm_9x 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: invalid --target 'sm_9x': expected sm_<NN> with NN >= 70, e.g. sm_90

// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t.missing-dir/sub/out.kiln 2>&1 | FileCheck %s --check-prefix=WRITE
// WRITE: error: cannot open '{{.*}}out.kiln' for writing

// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 -o %t.kiln --dump-cuda /proc/kiln-no-such-dir 2>&1 | FileCheck %s --check-prefix=DUMP
// DUMP: error: cannot create --dump-cuda directory '/proc/kiln-no-such-dir'
