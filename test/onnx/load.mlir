// Model loading: external data and files that are not (complete) ONNX models
// (compiler/onnx/OnnxImporter.cpp, OnnxTensors.cpp, OnnxProto.cpp).

// Initializer `w` lives in Inputs/external_data.bin at offset 8.
// RUN: kiln-compile %S/Inputs/external_data.onnx --emit=graph | FileCheck %s --check-prefix=EXT
// EXT-LABEL: func.func @main(
// EXT: %[[W:.+]] = kiln.constant dense<[1.500000e+00, -2.000000e+00, 3.250000e+00]> : tensor<3xf32>
// EXT: kiln.add %{{.+}}, %[[W]]

// RUN: not kiln-compile %S/Inputs/error_external_bounds.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=EXT-LEN
// EXT-LEN: error: initializer 'w': external data length 16 does not match the 12 bytes of the tensor's type

// RUN: not kiln-compile %S/Inputs/error_external_range.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=EXT-RANGE
// EXT-RANGE: error: initializer 'w': external data [offset 4096, size 12] is outside the 20 bytes of '{{.*}}external_data.bin'

// RUN: not kiln-compile %S/Inputs/error_external_missing.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=EXT-MISSING
// EXT-MISSING: error: initializer 'w': cannot open external data file '{{.*}}missing.bin': No such file or directory

// RUN: not kiln-compile %S/Inputs/error_bad_payload.onnx --shape x=2x3 --emit=graph 2>&1 | FileCheck %s --check-prefix=PAYLOAD
// PAYLOAD: error: initializer 'c': payload has 2 values, its dims [3] need 3

// RUN: not kiln-compile %S/Inputs/does_not_exist.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: cannot read ONNX model '{{.*}}does_not_exist.onnx': No such file or directory

// RUN: not kiln-compile %S/Inputs/error_empty.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: cannot read ONNX model '{{.*}}error_empty.onnx': not an ONNX model (no ir_version or graph)

// RUN: not kiln-compile %S/Inputs/error_random.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=RANDOM
// RANDOM: error: cannot read ONNX model '{{.*}}error_random.onnx': not a valid ONNX protobuf (malformed or truncated)

// RUN: not kiln-compile %S/Inputs/error_truncated.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: cannot read ONNX model '{{.*}}error_truncated.onnx': not a valid ONNX protobuf (malformed or truncated)

// RUN: not kiln-compile %S/Inputs/error_opset.onnx --shape x=2x3 --emit=graph 2>&1 | FileCheck %s --check-prefix=OPSET
// OPSET: error: ONNX model '{{.*}}error_opset.onnx': unsupported: opset 6 of the default domain (kiln imports opsets 7 to 28)

// RUN: not kiln-compile %S/Inputs/error_no_default_opset.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NO-OPSET
// NO-OPSET: error: ONNX model '{{.*}}error_no_default_opset.onnx' does not import the default ONNX opset
