//===- TestArtifact.cpp - Building .kiln files in unit tests --------------===//
//
// Implements the test-only artifact writer: two-pass layout (the index size does not depend on
// blob offsets, which are fixed-size struct fields, so the second pass confirms the first), the
// header checksum (zlib crc32), the reference add model and temp files.
//
//===----------------------------------------------------------------------===//

#include "TestArtifact.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace kiln {
namespace test {

namespace fb = kiln::artifact;

void ArtifactBuilder::setBlob(std::unique_ptr<fb::Blob> &field, std::vector<uint8_t> bytes) {
  for (auto &payload : payloads)
    if (payload.first == &field) {
      payload.second = std::move(bytes);
      return;
    }
  payloads.emplace_back(&field, std::move(bytes));
}

std::vector<uint8_t> ArtifactBuilder::build() {
  uint64_t indexOffset = fb::kHeaderSize;
  uint64_t blobStart = fb::kBlobAlignment;
  flatbuffers::FlatBufferBuilder fbb;
  // Pass 1 computes the index size, pass 2 writes the final offsets (same size).
  for (int pass = 0; pass < 2; ++pass) {
    uint64_t offset = blobStart;
    for (auto &[field, bytes] : payloads) {
      *field = std::make_unique<fb::Blob>(offset, bytes.size());
      offset = fb::alignBlobOffset(offset + bytes.size());
    }
    fbb.Clear();
    fb::FinishModelBuffer(fbb, fb::Model::Pack(fbb, &model));
    blobStart = fb::alignBlobOffset(indexOffset + fbb.GetSize());
  }
  uint64_t fileSize = indexOffset + fbb.GetSize();
  for (auto &[field, bytes] : payloads)
    if (!bytes.empty())
      fileSize = std::max<uint64_t>(fileSize, (*field)->offset() + bytes.size());
  std::vector<uint8_t> file(fileSize, 0);
  std::memcpy(file.data() + indexOffset, fbb.GetBufferPointer(), fbb.GetSize());
  for (auto &[field, bytes] : payloads)
    if (!bytes.empty())
      std::memcpy(file.data() + (*field)->offset(), bytes.data(), bytes.size());
  // The header goes in last: its checksum covers everything after it.
  uint32_t version = headerFormatVersion;
  if (version == 0) {
    bool tensorMaps = false;
    for (const auto &launch : model.launches)
      tensorMaps |= !launch->tensor_maps.empty();
    version = fb::formatVersionFor(tensorMaps, model.tensor_parallel || !model.collectives.empty());
  }
  uint8_t header[fb::kHeaderSize];
  fb::encodeHeader(
      fb::makeHeader(indexOffset, fbb.GetSize(), fileSize, artifactCrc32(file), version), header);
  std::memcpy(file.data(), header, sizeof(header));
  lastIndexOffset = indexOffset;
  lastIndexSize = fbb.GetSize();
  return file;
}

uint32_t artifactCrc32(const std::vector<uint8_t> &bytes) {
  if (bytes.size() < fb::kHeaderSize) {
    ADD_FAILURE() << "artifactCrc32: " << bytes.size() << " bytes is shorter than the header";
    return 0;
  }
  return static_cast<uint32_t>(crc32_z(crc32_z(0L, Z_NULL, 0), bytes.data() + fb::kHeaderSize,
                                       bytes.size() - fb::kHeaderSize));
}

void resealChecksum(std::vector<uint8_t> &bytes, uint32_t kind) {
  if (bytes.size() < fb::kHeaderSize) {
    ADD_FAILURE() << "resealChecksum: " << bytes.size() << " bytes is shorter than the header";
    return;
  }
  fb::ArtifactHeader header = fb::decodeHeader(bytes.data());
  header.checksumKind = kind;
  header.checksum = kind == fb::kChecksumCrc32 ? artifactCrc32(bytes) : 0;
  fb::encodeHeader(header, bytes.data());
}

const char *const kAddKernelPtx = R"(
.version 7.0
.target sm_75
.address_size 64

.visible .entry kiln_add(
	.param .u64 kiln_add_param_0,
	.param .u64 kiln_add_param_1,
	.param .u64 kiln_add_param_2
)
{
	.reg .f32 	%f<4>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<11>;

	ld.param.u64 	%rd1, [kiln_add_param_0];
	ld.param.u64 	%rd2, [kiln_add_param_1];
	ld.param.u64 	%rd3, [kiln_add_param_2];
	cvta.to.global.u64 	%rd4, %rd3;
	cvta.to.global.u64 	%rd5, %rd2;
	cvta.to.global.u64 	%rd6, %rd1;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	mul.wide.u32 	%rd7, %r4, 4;
	add.s64 	%rd8, %rd6, %rd7;
	ld.global.f32 	%f1, [%rd8];
	add.s64 	%rd9, %rd5, %rd7;
	ld.global.f32 	%f2, [%rd9];
	add.f32 	%f3, %f1, %f2;
	add.s64 	%rd10, %rd4, %rd7;
	st.global.f32 	[%rd10], %f3;
	ret;
}
)";

