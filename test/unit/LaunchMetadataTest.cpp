//===- LaunchMetadataTest.cpp - launch names, value ranges, generated inputs, traces -===//
//
// No GPU needed. The optional Launch description fields (name, layer, ops, ONNX nodes, cost) and
// TensorDesc.value_range as the C API reads them back (and the verifier's checks of them); files
// without them; kiln-run's input generator (InputGen.h: spec parsing, determinism, ranges,
// errors, f16/bf16 rounding, the value-range check of inputs); the --json description and the
// Chrome trace document (Report.h); and kiln-run's errors for generated inputs and --trace.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"
#include "kiln/runtime.hpp"

#include "InputGen.h"
#include "JsonWriter.h"
#include "Npy.h"
#include "Report.h"
#include "InputValues.h"
#include "TestArtifact.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>

namespace fb = kiln::artifact;
using kiln::test::ArtifactBuilder;
namespace gen = kiln::inputgen;

namespace {

/// Opens `bytes` (written to a temp file `name`); the caller releases the artifact.
kiln_artifact_t *openFile(const std::vector<uint8_t> &bytes, const std::string &name,
                          std::string *error = nullptr) {
  std::string path = kiln::test::writeTempFile(name, bytes);
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  if (error)
    *error = kiln_status_message(status);
  kiln_status_free(status);
  return artifact;
}

/// The add model with a described launch and an i64 input "ids" of 4 elements with a value range
/// [0, 49] (an embedding of 50 rows).
std::vector<uint8_t> describedFile(const std::function<void(fb::ModelT &)> &mutate = {}) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  fb::LaunchT &launch = *builder.model.launches[0];
  launch.name = "h.0.attn: matmul+add";
  launch.layer = "h.0.attn";
  launch.ops = {"matmul", "reshape", "add"};
  launch.nodes = {"/m/h.0/attn/MatMul", "/m/h.0/Add"};
  launch.node_count = 5;
  launch.flops = 1024;
  launch.bytes_read = 4096;
  launch.bytes_written = 16;
  auto ids = std::make_unique<fb::TensorDescT>();
  ids->name = "ids";
  ids->dtype = fb::DType::I64;
  ids->shape = {4};
  ids->value_range = std::make_unique<fb::ValueRange>(0, 49);
  builder.model.inputs.push_back(std::move(ids));
  if (mutate)
    mutate(builder.model);
  return builder.build();
}

TEST(LaunchMetadata, AccessorsReadTheRecordedDescription) {
  kiln_artifact_t *artifact = openFile(describedFile(), "described.kiln");
  ASSERT_NE(artifact, nullptr);
  EXPECT_STREQ(kiln_artifact_launch_name(artifact, 0), "h.0.attn: matmul+add");
  EXPECT_STREQ(kiln_artifact_launch_layer(artifact, 0), "h.0.attn");
  ASSERT_EQ(kiln_artifact_launch_op_count(artifact, 0), 3u);
  EXPECT_STREQ(kiln_artifact_launch_op(artifact, 0, 0), "matmul");
  EXPECT_STREQ(kiln_artifact_launch_op(artifact, 0, 2), "add");
  ASSERT_EQ(kiln_artifact_launch_node_count(artifact, 0), 2u);
  EXPECT_EQ(kiln_artifact_launch_node_total(artifact, 0), 5u);
  EXPECT_STREQ(kiln_artifact_launch_node(artifact, 0, 1), "/m/h.0/Add");
  kiln_launch_cost_t cost;
  ASSERT_EQ(kiln_artifact_launch_cost(artifact, 0, &cost), nullptr);
  EXPECT_EQ(cost.flops, 1024u);
  EXPECT_EQ(cost.bytes_read, 4096u);
  EXPECT_EQ(cost.bytes_written, 16u);

  int has = -1;
  int64_t lo = -1, hi = -1;
  ASSERT_EQ(kiln_artifact_input_value_range(artifact, 1, &has, &lo, &hi), nullptr);
  EXPECT_EQ(has, 1);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 49);
  ASSERT_EQ(kiln_artifact_input_value_range(artifact, 0, &has, &lo, &hi), nullptr);
  EXPECT_EQ(has, 0) << "the f32 input records no range";
  kiln_artifact_release(artifact);
}

