// kiln-compile --version names kiln's version, the artifact format it writes and LLVM's version.
// RUN: kiln-compile --version | FileCheck %s
// CHECK: kiln-compile {{[0-9]+\.[0-9]+\.[0-9]+}} (artifact format 1, 2 with --tensor-parallel, 3 with TMA tensor maps)
// CHECK-NEXT: built with LLVM/MLIR 22.