std::vector<uint8_t> addModelWeights() {
  const float values[kAddElements] = {10, 20, 30, 40};
  std::vector<uint8_t> bytes(sizeof(values));
  std::memcpy(bytes.data(), values, sizeof(values));
  return bytes;
}

std::unique_ptr<fb::BufferRefT> makeRef(fb::Segment segment, uint64_t offset, uint64_t size,
                                        uint32_t index) {
  auto ref = std::make_unique<fb::BufferRefT>();
  ref->segment = segment;
  ref->offset = offset;
  ref->size = size;
  ref->index = index;
  return ref;
}

void buildAddModel(ArtifactBuilder &builder,
                   std::vector<std::pair<uint32_t, std::vector<uint8_t>>> cubins) {
  const uint64_t bytes = kAddElements * sizeof(float);
  fb::ModelT &model = builder.model;
  model.producer = "kiln unit test";
  model.arena_bytes = 1024;
  builder.setBlob(model.weights, addModelWeights());

  auto input = std::make_unique<fb::TensorDescT>();
  input->name = "x";
  input->dtype = fb::DType::F32;
  input->shape = {kAddElements};
  model.inputs.push_back(std::move(input));

  auto output = std::make_unique<fb::TensorDescT>();
  output->name = "y";
  output->dtype = fb::DType::F32;
  output->shape = {kAddElements};
  output->location = makeRef(fb::Segment::Arena, 0, bytes);
  model.outputs.push_back(std::move(output));

  auto module = std::make_unique<fb::ModuleT>();
  module->name = "add";
  std::string ptx = kAddKernelPtx;
  builder.setBlob(module->ptx, std::vector<uint8_t>(ptx.begin(), ptx.end()));
  for (auto &[arch, image] : cubins) {
    auto cubin = std::make_unique<fb::CubinT>();
    cubin->arch = arch;
    builder.setBlob(cubin->image, std::move(image));
    module->cubins.push_back(std::move(cubin));
  }
  model.modules.push_back(std::move(module));

  auto launch = std::make_unique<fb::LaunchT>();
  launch->module_ = 0;
  launch->function = "kiln_add";
  launch->grid = {1, 1, 1};
  launch->block = {static_cast<uint32_t>(kAddElements), 1, 1};
  launch->args.push_back(makeRef(fb::Segment::Input, 0, bytes, 0));
  launch->args.push_back(makeRef(fb::Segment::Weights, 0, bytes));
  launch->args.push_back(makeRef(fb::Segment::Arena, 0, bytes));
  model.launches.push_back(std::move(launch));
}

std::unique_ptr<fb::TensorMapT> makeTileMap(uint32_t arg, uint64_t rows, uint64_t cols,
                                            uint64_t offset) {
  auto map = std::make_unique<fb::TensorMapT>();
  map->arg = arg;
  map->offset = offset;
  map->dtype = fb::DType::F16;
  map->dims = {cols, rows};
  map->strides = {cols * 2};
  map->box = {static_cast<uint32_t>(kTmaTile), static_cast<uint32_t>(kTmaTile)};
  map->swizzle = fb::TensorMapSwizzle::B128;
  return map;
}

void buildTmaCopyModel(ArtifactBuilder &builder, const std::string &ptx) {
  const uint64_t bytes = kTmaRows * kTmaCols * 2;
  fb::ModelT &model = builder.model;
  model.format_version = fb::kFormatVersionTensorMaps;
  model.producer = "kiln unit test (tensor maps)";
  model.arena_bytes = bytes;

  auto input = std::make_unique<fb::TensorDescT>();
  input->name = "x";
  input->dtype = fb::DType::F16;
  input->shape = {static_cast<int64_t>(kTmaRows), static_cast<int64_t>(kTmaCols)};
  model.inputs.push_back(std::move(input));

  auto output = std::make_unique<fb::TensorDescT>();
  output->name = "y";
  output->dtype = fb::DType::F16;
  output->shape = {static_cast<int64_t>(kTmaRows), static_cast<int64_t>(kTmaCols)};
  output->location = makeRef(fb::Segment::Arena, 0, bytes);
  model.outputs.push_back(std::move(output));

  auto module = std::make_unique<fb::ModuleT>();
  module->name = "tma";
  builder.setBlob(module->ptx, std::vector<uint8_t>(ptx.begin(), ptx.end()));
  model.modules.push_back(std::move(module));

  auto launch = std::make_unique<fb::LaunchT>();
  launch->module_ = 0;
  launch->function = "kiln_tma_copy";
  launch->grid = {static_cast<uint32_t>(kTmaRows / kTmaTile), 1, 1};
  launch->block = {128, 1, 1};
  launch->args.push_back(makeRef(fb::Segment::Input, 0, bytes, 0));
  launch->args.push_back(makeRef(fb::Segment::Arena, 0, bytes));
  launch->tensor_maps.push_back(makeTileMap(0));
  launch->tensor_maps.push_back(makeTileMap(1));
  model.launches.push_back(std::move(launch));
}