TEST(LaunchMetadata, AccessorsAreBoundsChecked) {
  kiln_artifact_t *artifact = openFile(describedFile(), "bounds.kiln");
  ASSERT_NE(artifact, nullptr);
  EXPECT_EQ(kiln_artifact_launch_name(artifact, 1), nullptr);
  EXPECT_EQ(kiln_artifact_launch_layer(artifact, 1), nullptr);
  EXPECT_EQ(kiln_artifact_launch_op_count(artifact, 1), 0u);
  EXPECT_EQ(kiln_artifact_launch_op(artifact, 0, 3), nullptr);
  EXPECT_EQ(kiln_artifact_launch_op(artifact, 1, 0), nullptr);
  EXPECT_EQ(kiln_artifact_launch_node_count(artifact, 1), 0u);
  EXPECT_EQ(kiln_artifact_launch_node_total(artifact, 1), 0u);
  EXPECT_EQ(kiln_artifact_launch_node(artifact, 0, 2), nullptr);
  EXPECT_EQ(kiln_artifact_launch_name(nullptr, 0), nullptr);
  EXPECT_EQ(kiln_artifact_launch_op_count(nullptr, 0), 0u);

  kiln_launch_cost_t cost;
  cost.flops = 7;
  kiln_status_t status = kiln_artifact_launch_cost(artifact, 1, &cost);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_NE(std::strstr(kiln_status_message(status), "launch index 1 is out of range"), nullptr);
  EXPECT_EQ(cost.flops, 0u) << "out_cost is zeroed on entry";
  kiln_status_free(status);
  status = kiln_artifact_launch_cost(artifact, 0, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);

  int has = 0;
  int64_t lo = 0, hi = 0;
  status = kiln_artifact_input_value_range(artifact, 2, &has, &lo, &hi);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  kiln_status_free(status);
  status = kiln_artifact_input_value_range(artifact, 0, nullptr, &lo, &hi);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  kiln_artifact_release(artifact);
}

TEST(LaunchMetadata, FilesWithoutTheFieldsReadAsUnnamed) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  kiln_artifact_t *artifact = openFile(builder.build(), "plain.kiln");
  ASSERT_NE(artifact, nullptr);
  EXPECT_STREQ(kiln_artifact_launch_name(artifact, 0), "");
  EXPECT_STREQ(kiln_artifact_launch_layer(artifact, 0), "");
  EXPECT_EQ(kiln_artifact_launch_op_count(artifact, 0), 0u);
  EXPECT_EQ(kiln_artifact_launch_node_total(artifact, 0), 0u);
  kiln_launch_cost_t cost;
  ASSERT_EQ(kiln_artifact_launch_cost(artifact, 0, &cost), nullptr);
  EXPECT_EQ(cost.flops, 0u);
  // Tables fall back to the function name.
  EXPECT_EQ(kiln::report::launchLabel(artifact, 0), "kiln_add");
  kiln_artifact_release(artifact);
}

TEST(LaunchMetadata, RejectsNodeCountBelowTheStoredNames) {
  std::string error;
  kiln_artifact_t *artifact =
      openFile(describedFile([](fb::ModelT &model) { model.launches[0]->node_count = 1; }),
               "count.kiln", &error);
  EXPECT_EQ(artifact, nullptr);
  EXPECT_NE(error.find("launch 0 ('kiln_add'): node_count 1 is smaller than its 2 node names"),
            std::string::npos)
      << error;
}

TEST(LaunchMetadata, RejectsValueRangeOnFloatTensor) {
  std::string error;
  kiln_artifact_t *artifact = openFile(describedFile([](fb::ModelT &model) {
                                         model.inputs[0]->value_range =
                                             std::make_unique<fb::ValueRange>(0, 1);
                                       }),
                                       "floatrange.kiln", &error);
  EXPECT_EQ(artifact, nullptr);
  EXPECT_NE(error.find("input 0 'x' has a value_range, which only integer inputs may have"),
            std::string::npos)
      << error;
}

TEST(LaunchMetadata, RejectsEmptyValueRange) {
  std::string error;
  kiln_artifact_t *artifact = openFile(describedFile([](fb::ModelT &model) {
                                         model.inputs[1]->value_range =
                                             std::make_unique<fb::ValueRange>(5, 4);
                                       }),
                                       "emptyrange.kiln", &error);
  EXPECT_EQ(artifact, nullptr);
  EXPECT_NE(error.find("input 1 'ids' value_range [5, 4] is empty (min > max)"), std::string::npos)
      << error;
}

//===----------------------------------------------------------------------===//
// Generated inputs.
//===----------------------------------------------------------------------===//

