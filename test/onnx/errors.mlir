// Errors of per-node import: each names the node, op type (with its domain
// unless default), opset and the reason (compiler/onnx/*.cpp).

// RUN: not kiln-compile %S/Inputs/error_contrib_op.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=CONTRIB
// CONTRIB: error: node 'Attention_3' (com.microsoft::Attention, opset 1): unsupported operator

// RUN: not kiln-compile %S/Inputs/error_unknown_op.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OP
// UNKNOWN-OP: error: node 'nms' (NonMaxSuppression, opset 18): unsupported operator

// RUN: not kiln-compile %S/Inputs/error_attribute.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ATTR
// ATTR: error: node 'sm' (Softmax, opset 18): unsupported: attribute 'foo'

// RUN: not kiln-compile %S/Inputs/error_stash_type.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=STASH
// STASH: error: node 'ln' (LayerNormalization, opset 18): unsupported: stash_type 10 (kiln computes statistics in FLOAT)

// RUN: not kiln-compile %S/Inputs/error_nonconst_shape.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NONCONST
// NONCONST: error: node 'reshape' (Reshape, opset 18): unsupported: shape of Reshape must be a constant after shape specialization

// RUN: not kiln-compile %S/Inputs/error_type_mismatch.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=TYPES
// TYPES: error: node 'add' (Add, opset 18): operand element types differ: 'f32' and 'i64'; ONNX requires equal types

// RUN: not kiln-compile %S/Inputs/error_broadcast.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=BROADCAST
// BROADCAST: error: node 'mul' (Mul, opset 18): operand shapes [2, 3] and [4] are not broadcast-compatible

// RUN: not kiln-compile %S/Inputs/error_allowzero.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ALLOWZERO
// ALLOWZERO: error: node 'reshape' (Reshape, opset 18): cannot reshape 'tensor<2x3xf32>' to [0, -1]

// RUN: not kiln-compile %S/Inputs/error_cast_dtype.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=CAST
// CAST: error: node 'cast' (Cast, opset 18): 'to': unsupported: data type DOUBLE (kiln tensors are FLOAT, FLOAT16, BFLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8 or BOOL)

// RUN: not kiln-compile %S/Inputs/error_init_dtype.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=INIT
// INIT: error: initializer 'c': unsupported: data type DOUBLE (kiln tensors are FLOAT, FLOAT16, BFLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8 or BOOL)

// RUN: not kiln-compile %S/Inputs/error_undefined_input.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=UNDEF
// UNDEF: error: node 'add' (Add, opset 18): operand 'nope' is not defined: no graph input, initializer or node output has that name

// RUN: not kiln-compile %S/Inputs/error_output_type.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: error: graph output 'y': declared dim 1 = 4 but kiln computed 'tensor<2x3xf32>'

// Empty operand names (optional-input syntax) where an operand is required.
// RUN: not kiln-compile %S/Inputs/error_concat_empty.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=CONCAT-EMPTY
// CONCAT-EMPTY: error: node 'concat' (Concat, opset 18): operand 0 is empty
// RUN: not kiln-compile %S/Inputs/error_empty_operand.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=EMPTY-OPERAND
// EMPTY-OPERAND: error: node 'add' (Add, opset 18): operand 1 is empty but required

// RUN: not kiln-compile %S/Inputs/error_duplicate_definition.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=DUPDEF
// DUPDEF: error: node 'neg' (Neg, opset 18): output 'a' is already produced by node 'relu' (a tensor name must be defined once)

// RUN: not kiln-compile %S/Inputs/error_output_is_input.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=OUT-IS-IN
// OUT-IS-IN: error: node 'relu' (Relu, opset 18): output 'x' is also a graph input

// Attention: a mask that does not broadcast to the scores (composite and fused paths), and
// nonpad_kv_seqlen that is not one count per batch row (fuzzer-found: these asserted).
// RUN: not kiln-compile %S/Inputs/error_attention_mask_composite.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ATTN-MASK
// RUN: not kiln-compile %S/Inputs/error_attention_mask_fused.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ATTN-MASK
// ATTN-MASK: error: node 'attn' (Attention, opset 24): attn_mask 'tensor<4x5xf32>' does not broadcast to the scores [1, 2, 3, 5] (batch, query heads, queries, keys)
// RUN: not kiln-compile %S/Inputs/error_attention_nonpad.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ATTN-NONPAD
// ATTN-NONPAD: error: node 'attn' (Attention, opset 24): nonpad_kv_seqlen 'tensor<3xi64>' must be int64 [2] (one key count per batch row)

// Split sizes whose sum overflows int64 (fuzzer-found: the sum was undefined behaviour).
// RUN: not kiln-compile %S/Inputs/error_split_overflow.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SPLIT-OVERFLOW
// SPLIT-OVERFLOW: error: node 'split' (Split, opset 18): split [4611686018427387907, 4611686018427387907] does not partition dim 0 of 'tensor<6xf32>'
// RUN: not kiln-compile %S/Inputs/error_attention_mask_scalar.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ATTN-MASK-SCALAR
// ATTN-MASK-SCALAR: error: node 'attn' (Attention, opset 24): attn_mask 'tensor<f32>' must have at least one dim (the keys), broadcast to the scores [1, 2, 3, 5]
