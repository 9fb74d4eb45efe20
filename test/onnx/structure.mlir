// Structural checks of the importer (docs/importer.md, "Structural checks"):
// models that onnx.checker and onnxruntime reject, names the runtime would
// refuse, and sizes that overflowed int64 (issue Reliability). Models from
// gen_onnx_tests.py's structure_checks().
//
// RUN: not kiln-compile %S/Inputs/error_duplicate_graph_input.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=DUP-IN
// DUP-IN: error: graph input 'x' is listed twice in '{{.*}}error_duplicate_graph_input.onnx' (a tensor name must be defined once)
// RUN: not kiln-compile %S/Inputs/error_duplicate_graph_output.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=DUP-OUT
// DUP-OUT: error: graph output 'y' is listed twice in '{{.*}}error_duplicate_graph_output.onnx'; kiln binds outputs by name, so each may be listed once
// RUN: not kiln-compile %S/Inputs/error_empty_graph_input.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=EMPTY-IN
// EMPTY-IN: error: graph input 1 of '{{.*}}error_empty_graph_input.onnx' has an empty name
// RUN: not kiln-compile %S/Inputs/error_duplicate_initializer.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=DUP-INIT
// DUP-INIT: error: initializer 'c' is listed twice in '{{.*}}error_duplicate_initializer.onnx' (a tensor name must be defined once)
//
// A node without outputs, and nodes listing fewer outputs than their handler
// computes (found by fuzzing: the optional outputs were written past the end).
// RUN: not kiln-compile %S/../fuzz/regressions/onnx/node-without-outputs-setresult.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NO-OUTPUTS
// NO-OUTPUTS: error: node 'relu_without_outputs' (Relu, opset 17): has no outputs; every ONNX operator has at least one
// RUN: kiln-compile %S/../fuzz/regressions/onnx/layernorm-one-output-setresult.onnx --emit=kernels -o /dev/null
// RUN: kiln-compile %S/../fuzz/regressions/onnx/attention23-setresult.onnx --emit=kernels -o /dev/null
// RUN: kiln-compile %S/../fuzz/regressions/onnx/skip-layernorm-setresult.onnx --emit=kernels -o /dev/null
//
// RUN: not kiln-compile %S/Inputs/error_duplicate_attribute.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=DUP-ATTR
// DUP-ATTR: error: node 'sm' (Softmax, opset 18): attribute 'axis' is given twice
// RUN: not kiln-compile %S/Inputs/error_attribute_wrong_field.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=FIELD
// FIELD: error: node 'sm' (Softmax, opset 18): attribute 'axis' is declared INT but sets the field 'f' (expected 'i' only)
// RUN: not kiln-compile %S/Inputs/error_attribute_no_value.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NO-VALUE
// NO-VALUE: error: node 'sm' (Softmax, opset 18): attribute 'axis' is declared INT but has no value in its field 'i'
// RUN: not kiln-compile %S/Inputs/error_too_many_outputs.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=OUTPUTS
// OUTPUTS: error: node 'relu' (Relu, opset 18): has 2 outputs; Relu has at most 1
// RUN: not kiln-compile %S/Inputs/error_ir_version.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=IR
// IR: error: cannot read ONNX model '{{.*}}error_ir_version.onnx': unsupported ir_version 1000000 (kiln reads IR versions 3 to 14)
// RUN: not kiln-compile %S/Inputs/error_slice_starts_2d.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SLICE
// SLICE: error: node 'slice' (Slice, opset 18): 'starts' must be a 1-D tensor, got 'tensor<1x1xi64>'
//
// Element counts are computed with overflow checks and bounded by 2^40.
// RUN: not kiln-compile %S/Inputs/error_reshape_overflow.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=RESHAPE
// RESHAPE: error: node 'reshape' (Reshape, opset 18): shape [4294967296, 4294967296, 4, -1] has more than 2^40 elements
// RUN: not kiln-compile %S/Inputs/error_tile_overflow.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=TILE
// TILE: error: node 'tile' (Tile, opset 18): repeats [4611686018427387904, 1] of 'tensor<2x3xf32>' give more than 2^40 elements
// RUN: not kiln-compile %S/Inputs/error_expand_overflow.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=EXPAND
// EXPAND: error: node 'expand' (Expand, opset 18): broadcasting [2, 3] and [4294967296, 4294967296, 2, 3] gives [4294967296, 4294967296, 2, 3], more than 2^40 elements
// RUN: not kiln-compile %S/Inputs/error_constant_of_shape_overflow.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=COS
// COS: error: node 'cos' (ConstantOfShape, opset 18): shape [4294967296, 4294967296, 4] has more than 2^40 elements
// RUN: not kiln-compile %S/Inputs/error_range_huge.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: error: node 'range' (Range, opset 18): start 0.000000e+00, limit 1.000000e+30 and delta 1.000000e+00 give more than 2^40 elements
// RUN: not kiln-compile %S/Inputs/error_input_dims_overflow.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=INPUT-DIMS
// INPUT-DIMS: error: graph input 'x': shape [4294967296, 4294967296, 4] has more than 2^40 elements
// RUN: not kiln-compile %S/Inputs/error_initializer_dims_overflow.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=INIT-DIMS
// INIT-DIMS: error: initializer 'c': tensor has more than 2^40 elements
// RUN: not kiln-compile %S/Inputs/error_symbolic.onnx --shape x=4294967296x4294967296 --emit=graph 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: invalid --shape 'x=4294967296x4294967296': 'x' has more than 2^40 elements
//
// A FIFO never blocks kiln-compile or kiln-run: inputs are checked before
// they are opened, outputs opened without waiting for a reader.
// RUN: rm -rf %t && mkdir -p %t && mkfifo %t/fifo
// RUN: not kiln-compile %t/fifo --emit=graph 2>&1 | FileCheck %s --check-prefix=FIFO-MODEL
// FIFO-MODEL: error: cannot read ONNX model '{{.*}}fifo': not a regular file (a FIFO, socket or device)
// RUN: not kiln-compile %S/Inputs/error_symbolic.onnx --shape x=2x3 -o %t/fifo 2>&1 | FileCheck %s --check-prefix=FIFO-OUT
// FIFO-OUT: error: cannot open '{{.*}}fifo' for writing: it is a FIFO that no process is reading
// RUN: not kiln-run %t/fifo --info 2>&1 | FileCheck %s --check-prefix=FIFO-ARTIFACT
// FIFO-ARTIFACT: error: cannot open artifact '{{.*}}fifo': not a regular file
// RUN: kiln-compile %S/Inputs/error_symbolic.onnx --shape x=2x3 -o %t/relu.kiln
// RUN: not kiln-run %t/relu.kiln --input x=%t/fifo 2>&1 | FileCheck %s --check-prefix=FIFO-NPY
// FIFO-NPY: error: '{{.*}}fifo': not a .npy file
// RUN: mkdir -p %t/ext && cp %S/Inputs/external_data.onnx %t/ext/ && mkfifo %t/ext/external_data.bin
// RUN: not kiln-compile %t/ext/external_data.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=FIFO-EXT
// FIFO-EXT: error: initializer '{{.+}}': cannot open external data file '{{.*}}external_data.bin': not a regular file (a FIFO, socket or device)