TEST(InputGen, ParsesSpecs) {
  gen::Spec spec;
  std::string error;
  EXPECT_EQ(gen::parseSpec("zeros", spec, error), gen::ParseResult::Spec);
  EXPECT_EQ(spec.kind, gen::Kind::Zeros);
  EXPECT_EQ(gen::parseSpec("random", spec, error), gen::ParseResult::Spec);
  EXPECT_EQ(spec.kind, gen::Kind::Random);
  EXPECT_EQ(spec.seed, 0u);
  EXPECT_EQ(gen::parseSpec("random:18446744073709551615", spec, error), gen::ParseResult::Spec);
  EXPECT_EQ(spec.seed, 18446744073709551615ull);
  EXPECT_EQ(gen::parseSpec("const:-2.5", spec, error), gen::ParseResult::Spec);
  EXPECT_EQ(spec.kind, gen::Kind::Constant);
  EXPECT_EQ(spec.value, -2.5);
  EXPECT_EQ(gen::parseSpec("ids.npy", spec, error), gen::ParseResult::NotASpec);
  EXPECT_EQ(gen::parseSpec("./zeros", spec, error), gen::ParseResult::NotASpec);
  EXPECT_EQ(gen::parseSpec("random:x", spec, error), gen::ParseResult::Error);
  EXPECT_NE(error.find("'random:x': the seed of random:SEED must be a decimal integer"),
            std::string::npos)
      << error;
  EXPECT_EQ(gen::parseSpec("random:-1", spec, error), gen::ParseResult::Error);
  EXPECT_EQ(gen::parseSpec("random:", spec, error), gen::ParseResult::Error);
  EXPECT_EQ(gen::parseSpec("const:nan", spec, error), gen::ParseResult::Error);
  EXPECT_NE(error.find("'const:nan': the value of const:V must be a finite number"),
            std::string::npos)
      << error;
  EXPECT_EQ(gen::parseSpec("const:", spec, error), gen::ParseResult::Error);
}

/// Generates `count` elements and returns them as int64 (for I64 tensors).
std::vector<int64_t> generateI64(const std::string &text, const std::string &name, uint64_t count,
                                 gen::Range range) {
  gen::Spec spec;
  std::string error;
  EXPECT_EQ(gen::parseSpec(text, spec, error), gen::ParseResult::Spec);
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(gen::generate(spec, name, KILN_DTYPE_I64, count, range, bytes, error)) << error;
  std::vector<int64_t> values(count);
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

TEST(InputGen, RandomTokenIdsStayInsideTheRecordedRange) {
  gen::Range range{true, 0, 49};
  std::vector<int64_t> ids = generateI64("random:1", "input_ids", 4096, range);
  std::set<int64_t> seen(ids.begin(), ids.end());
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 49);
  EXPECT_EQ(seen.size(), 50u) << "4096 draws cover every one of the 50 rows";
  // Deterministic per seed and name; other seeds and names differ.
  EXPECT_EQ(ids, generateI64("random:1", "input_ids", 4096, range));
  EXPECT_NE(ids, generateI64("random:2", "input_ids", 4096, range));
  EXPECT_NE(ids, generateI64("random:1", "position_ids", 4096, range));
}

TEST(InputGen, IntegerInputsWithoutRangeGetZeroOrOne) {
  std::vector<int64_t> mask = generateI64("random", "attention_mask", 256, gen::Range());
  std::set<int64_t> seen(mask.begin(), mask.end());
  EXPECT_EQ(seen, (std::set<int64_t>{0, 1}));
}

TEST(InputGen, ConstantsAndZeros) {
  EXPECT_EQ(generateI64("const:7", "ids", 3, gen::Range{true, 0, 49}),
            (std::vector<int64_t>{7, 7, 7}));
  EXPECT_EQ(generateI64("zeros", "ids", 2, gen::Range()), (std::vector<int64_t>{0, 0}));
  gen::Spec spec;
  std::string error;
  gen::parseSpec("const:-1.5", spec, error);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(gen::generate(spec, "x", KILN_DTYPE_F32, 2, gen::Range(), bytes, error));
  float values[2];
  std::memcpy(values, bytes.data(), 8);
  EXPECT_EQ(values[0], -1.5f);
  EXPECT_EQ(values[1], -1.5f);
  gen::parseSpec("const:1", spec, error);
  ASSERT_TRUE(gen::generate(spec, "h", KILN_DTYPE_F16, 1, gen::Range(), bytes, error));
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0x00, 0x3c}));
  ASSERT_TRUE(gen::generate(spec, "b", KILN_DTYPE_BF16, 1, gen::Range(), bytes, error));
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0x80, 0x3f}));
}

