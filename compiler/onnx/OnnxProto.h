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
#include <utility>
#include <vector>

namespace kiln {

/// Parses `size` bytes at `data` as a serialized ModelProto into `model`.
/// Returns false and sets `error` (one lowercase phrase, no file name) if the
/// bytes are not a complete, well-formed ModelProto. Never throws.
bool parseModelProto(const void *data, size_t size, onnx::ModelProto &model,
                     std::string &error);

/// Returns the `metadata_props` (key, value) entries of `node`, in file order.
/// ONNX 1.16 added them to NodeProto as field 9; with an older protobuf schema
/// (Debian 12's) they arrive as unknown fields and are decoded here (entries
/// that do not decode are skipped), with a newer one they are read through
/// reflection. torch.onnx's dynamo
/// exporter stores the module path of each node in them
/// ("pkg.torch.onnx.name_scopes"). Never throws.
std::vector<std::pair<std::string, std::string>> nodeMetadataProps(const onnx::NodeProto &node);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_ONNXPROTO_H
