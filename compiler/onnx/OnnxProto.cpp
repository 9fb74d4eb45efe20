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
#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>

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

std::vector<std::pair<std::string, std::string>>
kiln::nodeMetadataProps(const onnx::NodeProto &node) {
  // NodeProto field 9: repeated StringStringEntryProto metadata_props (ONNX 1.16).
  constexpr int kMetadataPropsField = 9;
  std::vector<std::pair<std::string, std::string>> props;
  try {
    const google::protobuf::Reflection *reflection = node.GetReflection();
    // ONNX headers from 1.16 on know the field: read it through reflection (the same source
    // builds against either schema).
    if (const google::protobuf::FieldDescriptor *known =
            node.GetDescriptor()->FindFieldByNumber(kMetadataPropsField);
        known && known->is_repeated() &&
        known->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE &&
        known->message_type()->full_name() == "onnx.StringStringEntryProto") {
      for (int i = 0; i < reflection->FieldSize(node, known); ++i) {
        const google::protobuf::Message &entry = reflection->GetRepeatedMessage(node, known, i);
        const google::protobuf::Descriptor *type = entry.GetDescriptor();
        props.emplace_back(
            entry.GetReflection()->GetString(entry, type->FindFieldByName("key")),
            entry.GetReflection()->GetString(entry, type->FindFieldByName("value")));
      }
      return props;
    }
    const google::protobuf::UnknownFieldSet &unknown = reflection->GetUnknownFields(node);
    for (int i = 0; i < unknown.field_count(); ++i) {
      const google::protobuf::UnknownField &field = unknown.field(i);
      if (field.number() != kMetadataPropsField ||
          field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
        continue;
      onnx::StringStringEntryProto entry;
      if (entry.ParseFromString(field.length_delimited()))
        props.emplace_back(entry.key(), entry.value());
    }
  } catch (...) {
    // Metadata is optional: a malformed entry never fails the import.
  }
  return props;
}