TEST(InputGen, RejectsConstantsOutsideTheRangeOrType) {
  gen::Spec spec;
  std::string error;
  std::vector<uint8_t> bytes;
  gen::parseSpec("const:50", spec, error);
  EXPECT_FALSE(
      gen::generate(spec, "input_ids", KILN_DTYPE_I64, 4, gen::Range{true, 0, 49}, bytes, error));
  EXPECT_NE(error.find("input 'input_ids': 'const:50' is outside [0, 49], the values the "
                       "artifact allows (the input indexes a table of 50 entries)"),
            std::string::npos)
      << error;
  gen::parseSpec("const:1.5", spec, error);
  EXPECT_FALSE(gen::generate(spec, "ids", KILN_DTYPE_I32, 1, gen::Range(), bytes, error));
  EXPECT_NE(error.find("input 'ids' (i32): 'const:1.5' is not a i32 value"), std::string::npos)
      << error;
  gen::parseSpec("const:300", spec, error);
  EXPECT_FALSE(gen::generate(spec, "u", KILN_DTYPE_U8, 1, gen::Range(), bytes, error));
  gen::parseSpec("const:2", spec, error);
  EXPECT_FALSE(gen::generate(spec, "flag", KILN_DTYPE_BOOL, 1, gen::Range(), bytes, error));
}

/// Little-endian bytes of `values` as `dtype` (an integer dtype of 1, 2, 4 or 8 bytes).
std::vector<uint8_t> integerBytes(kiln_dtype_t dtype, const std::vector<int64_t> &values) {
  size_t size = kiln_dtype_size(dtype);
  std::vector<uint8_t> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t b = 0; b < size; ++b)
      bytes[i * size + b] = static_cast<uint8_t>(static_cast<uint64_t>(values[i]) >> (8 * b));
  return bytes;
}

/// kiln::checkInputValues (behind kiln_artifact_check_input_values) of `values` (`dtype`,
/// `shape`) against `range`; the error, "" when allowed.
std::string checkError(kiln_dtype_t dtype, const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &values, const kiln::InputValueRange &range) {
  std::vector<uint8_t> bytes = integerBytes(dtype, values);
  std::string error;
  bool ok = kiln::checkInputValues("ids", dtype, shape, bytes.data(), bytes.size(), range, error);
  EXPECT_EQ(ok, error.empty()) << error;
  return error;
}

TEST(InputValues, CheckNamesTheFirstElementOutside) {
  kiln::InputValueRange table{true, 0, 49};
  EXPECT_EQ(checkError(KILN_DTYPE_I64, {2, 3}, {0, 1, 2, 49, 70, 50}, table),
            "input 'ids' element [1, 1] is 70, outside [0, 49], the values the artifact allows "
            "(the input indexes a table of 50 entries; -50 to -1 count from the end); 2 of 6 "
            "elements are outside");
  EXPECT_EQ(checkError(KILN_DTYPE_I64, {3}, {0, 0, -51}, table),
            "input 'ids' element [2] is -51, outside [0, 49], the values the artifact allows "
            "(the input indexes a table of 50 entries; -50 to -1 count from the end); 1 of 3 "
            "elements is outside");
  // A scalar has no position.
  EXPECT_EQ(checkError(KILN_DTYPE_I32, {}, {50}, table).rfind("input 'ids' is 50, outside", 0), 0u);
}

