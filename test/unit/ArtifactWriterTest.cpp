//===- ArtifactWriterTest.cpp - The compiler's artifact writer, read back by the runtime -===//
//
// No GPU needed; built with the compiler. kiln::writeArtifact writes a small planned function
// whose one launch carries tensor maps (GeneratedKernel::TensorMapArg, as the code generator
// hands them over), and the runtime's verifier and C API read every field back; the file is
// format version 3 only when a launch has tensor maps; the writer's own errors for maps it cannot
// write. Tensor maps have no emitter yet, so lit cannot reach this path through kiln-compile.
//
//===----------------------------------------------------------------------===//

#include "compiler/artifact/ArtifactWriter.h"

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/KilnOps.h"
#include "kiln/runtime.h"

#include "llvm/Support/Error.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "ArtifactHeader.h"
#include "TestArtifact.h"
#include "kiln_artifact_generated.h"
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using TensorMapArg = kiln::codegen::GeneratedKernel::TensorMapArg;

/// Input x f16[128x64] and a weight w f16[64x64]; returns x (so the output lives in the input).
const char *const kFunction = R"mlir(
func.func @main(%x: tensor<128x64xf16> {kiln.name = "x"}) -> (tensor<128x64xf16> {kiln.name = "y"}) {
  %w = kiln.constant dense<1.0> : tensor<64x64xf16>
  return %x : tensor<128x64xf16>
}
)mlir";

/// Parses kFunction and prepares one launch kiln_k0(x, w) in module "module0".
class ArtifactWriterTest : public testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<kiln::KilnDialect, mlir::func::FuncDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(kFunction, &context);
    ASSERT_TRUE(module) << "the test function does not parse";
    func = *module->getOps<mlir::func::FuncOp>().begin();
    mlir::Value x = func.getArgument(0);
    mlir::Value w = (*func.getBody().front().getOps<kiln::ConstantOp>().begin()).getResult();
    kiln::ArtifactModule code;
    code.name = "module0";
    code.code.ptx = "// PTX is not parsed by the loader\n";
    modules.push_back(code);
    launch.function = "kiln_k0";
    launch.grid = {2, 1, 1};
    launch.block = {128, 1, 1};
    launch.args = {x, w};
  }

  /// Map 0: the whole of x in 64x64 tiles, 128-byte swizzle.
  TensorMapArg tileMapOfX() {
    TensorMapArg map;
    map.arg = 0;
    map.elementType = mlir::Float16Type::get(&context);
    map.dims = {64, 128};
    map.strides = {128};
    map.box = {64, 64};
    map.swizzle = TensorMapArg::Swizzle::B128;
    return map;
  }

  /// Map 1: rows [32, 64) of w read as bf16, 32x16 boxes, 64-byte swizzle, at byte offset 4096.
  TensorMapArg halfOfW() {
    TensorMapArg map;
    map.arg = 1;
    map.offsetBytes = 4096;
    map.elementType = mlir::BFloat16Type::get(&context);
    map.dims = {64, 32};
    map.strides = {128};
    map.box = {32, 16};
    map.swizzle = TensorMapArg::Swizzle::B64;
    return map;
  }

  /// Writes the artifact to a temp file; returns its path ("" after a failure, reported).
  std::string write(const std::string &name, std::string *error = nullptr) {
    std::string path = kiln::test::writeTempFile(name, {});
    auto stats = kiln::writeArtifact(func, modules, {launch}, path);
    if (!stats) {
      std::string message = llvm::toString(stats.takeError());
      if (error)
        *error = message;
      else
        ADD_FAILURE() << message;
      return "";
    }
    return path;
  }

  /// The header's format_version of the file at `path`.
  static uint32_t formatVersionOf(const std::string &path) {
    std::ifstream file(path, std::ios::binary);
    uint8_t header[kiln::artifact::kHeaderSize] = {};
    file.read(reinterpret_cast<char *>(header), sizeof(header));
    return kiln::artifact::decodeHeader(header).formatVersion;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  std::vector<kiln::ArtifactModule> modules;
  kiln::ArtifactLaunch launch;
};

