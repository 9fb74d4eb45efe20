//===- OnnxProto.cpp - protobuf parsing of ONNX models --------------------===//
//
// Parses a serialized ModelProto with a CodedInputStream whose limit allows
// the 2 GiB protobuf maximum, and turns every failure (including exceptions
// thrown by protobuf on hostile input) into an error string.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxProto.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <exception>

bool kiln::parseModelProto(const void *data, size_t size, onnx::ModelProto &model,
                           std::string &error) {
  if (size > size_t(INT_MAX)) {
    error = "file is larger than 2 GiB, the protobuf limit; store the weights as "
            "ONNX external data";
    return false;
  }
  try {
    google::protobuf::io::ArrayInputStream raw(data, int(size));
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
      error = "not a valid ONNX protobuf (malformed or truncated)";
      return false;
    }
  } catch (const std::exception &e) {
    error = std::string("not a valid ONNX protobuf (") + e.what() + ")";
    return false;
  } catch (...) {
    error = "not a valid ONNX protobuf";
    return false;
  }
  return true;
}