TEST(InputValues, CheckAllowsTheTableAndNegativeIndicesFromTheEnd) {
  kiln::InputValueRange table{true, 0, 49};
  for (kiln_dtype_t dtype : {KILN_DTYPE_I64, KILN_DTYPE_I32, KILN_DTYPE_I16, KILN_DTYPE_I8})
    EXPECT_EQ(checkError(dtype, {4}, {0, 49, -1, -50}, table), "") << kiln_dtype_name(dtype);
  // Narrow signed dtypes are sign-extended: i8 -51 is outside, i8 -50 is not.
  EXPECT_NE(checkError(KILN_DTYPE_I8, {1}, {-51}, table), "");
  EXPECT_NE(checkError(KILN_DTYPE_I16, {2}, {1, 50}, table), "");
  // Unsigned dtypes are read unsigned: u8 255 is not -1, u64 2^63 is not negative.
  EXPECT_EQ(checkError(KILN_DTYPE_U8, {1}, {255}, kiln::InputValueRange{true, 0, 255}), "");
  EXPECT_NE(checkError(KILN_DTYPE_U8, {1}, {255}, table).find(" is 255, outside"),
            std::string::npos);
  EXPECT_NE(checkError(KILN_DTYPE_U64, {1}, {INT64_MIN}, table).find(" is 9223372036854775808,"),
            std::string::npos);
  // A range that does not start at 0 is no table index: exactly [min, max].
  kiln::InputValueRange other{true, 5, 9, false};
  EXPECT_EQ(checkError(KILN_DTYPE_I64, {2}, {5, 9}, other), "");
  EXPECT_EQ(checkError(KILN_DTYPE_I64, {1}, {-1}, other),
            "input 'ids' element [0] is -1, outside [5, 9], the values the artifact allows; 1 of 1 "
            "elements is outside");
  // The widest table: [0, 2^63 - 1] allows every i64.
  EXPECT_EQ(checkError(KILN_DTYPE_I64, {2}, {INT64_MIN, INT64_MAX}, kiln::InputValueRange{true, 0, INT64_MAX}),
            "");
}

TEST(InputValues, CheckSkipsUnrangedFloatAndBoolInputs) {
  std::string error;
  std::vector<uint8_t> big = integerBytes(KILN_DTYPE_I64, {1000000});
  EXPECT_TRUE(kiln::checkInputValues("m", KILN_DTYPE_I64, {1}, big.data(), big.size(),
                                     kiln::InputValueRange(), error));
  float f = 1e9f;
  EXPECT_TRUE(kiln::checkInputValues("x", KILN_DTYPE_F32, {1}, reinterpret_cast<uint8_t *>(&f), 4,
                                     kiln::InputValueRange{true, 0, 1}, error));
  uint8_t flag = 1;
  EXPECT_TRUE(kiln::checkInputValues("b", KILN_DTYPE_BOOL, {1}, &flag, 1,
                                     kiln::InputValueRange{true, 0, 0}, error));
  EXPECT_TRUE(error.empty()) << error;
}

// The C API: the artifact's range and role, its byte size, errors.
TEST(InputValues, ArtifactChecksHostValuesOfAnInput) {
  kiln_artifact_t *artifact = openFile(describedFile(), "check-values.kiln");
  ASSERT_NE(artifact, nullptr);
  std::vector<uint8_t> inside = integerBytes(KILN_DTYPE_I64, {0, 49, -1, -50});
  EXPECT_EQ(kiln_artifact_check_input_values(artifact, 1, inside.data(), inside.size()), nullptr);
  std::vector<uint8_t> outside = integerBytes(KILN_DTYPE_I64, {0, 50, 7, 99});
  kiln_status_t status =
      kiln_artifact_check_input_values(artifact, 1, outside.data(), outside.size());
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "input 'ids' element [1] is 50, outside [0, 49], the values the artifact allows "
               "(the input indexes a table of 50 entries; -50 to -1 count from the end); 2 of 4 "
               "elements are outside");
  kiln_status_free(status);
  status = kiln_artifact_check_input_values(artifact, 1, inside.data(), 8);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_message(status)).find("has 32 bytes, not 8"), std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
  status = kiln_artifact_check_input_values(artifact, 2, inside.data(), inside.size());
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  kiln_status_free(status);
  status = kiln_artifact_check_input_values(nullptr, 1, inside.data(), inside.size());
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  status = kiln_artifact_check_input_values(artifact, 1, nullptr, inside.size());
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  kiln_artifact_release(artifact);
  // An input of no elements: NULL data and 0 bytes pass (kiln-run's empty .npy).
  artifact = openFile(describedFile([](fb::ModelT &m) { m.inputs.back()->shape = {0}; }),
                      "check-empty.kiln");
  ASSERT_NE(artifact, nullptr);
  EXPECT_EQ(kiln_artifact_check_input_values(artifact, 1, nullptr, 0), nullptr);
  kiln_artifact_release(artifact);
}

TEST(InputGen, NegativeConstantsCountFromTheEnd) {
  EXPECT_EQ(generateI64("const:-50", "ids", 2, gen::Range{true, 0, 49}),
            (std::vector<int64_t>{-50, -50}));
  gen::Spec spec;
  std::string error;
  std::vector<uint8_t> bytes;
  gen::parseSpec("const:-51", spec, error);
  EXPECT_FALSE(
      gen::generate(spec, "ids", KILN_DTYPE_I64, 1, gen::Range{true, 0, 49}, bytes, error));
  EXPECT_NE(error.find("'const:-51' is outside [0, 49]"), std::string::npos) << error;
  gen::parseSpec("const:4", spec, error);
  EXPECT_FALSE(gen::generate(spec, "ids", KILN_DTYPE_I64, 1, gen::Range{true, 5, 9}, bytes, error))
      << "a range not starting at 0 allows no negative or smaller value";
}