TEST_F(ArtifactWriterTest, TwoTensorMapsRoundTripThroughTheRuntimeReader) {
  launch.tensorMaps = {tileMapOfX(), halfOfW()};
  std::string path = write("maps.kiln");
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(formatVersionOf(path), kiln::artifact::kFormatVersionTensorMaps);
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  ASSERT_EQ(kiln_artifact_launch_tensor_map_count(artifact, 0), 2u);

  kiln_tensor_map_info_t info;
  ASSERT_EQ(kiln_artifact_launch_tensor_map_info(artifact, 0, 0, &info), nullptr);
  EXPECT_EQ(info.arg, 0u);
  EXPECT_EQ(info.offset_bytes, 0u);
  EXPECT_EQ(info.dtype, KILN_DTYPE_F16);
  ASSERT_EQ(info.rank, 2u);
  EXPECT_EQ(info.dims[0], 64u);
  EXPECT_EQ(info.dims[1], 128u);
  EXPECT_EQ(info.strides[0], 128u);
  EXPECT_EQ(info.box[0], 64u);
  EXPECT_EQ(info.box[1], 64u);
  EXPECT_EQ(info.swizzle, KILN_TENSOR_MAP_SWIZZLE_128B);

  ASSERT_EQ(kiln_artifact_launch_tensor_map_info(artifact, 0, 1, &info), nullptr);
  EXPECT_EQ(info.arg, 1u);
  EXPECT_EQ(info.offset_bytes, 4096u);
  EXPECT_EQ(info.dtype, KILN_DTYPE_BF16);
  ASSERT_EQ(info.rank, 2u);
  EXPECT_EQ(info.dims[0], 64u);
  EXPECT_EQ(info.dims[1], 32u);
  EXPECT_EQ(info.strides[0], 128u);
  EXPECT_EQ(info.box[0], 32u);
  EXPECT_EQ(info.box[1], 16u);
  EXPECT_EQ(info.swizzle, KILN_TENSOR_MAP_SWIZZLE_64B);

  // The pointer arguments the maps address: x (input 0) and w (the weights).
  kiln_launch_info_t launchInfo;
  ASSERT_EQ(kiln_artifact_launch_info(artifact, 0, &launchInfo), nullptr);
  EXPECT_EQ(launchInfo.arg_count, 2u);
  EXPECT_STREQ(launchInfo.function_name, "kiln_k0");
  EXPECT_EQ(kiln_artifact_weights_bytes(artifact), 64u * 64u * 2u);
  kiln_artifact_release(artifact);
}

TEST_F(ArtifactWriterTest, WithoutTensorMapsTheFileStaysVersion1) {
  std::string path = write("plain.kiln");
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(formatVersionOf(path), kiln::artifact::kOldestFormatVersion);
  // The field is absent (not an empty vector), so the bytes are those of a writer without it.
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  kiln::artifact::ArtifactHeader header =
      kiln::artifact::decodeHeader(reinterpret_cast<const uint8_t *>(bytes.data()));
  const kiln::artifact::Model *index = kiln::artifact::GetModel(bytes.data() + header.indexOffset);
  ASSERT_EQ(index->launches()->size(), 1u);
  EXPECT_EQ(index->launches()->Get(0)->tensor_maps(), nullptr);
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(kiln_artifact_launch_tensor_map_count(artifact, 0), 0u);
  kiln_artifact_release(artifact);
}

TEST_F(ArtifactWriterTest, MapOnAMissingArgumentIsAnInternalError) {
  TensorMapArg map = tileMapOfX();
  map.arg = 2;
  launch.tensorMaps = {map};
  std::string error;
  EXPECT_EQ(write("bad_arg.kiln", &error), "");
  EXPECT_EQ(error, "internal error: tensor map 0 of kernel kiln_k0 addresses argument 2 of 2");
}

TEST_F(ArtifactWriterTest, MapOfAnElementTypeTheFormatLacksIsUnsupported) {
  TensorMapArg map = tileMapOfX();
  map.elementType = mlir::Float64Type::get(&context);
  launch.tensorMaps = {map};
  std::string error;
  EXPECT_EQ(write("bad_type.kiln", &error), "");
  EXPECT_EQ(error, "unsupported: element type f64 in the artifact");
}

TEST_F(ArtifactWriterTest, AnOutputMayCarryTheNameOfTheInputItPassesThrough) {
  // ONNX allows a graph output that is a graph input: the function returns x as "x". Inputs and
  // outputs are looked up separately, and the output is located at the input.
  func.setResultAttr(0, "kiln.name", mlir::StringAttr::get(&context, "x"));
  std::string path = write("same_name.kiln");
  ASSERT_FALSE(path.empty());
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  size_t index = 99;
  ASSERT_EQ(kiln_artifact_find_input(artifact, "x", &index), nullptr);
  EXPECT_EQ(index, 0u);
  index = 99;
  ASSERT_EQ(kiln_artifact_find_output(artifact, "x", &index), nullptr);
  EXPECT_EQ(index, 0u);
  kiln_artifact_release(artifact);

  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  kiln::artifact::ArtifactHeader header =
      kiln::artifact::decodeHeader(reinterpret_cast<const uint8_t *>(bytes.data()));
  const kiln::artifact::Model *model = kiln::artifact::GetModel(bytes.data() + header.indexOffset);
  ASSERT_EQ(model->outputs()->size(), 1u);
  const kiln::artifact::BufferRef *location = model->outputs()->Get(0)->location();
  EXPECT_EQ(location->segment(), kiln::artifact::Segment::Input);
  EXPECT_EQ(location->index(), 0u);
  EXPECT_EQ(location->size(), 128u * 64u * 2u);
}

} // namespace
