// Programmatic dependent launch (PDL): every generated kernel starts with
// kiln::gridDependencyWait() (griddepcontrol.wait; cuda/common.cuh; --programmatic-launch=at-exit)
// or kiln::gridDependencySync() (wait, then launch_dependents; =early); the default, =auto, is
// early in a program whose GEMMs have at most 256 rows and at-exit elsewhere; and the
// artifact marks its launches programmatic_launch, so that the runtime on sm_90+ lets each kernel
// start while the previous one still runs (docs/runtime.md). The PTX of the lowest target is what
// a newer GPU JIT-compiles: with an sm_80 target it has no griddepcontrol (the instruction does
// not exist there), so no launch is marked. ptxas-check (check_ptx.py) checks the rule on the
// PTX of every shared model: no global memory access before griddepcontrol.wait.
// RUN: rm -rf %t && mkdir %t && kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 -o %t/sm90.kiln --dump-cuda %t/sm90
// RUN: %python %S/check_programmatic_launch.py kiln::gridDependencySync %t/sm90
// RUN: kiln-run %t/sm90.kiln --info | FileCheck %s --check-prefix=SM90
// 4 x 80 = 320 GEMM rows, past auto's 256: at-exit.
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=4x80 --precision fp16 -o %t/long.kiln --dump-cuda %t/long
// RUN: %python %S/check_programmatic_launch.py kiln::gridDependencyWait %t/long
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --programmatic-launch=at-exit -o %t/atexit.kiln --dump-cuda %t/atexit
// RUN: %python %S/check_programmatic_launch.py kiln::gridDependencyWait %t/atexit
// RUN: kiln-run %t/atexit.kiln --info | FileCheck %s --check-prefix=SM90
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --programmatic-launch=early -o %t/early.kiln --dump-cuda %t/early
// RUN: %python %S/check_programmatic_launch.py kiln::gridDependencySync %t/early
// RUN: kiln-run %t/early.kiln --info | FileCheck %s --check-prefix=SM90
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --programmatic-launch=off -o %t/off.kiln --dump-cuda %t/off
// RUN: not grep -l griddepcontrol %t/off/module0.ptx
// RUN: kiln-run %t/off.kiln --info | FileCheck %s --check-prefix=SM80
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --target sm_80 -o %t/sm80.kiln --dump-cuda %t/sm80
// RUN: not grep -l griddepcontrol %t/sm80/module0.ptx
// RUN: kiln-run %t/sm80.kiln --info | FileCheck %s --check-prefix=SM80
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --precision fp16 --target sm_90,sm_80 -o %t/both.kiln
// RUN: kiln-run %t/both.kiln --info | FileCheck %s --check-prefix=SM80
// Asked for on such a target, it warns (and compiles in plain stream order).
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x16 --programmatic-launch=early --target sm_90,sm_80 -o %t/warn.kiln 2>&1 | FileCheck %s --check-prefix=WARN
// WARN: kiln-compile: warning: --programmatic-launch has no effect: target sm_80 is below sm_90 (no griddepcontrol there), so every kernel runs in plain stream order

// SM90: 0: kiln_k{{[0-9]+}} (module module{{[0-9]}}) grid={{.*}} args={{[0-9]+}} programmatic
// SM90-NOT: args={{[0-9]+}}{{$}}

// SM80: 0: kiln_k{{[0-9]+}} (module module{{[0-9]}}) grid={{.*}} args={{[0-9]+}}{{$}}
// SM80-NOT: programmatic