TEST(InputGen, RandomFloatsAreInMinusOneToOne) {
  gen::Spec spec;
  std::string error;
  gen::parseSpec("random:5", spec, error);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(gen::generate(spec, "x", KILN_DTYPE_F32, 1000, gen::Range(), bytes, error));
  std::vector<float> values(1000);
  std::memcpy(values.data(), bytes.data(), bytes.size());
  float lo = 1, hi = -1;
  for (float v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -1.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_LT(lo, -0.9f);
  EXPECT_GT(hi, 0.9f);
}

TEST(InputGen, HalfAndBFloat16RoundToNearestEven) {
  EXPECT_EQ(gen::floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(gen::floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(gen::floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(gen::floatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(gen::floatToHalf(5.960464477539063e-08f), 0x0001); // smallest subnormal
  EXPECT_EQ(gen::floatToHalf(1.0f + 1.0f / 2048.0f), 0x3c00);  // tie to even
  EXPECT_EQ(gen::floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(gen::floatToBFloat16(-0.5f), 0xbf00);
}

//===----------------------------------------------------------------------===//
// --json and --trace documents.
//===----------------------------------------------------------------------===//

TEST(JsonWriter, EscapesAndSeparates) {
  kiln::JsonWriter json;
  json.beginObject();
  json.field("a\"b", std::string("x\\y\n\x01"));
  json.key("list");
  json.beginArray();
  json.value(1);
  json.value(2.5);
  json.value(std::nan(""));
  json.endArray();
  json.field("ok", true);
  json.endObject();
  EXPECT_EQ(json.str(), "{\"a\\\"b\":\"x\\\\y\\n\\u0001\",\"list\":[1,2.5,null],\"ok\":true}");
}

// Well-formed UTF-8 passes through; each byte of an ill-formed sequence (a damaged artifact's
// names: a lone continuation byte, a truncated sequence, an overlong form, a surrogate, a lead
// byte past U+10FFFF) becomes U+FFFD, so the document stays valid JSON.
TEST(JsonWriter, ReplacesIllFormedUtf8) {
  EXPECT_EQ(kiln::JsonWriter::quote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  EXPECT_EQ(kiln::JsonWriter::quote("c\xffs"), "\"c\\ufffds\"");
  EXPECT_EQ(kiln::JsonWriter::quote("\x80" "a"), "\"\\ufffda\"");
  EXPECT_EQ(kiln::JsonWriter::quote("a\xc3"), "\"a\\ufffd\"");
  EXPECT_EQ(kiln::JsonWriter::quote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
  EXPECT_EQ(kiln::JsonWriter::quote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(kiln::JsonWriter::quote("\xf5\x80\x80\x80"),
            "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

TEST(Report, ArtifactJsonHasTheLaunchDescription) {
  kiln_artifact_t *artifact = openFile(describedFile(), "json.kiln");
  ASSERT_NE(artifact, nullptr);
  kiln::JsonWriter json;
  kiln::report::writeArtifactJson(json, artifact);
  const std::string &text = json.str();
  for (const char *fragment :
       {"\"name\":\"h.0.attn: matmul+add\"", "\"layer\":\"h.0.attn\"",
        "\"ops\":[\"matmul\",\"reshape\",\"add\"]",
        "\"nodes\":[\"/m/h.0/attn/MatMul\",\"/m/h.0/Add\"]", "\"node_count\":5", "\"flops\":1024",
        "\"value_range\":[0,49]", "\"function\":\"kiln_add\""})
    EXPECT_NE(text.find(fragment), std::string::npos) << fragment << "\n" << text;
  kiln_artifact_release(artifact);
}

TEST(Report, ChromeTraceHasOneSlicePerKernelAndLayer) {
  kiln_artifact_t *artifact = openFile(describedFile(), "trace.kiln");
  ASSERT_NE(artifact, nullptr);
  kiln::report::Timeline timeline;
  timeline.launchStartMs = {0.001f};
  timeline.launchEndMs = {0.004f};
  std::string trace = kiln::report::chromeTrace(artifact, timeline);
  for (const char *fragment :
       {"{\"traceEvents\":[", "\"name\":\"process_name\"", "\"name\":\"kernels\"",
        "\"name\":\"h.0.attn: matmul+add\",\"cat\":\"kernel\",\"ph\":\"X\",\"pid\":1,\"tid\":3,"
        "\"ts\":1",
        "\"dur\":3", "\"name\":\"h.0.attn\",\"cat\":\"layer\",\"ph\":\"X\"",
        "\"name\":\"h.0\",\"cat\":\"block\",\"ph\":\"X\",\"pid\":1,\"tid\":1,",
        "\"ops\":\"matmul,reshape,add\"", "\"displayTimeUnit\":\"ns\"}"})
    EXPECT_NE(trace.find(fragment), std::string::npos) << fragment << "\n" << trace;
  EXPECT_EQ(trace.find("collectives"), std::string::npos) << "no collective track without any";
  kiln_artifact_release(artifact);
}

TEST(Report, InputRoleNames) {
  // The names the compiler writes in #kiln.input_role<...>, one per role.
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_DATA), "data");
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_KEY_CACHE), "key_cache");
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_VALUE_CACHE), "value_cache");
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_BLOCK_TABLE), "block_table");
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_SEQ_LENS), "seq_lens");
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_POSITION_IDS), "position_ids");
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_TEMPERATURE), "temperature");
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_TOP_K), "top_k");
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_TOP_P), "top_p");
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_SEED), "seed");
  EXPECT_STREQ(kiln::report::inputRoleName(KILN_INPUT_ROLE_SAMPLE_OFFSET), "sample_offset");
  EXPECT_STREQ(kiln::report::inputRoleName(static_cast<kiln_input_role_t>(11)), "?");
}

