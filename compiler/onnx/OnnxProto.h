//===- OnnxProto.h - protobuf parsing of ONNX models --------------*- C++ -*-===//
//
// The one entry point that turns bytes into an `onnx::ModelProto`. It lives in
// its own target (KilnOnnxProto, built with exceptions) so that the importer
// proper never sees protobuf's parsing machinery or exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_ONNXPROTO_H
#define KILN_COMPILER_ONNX_ONNXPROTO_H

#include "onnx/onnx_pb.h"

#include <cstddef>
#include <string>

namespace kiln {

/// Parses `size` bytes at `data` as a serialized ModelProto into `model`.
/// Returns false and sets `error` (one lowercase phrase, no file name) if the
/// bytes are not a complete, well-formed ModelProto. Never throws.
bool parseModelProto(const void *data, size_t size, onnx::ModelProto &model,
                     std::string &error);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_ONNXPROTO_H