std::vector<uint8_t> allReduceModelWeights(uint32_t rank) {
  float values[2 * kAddElements];
  for (int i = 0; i < kAddElements; ++i) {
    values[i] = static_cast<float>((i + 1) * (rank + 1));
    values[kAddElements + i] = static_cast<float>(100 * (i + 1));
  }
  std::vector<uint8_t> bytes(sizeof(values));
  std::memcpy(bytes.data(), values, sizeof(values));
  return bytes;
}

void buildAllReduceModel(ArtifactBuilder &builder, uint32_t rank, uint32_t worldSize,
                         uint64_t groupHash) {
  const uint64_t bytes = kAddElements * sizeof(float);
  buildAddModel(builder);
  fb::ModelT &model = builder.model;
  model.format_version = fb::kFormatVersionCollectives;
  model.producer = "kiln unit test (tensor parallel)";
  builder.setBlob(model.weights, allReduceModelWeights(rank));
  model.outputs[0]->location = makeRef(fb::Segment::Arena, 256, bytes);

  auto second = std::make_unique<fb::LaunchT>();
  second->module_ = 0;
  second->function = "kiln_add";
  second->grid = {1, 1, 1};
  second->block = {static_cast<uint32_t>(kAddElements), 1, 1};
  second->args.push_back(makeRef(fb::Segment::Arena, 0, bytes));
  second->args.push_back(makeRef(fb::Segment::Weights, bytes, bytes));
  second->args.push_back(makeRef(fb::Segment::Arena, 256, bytes));
  model.launches.push_back(std::move(second));

  model.tensor_parallel = std::make_unique<fb::TensorParallelT>();
  model.tensor_parallel->world_size = worldSize;
  model.tensor_parallel->rank = rank;
  model.tensor_parallel->group_hash = groupHash;

  auto collective = std::make_unique<fb::CollectiveT>();
  collective->kind = fb::CollectiveKind::AllReduceSum;
  collective->dtype = fb::DType::F32;
  collective->count = kAddElements;
  collective->input = makeRef(fb::Segment::Arena, 0, bytes);
  collective->output = makeRef(fb::Segment::Arena, 0, bytes);
  collective->before_launch = 1;
  model.collectives.push_back(std::move(collective));
}

std::vector<float> allReduceModelExpected(const std::vector<float> &x, uint32_t worldSize) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = static_cast<float>(worldSize) * x[i] +
           static_cast<float>((i + 1) * worldSize * (worldSize + 1) / 2) +
           static_cast<float>(100 * (i + 1));
  return y;
}

std::string writeTempFile(const std::string &name, const std::vector<uint8_t> &bytes) {
  const testing::TestInfo *info = testing::UnitTest::GetInstance()->current_test_info();
  std::string prefix =
      info ? std::string(info->test_suite_name()) + "_" + info->name() + "_" : std::string();
  // Parameterized tests are named "Instance/Suite.Test/Param": keep the file in TempDir.
  std::replace(prefix.begin(), prefix.end(), '/', '_');
  std::string path = testing::TempDir() + "kiln_" + prefix + name;
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char *>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  EXPECT_TRUE(file.good()) << "cannot write " << path;
  return path;
}

std::string kilnRunPath() {
  const char *fromEnv = std::getenv("KILN_RUN");
  return fromEnv && *fromEnv ? fromEnv : KILN_RUN_PATH;
}

CommandResult runShell(const std::string &command) {
  CommandResult result;
  FILE *pipe = ::popen(command.c_str(), "r");
  if (!pipe) {
    ADD_FAILURE() << "cannot run " << command;
    return result;
  }
  std::array<char, 4096> chunk;
  size_t read = 0;
  while ((read = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0)
    result.output.append(chunk.data(), read);
  int status = ::pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string kilnRunCommand(const std::string &environment) {
  return "env -u KILN_TP_RANK -u KILN_TP_WORLD_SIZE -u KILN_TP_ID -u KILN_TP_ID_FILE -u RANK -u "
         "WORLD_SIZE -u LOCAL_RANK " +
         environment + " '" + kilnRunPath() + "'";
}

CommandResult runKilnRun(const std::string &arguments, const std::string &environment) {
  return runShell(kilnRunCommand(environment) + " " + arguments + " 2>&1");
}

} // namespace test
} // namespace kiln