TEST(Report, BlockOfLayer) {
  EXPECT_EQ(kiln::report::blockOf("h.3.attn"), "h.3");
  EXPECT_EQ(kiln::report::blockOf("layers.10.mlp"), "layers.10");
  EXPECT_EQ(kiln::report::blockOf("layer.1"), "layer.1");
  EXPECT_EQ(kiln::report::blockOf("ln_f"), "ln_f");
  EXPECT_EQ(kiln::report::blockOf("embeddings.LayerNorm"), "embeddings.LayerNorm");
  EXPECT_EQ(kiln::report::blockOf("0.x"), "0.x") << "a number first is no list index";
  EXPECT_EQ(kiln::report::blockOf(""), "");
}

TEST(Report, TimePerLayerSumsAndSortsLargestFirst) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  // Three launches: layers a, b, a.
  for (int i = 0; i < 2; ++i) {
    auto copy = std::make_unique<fb::LaunchT>(*builder.model.launches[0]);
    builder.model.launches.push_back(std::move(copy));
  }
  builder.model.launches[0]->layer = "a";
  builder.model.launches[1]->layer = "b";
  builder.model.launches[2]->layer = "a";
  kiln_artifact_t *artifact = openFile(builder.build(), "layers.kiln");
  ASSERT_NE(artifact, nullptr);
  std::vector<kiln::report::LayerTime> layers =
      kiln::report::timePerLayer(artifact, {1.0f, 3.0f, 1.5f});
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].layer, "b");
  EXPECT_EQ(layers[0].launches, 1u);
  EXPECT_EQ(layers[1].layer, "a");
  EXPECT_EQ(layers[1].launches, 2u);
  EXPECT_DOUBLE_EQ(layers[1].ms, 2.5);
  kiln_artifact_release(artifact);
}

//===----------------------------------------------------------------------===//
// kiln-run errors (no GPU: they happen before the session).
//===----------------------------------------------------------------------===//

class KilnRunGenerated : public ::testing::Test {
protected:
  void SetUp() override { model = kiln::test::writeTempFile("generated.kiln", describedFile()); }
  /// Runs kiln-run and expects exit code 2 with `fragment` in the output.
  void expectError(const std::string &arguments, const std::string &fragment) {
    kiln::test::CommandResult result = kiln::test::runKilnRun(arguments + " 2>&1");
    EXPECT_EQ(result.exitCode, 2) << result.output;
    EXPECT_NE(result.output.find(fragment), std::string::npos)
        << "output: " << result.output << "\nexpected: " << fragment;
  }
  std::string model;
};

TEST_F(KilnRunGenerated, MalformedSeed) {
  expectError("'" + model + "' --input ids=random:abc --input x=zeros",
              "--input ids=random:abc: 'random:abc': the seed of random:SEED must be a decimal "
              "integer");
}

