// --shape specialization of graph inputs (compiler/onnx/OnnxImporter.cpp).

// RUN: kiln-compile %S/Inputs/error_symbolic.onnx --shape x=2x16 --emit=graph | FileCheck %s
// CHECK: func.func @main(%{{.+}}: tensor<2x16xf32> {kiln.name = "x"}) -> (tensor<2x16xf32> {kiln.name = "y"})

// RUN: not kiln-compile %S/Inputs/error_symbolic.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NO-SHAPE
// NO-SHAPE: error: graph input 'x': symbolic dims 'batch', 'seq' need a value; give its shape with --shape x=...

// RUN: not kiln-compile %S/Inputs/error_symbolic.onnx --shape x=2x3x4 --emit=graph 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: graph input 'x': --shape gives rank 3 [2, 3, 4] but the input has rank 2

// RUN: not kiln-compile %S/Inputs/elementwise.onnx --shape x=2x4 --emit=graph 2>&1 | FileCheck %s --check-prefix=CONFLICT
// CONFLICT: error: graph input 'x': --shape gives dim 1 = 4 but the model fixes it to 3

// RUN: not kiln-compile %S/Inputs/elementwise.onnx --shape x=2x3,z=1 --emit=graph 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: --shape names 'z', which is not a graph input of '{{.*}}elementwise.onnx' (inputs: x, y)

// RUN: not kiln-compile %S/Inputs/elementwise.onnx --shape x=2xa --emit=graph 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: invalid --shape 'x=2xa': dim 'a' of 'x' is not a non-negative integer

// RUN: not kiln-compile %S/Inputs/error_input_dtype.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: graph input 'd': unsupported: data type DOUBLE (kiln tensors are FLOAT, FLOAT16, BFLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8 or BOOL)

// --shape values are checked before import: sizes over 2^40
// elements, misspelled names (reported before the real input's missing
// shape), and one value per symbolic dim across inputs.
// A 0 dim is accepted (zero-size tensors: test/onnx/empty-tensors.mlir); GPT-2's
// attention-head Reshape [0, 16, -1, 32] is then ambiguous, as in onnxruntime and torch.
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=0x16 --emit=graph 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: node 'node_view_3' (Reshape, opset 18): cannot reshape 'tensor<0x16x128xf32>' to [0, 16, -1, 32]: with zero elements the -1 dim is ambiguous (any size fits; onnxruntime and torch reject it too)
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=9223372036854775807x2 --emit=graph 2>&1 | FileCheck %s --check-prefix=TOO-MANY
// TOO-MANY: error: invalid --shape 'input_ids=9223372036854775807x2': 'input_ids' has more than 2^40 elements
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape inputids=1x16 --emit=graph 2>&1 | FileCheck %s --check-prefix=MISSPELLED
// MISSPELLED: error: --shape names 'inputids', which is not a graph input of '{{.*}}gpt2_tiny.onnx' (inputs: input_ids)
// RUN: not kiln-compile %S/../codegen/Inputs/two_inputs.onnx --shape a=2x16,b=1x16 --emit=graph 2>&1 | FileCheck %s --check-prefix=SYMBOL
// SYMBOL: error: --shape gives the symbolic dim 'batch' the value 1 for 'b' but 2 for 'a'