TEST_F(KilnRunGenerated, BadInputsGenerateValue) {
  expectError("'" + model + "' --inputs-generate ones",
              "option '--inputs-generate' expects random, random:SEED, zeros or const:V, got "
              "'ones'");
}

TEST_F(KilnRunGenerated, ConstantOutsideTheEmbedding) {
  expectError("'" + model + "' --inputs-generate const:50",
              "input 'ids': 'const:50' is outside [0, 49]");
}

TEST_F(KilnRunGenerated, MissingInputSuggestsGenerators) {
  expectError("'" + model + "' --input x=zeros",
              "missing --input for 'ids' (i64[4]); give NAME=FILE.npy, NAME=random[:SEED], or "
              "--inputs-generate random");
}

TEST_F(KilnRunGenerated, UnwritableTrace) {
  expectError("'" + model + "' --inputs-generate random --trace /nonexistent-dir/t.json",
              "cannot write --trace file '/nonexistent-dir/t.json'");
}

TEST_F(KilnRunGenerated, EmptyTraceName) {
  expectError("'" + model + "' --inputs-generate random --trace=",
              "option '--trace' expects a file name");
}

TEST_F(KilnRunGenerated, NpyTokenIdsOutsideTheEmbedding) {
  int64_t ids[4] = {3, 49, 50, -51};
  std::vector<uint8_t> image;
  std::string error;
  ASSERT_TRUE(kiln::npy::encodeNpy(KILN_DTYPE_I64, {4}, ids, sizeof(ids), image, error)) << error;
  std::string path = kiln::test::writeTempFile("ids_bad.npy", image);
  expectError("'" + model + "' --input x=zeros --input ids='" + path + "'",
              "kiln-run: error: '" + path +
                  "': input 'ids' element [2] is 50, outside [0, 49], the values the artifact "
                  "allows (the input indexes a table of 50 entries; -50 to -1 count from the "
                  "end); 2 of 4 elements are outside");
}

TEST_F(KilnRunGenerated, NonIntegerConstantForTokenIds) {
  expectError("'" + model + "' --input x=zeros --input ids=const:2.5",
              "input 'ids' (i64): 'const:2.5' is not a i64 value");
}

TEST_F(KilnRunGenerated, JsonDescribesWithoutGpu) {
  kiln::test::CommandResult result = kiln::test::runKilnRun("'" + model + "' --json 2>&1");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output.rfind("{\"artifact\":{\"path\":", 0), 0u) << result.output;
  EXPECT_NE(result.output.find("\"name\":\"h.0.attn: matmul+add\""), std::string::npos)
      << result.output;
}

TEST_F(KilnRunGenerated, InfoPrintsNamesLayersAndRanges) {
  kiln::test::CommandResult result = kiln::test::runKilnRun("'" + model + "' --info 2>&1");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  for (const char *fragment :
       {"ids: i64[4] (32 bytes) values [0, 49]", "      name: h.0.attn: matmul+add",
        "      layer: h.0.attn", "      ops: matmul reshape add",
        "      onnx nodes (5): /m/h.0/attn/MatMul, /m/h.0/Add, ... (3 more)",
        "      cost: 1024 flop, 4.0 KiB read, 16 B written"})
    EXPECT_NE(result.output.find(fragment), std::string::npos) << fragment << "\n" << result.output;
}

} // namespace

TEST(LaunchMetadataCpp, WrappersReturnStringsAndLists) {
  std::string path = kiln::test::writeTempFile("cpp.kiln", describedFile());
  kiln::Artifact artifact;
  ASSERT_TRUE(kiln::Artifact::open(path, artifact).ok());
  EXPECT_EQ(artifact.launchName(0), "h.0.attn: matmul+add");
  EXPECT_EQ(artifact.launchLayer(0), "h.0.attn");
  EXPECT_EQ(artifact.launchOps(0), (std::vector<std::string>{"matmul", "reshape", "add"}));
  EXPECT_EQ(artifact.launchNodes(0),
            (std::vector<std::string>{"/m/h.0/attn/MatMul", "/m/h.0/Add"}));
  EXPECT_EQ(artifact.launchName(1), "");
  EXPECT_TRUE(artifact.launchOps(1).empty());
}

TEST(SessionTimeline, RejectsNullSession) {
  float start = 1, end = 1;
  kiln_status_t status = kiln_session_profile_timeline(nullptr, &start, &end, nullptr, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "kiln_session_profile_timeline: session must be non-NULL");
  kiln_status_free(status);
}
