//===- ArtifactTest.cpp - Tests of the artifact loader and verifier -------===//
//
// Every rejection kiln_artifact_open can produce, one test each (tensor-parallel tables and
// collectives included), plus valid hand-built artifacts (single-GPU and a tensor-parallel rank)
// and their queries, the header checksum (corruption anywhere after the header is detected; files
// without a checksum still open), and a robustness sweep (truncation at every length, byte flips)
// that must yield a status and never a crash. Tests that edit a file to reach one structural check
// reseal its checksum first (kiln::test::resealChecksum).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include "TestArtifact.h"
#include <gtest/gtest.h>

#include <limits>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

namespace fb = kiln::artifact;
using kiln::test::ArtifactBuilder;
using kiln::test::resealChecksum;

namespace {

/// Outcome of opening a file.
struct OpenResult {
  kiln_status_code_t code = KILN_OK;
  std::string message;
  std::string path;
};

/// Writes `bytes` to a temp file and opens it, releasing everything afterwards.
OpenResult openBytes(const std::vector<uint8_t> &bytes, const std::string &name = "a.kiln") {
  OpenResult result;
  result.path = kiln::test::writeTempFile(name, bytes);
  kiln_artifact_t *artifact = reinterpret_cast<kiln_artifact_t *>(0x1);
  kiln_status_t status = kiln_artifact_open(result.path.c_str(), &artifact);
  result.code = kiln_status_code(status);
  result.message = kiln_status_message(status);
  kiln_status_free(status);
  if (result.code != KILN_OK) {
    EXPECT_EQ(artifact, nullptr) << "out_artifact must be zeroed on failure";
  }
  kiln_artifact_release(artifact);
  return result;
}

/// A valid add-model file.
std::vector<uint8_t> validFile() {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  return builder.build();
}

/// Expects `bytes` to be rejected as INVALID_ARTIFACT with `fragment` in the message, which also
/// names the file.
void expectInvalid(const std::vector<uint8_t> &bytes, const std::string &fragment) {
  OpenResult result = openBytes(bytes);
  EXPECT_EQ(result.code, KILN_INVALID_ARTIFACT) << result.message;
  EXPECT_NE(result.message.find(fragment), std::string::npos)
      << "message: " << result.message << "\nexpected fragment: " << fragment;
  EXPECT_NE(result.message.find(result.path), std::string::npos)
      << "message must name the file: " << result.message;
}

/// Builds the add model after applying `mutate` to its index.
std::vector<uint8_t> mutatedFile(const std::function<void(fb::ModelT &)> &mutate) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  mutate(builder.model);
  return builder.build();
}

/// Overwrites a little-endian u64 at `offset`.
void patchU64(std::vector<uint8_t> &bytes, size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

/// Overwrites a little-endian u32 at `offset`.
void patchU32(std::vector<uint8_t> &bytes, size_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

TEST(ArtifactOpen, AcceptsValidArtifactAndAnswersQueries) {
  std::string path = kiln::test::writeTempFile("valid.kiln", validFile());
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  ASSERT_NE(artifact, nullptr);
  EXPECT_STREQ(kiln_artifact_path(artifact), path.c_str());
  EXPECT_STREQ(kiln_artifact_producer(artifact), "kiln unit test");
  EXPECT_EQ(kiln_artifact_input_count(artifact), 1u);
  EXPECT_EQ(kiln_artifact_output_count(artifact), 1u);
  EXPECT_EQ(kiln_artifact_arena_bytes(artifact), 1024u);
  EXPECT_EQ(kiln_artifact_weights_bytes(artifact), 16u);
  EXPECT_EQ(kiln_artifact_module_count(artifact), 1u);
  EXPECT_EQ(kiln_artifact_launch_count(artifact), 1u);

  kiln_tensor_info_t info;
  ASSERT_EQ(kiln_artifact_input_info(artifact, 0, &info), nullptr);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, KILN_DTYPE_F32);
  ASSERT_EQ(info.rank, 1u);
  EXPECT_EQ(info.shape[0], 4);
  EXPECT_EQ(info.byte_size, 16u);
  ASSERT_EQ(kiln_artifact_output_info(artifact, 0, &info), nullptr);
  EXPECT_STREQ(info.name, "y");

  kiln_launch_info_t launch;
  ASSERT_EQ(kiln_artifact_launch_info(artifact, 0, &launch), nullptr);
  EXPECT_STREQ(launch.function_name, "kiln_add");
  EXPECT_STREQ(launch.module_name, "add");
  EXPECT_EQ(launch.block[0], 4u);
  EXPECT_EQ(launch.arg_count, 3u);

  kiln_module_info_t module;
  ASSERT_EQ(kiln_artifact_module_info(artifact, 0, &module), nullptr);
  EXPECT_STREQ(module.name, "add");
  EXPECT_GT(module.ptx_bytes, 0u);
  EXPECT_EQ(module.cubin_count, 0u);

  size_t index = 99;
  EXPECT_EQ(kiln_artifact_find_input(artifact, "x", &index), nullptr);
  EXPECT_EQ(index, 0u);
  EXPECT_EQ(kiln_artifact_find_output(artifact, "y", &index), nullptr);
  kiln_artifact_release(artifact);
}

TEST(ArtifactOpen, QueriesRejectBadIndicesAndNames) {
  std::string path = kiln::test::writeTempFile("valid.kiln", validFile());
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  kiln_tensor_info_t info;
  kiln_status_t status = kiln_artifact_input_info(artifact, 1, &info);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_EQ(info.name, nullptr);
  kiln_status_free(status);
  status = kiln_artifact_output_info(artifact, 5, &info);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  kiln_status_free(status);
  kiln_launch_info_t launch;
  status = kiln_artifact_launch_info(artifact, 1, &launch);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  kiln_status_free(status);
  kiln_module_info_t module;
  status = kiln_artifact_module_info(artifact, 1, &module);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_EQ(module.name, nullptr);
  kiln_status_free(status);
  uint32_t arch = 7;
  uint64_t bytes = 7;
  status = kiln_artifact_module_cubin(artifact, 0, 0, &arch, &bytes);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_EQ(arch, 0u);
  kiln_status_free(status);
  status = kiln_artifact_module_cubin(artifact, 0, 0, nullptr, &bytes);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  size_t index = 7;
  status = kiln_artifact_find_input(artifact, "nope", &index);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_NE(std::string(kiln_status_message(status)).find("inputs: 'x'"), std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(index, 0u);
  kiln_status_free(status);
  status = kiln_artifact_find_output(artifact, "nope", &index);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  kiln_status_free(status);
  kiln_artifact_release(artifact);
}

TEST(ArtifactOpen, RetainKeepsArtifactAlive) {
  std::string path = kiln::test::writeTempFile("valid.kiln", validFile());
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  kiln_artifact_retain(artifact);
  kiln_artifact_release(artifact);
  EXPECT_EQ(kiln_artifact_input_count(artifact), 1u);
  kiln_artifact_release(artifact);
  kiln_artifact_release(nullptr);
}

TEST(ArtifactOpen, RejectsNullArguments) {
  kiln_status_t status = kiln_artifact_open(nullptr, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
}

TEST(ArtifactOpen, RejectsMissingFile) {
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open("/nonexistent/dir/model.kiln", &artifact);
  EXPECT_EQ(kiln_status_code(status), KILN_IO_ERROR);
  EXPECT_NE(std::string(kiln_status_message(status)).find("/nonexistent/dir/model.kiln"),
            std::string::npos);
  EXPECT_NE(std::string(kiln_status_message(status)).find("No such file"), std::string::npos);
  kiln_status_free(status);
}

TEST(ArtifactOpen, RejectsDirectory) {
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(testing::TempDir().c_str(), &artifact);
  EXPECT_EQ(kiln_status_code(status), KILN_IO_ERROR);
  EXPECT_NE(std::string(kiln_status_message(status)).find("not a regular file"), std::string::npos);
  kiln_status_free(status);
}

TEST(ArtifactOpen, RejectsFifoWithoutWaitingForAWriter) {
  // Opening a FIFO for reading blocks until a writer appears unless O_NONBLOCK
  // is given; kiln_artifact_open must return at once (e.g. a rank file that is
  // a named pipe). alarm() turns a regression into a failure instead of a hang.
  std::string path = testing::TempDir() + "/fifo.kiln";
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  ::alarm(20);
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  ::alarm(0);
  EXPECT_EQ(kiln_status_code(status), KILN_IO_ERROR);
  EXPECT_EQ(artifact, nullptr);
  std::string message = kiln_status_message(status);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not a regular file"), std::string::npos) << message;
  kiln_status_free(status);
  ::unlink(path.c_str());
}

TEST(ArtifactOpen, RejectsEmptyFile) { expectInvalid({}, "smaller than the 64-byte header"); }

TEST(ArtifactOpen, RejectsAOneByteFileInTheSingular) {
  expectInvalid({0x4b}, "file is 1 byte, smaller than the 64-byte header");
}

TEST(ArtifactOpen, RejectsFileShorterThanHeader) {
  std::vector<uint8_t> bytes = validFile();
  bytes.resize(40);
  expectInvalid(bytes, "file is 40 bytes, smaller than the 64-byte header");
}

TEST(ArtifactOpen, RejectsBadMagic) {
  std::vector<uint8_t> bytes = validFile();
  bytes[0] = 'X';
  expectInvalid(bytes, "bad magic");
}

TEST(ArtifactOpen, RejectsNewerFormatVersion) {
  std::vector<uint8_t> bytes = validFile();
  bytes[8] = 4;
  OpenResult result = openBytes(bytes);
  EXPECT_EQ(result.code, KILN_UNSUPPORTED_VERSION) << result.message;
  EXPECT_NE(result.message.find("unsupported artifact format version 4: this runtime reads "
                                "versions 1 to 3; recompile the model with a matching "
                                "kiln-compile"),
            std::string::npos)
      << result.message;
  EXPECT_NE(result.message.find(result.path), std::string::npos) << result.message;
}

TEST(ArtifactOpen, RejectsFormatVersionZero) {
  std::vector<uint8_t> bytes = validFile();
  bytes[8] = 0;
  OpenResult result = openBytes(bytes);
  EXPECT_EQ(result.code, KILN_UNSUPPORTED_VERSION) << result.message;
  EXPECT_NE(result.message.find("unsupported artifact format version 0"), std::string::npos)
      << result.message;
}

TEST(ArtifactOpen, SingleGpuArtifactsAreVersion1) {
  std::vector<uint8_t> bytes = validFile();
  EXPECT_EQ(fb::decodeHeader(bytes.data()).formatVersion, 1u);
  EXPECT_EQ(openBytes(bytes).code, KILN_OK);
}

TEST(ArtifactOpen, AcceptsVersion2WithoutCollectives) {
  // Version 2 only allows collectives; a single-GPU index marked 2 is still valid.
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  builder.model.format_version = 2;
  builder.headerFormatVersion = 2;
  OpenResult result = openBytes(builder.build());
  EXPECT_EQ(result.code, KILN_OK) << result.message;
}

TEST(ArtifactOpen, RejectsBadHeaderSize) {
  std::vector<uint8_t> bytes = validFile();
  bytes[12] = 32;
  expectInvalid(bytes, "header_size is 32, expected 64");
}

TEST(ArtifactOpen, RejectsTruncatedFile) {
  std::vector<uint8_t> bytes = validFile();
  bytes.resize(bytes.size() - 1);
  expectInvalid(bytes, "truncated or modified");
}

TEST(ArtifactOpen, RejectsAppendedBytes) {
  std::vector<uint8_t> bytes = validFile();
  bytes.push_back(0);
  expectInvalid(bytes, "truncated or modified");
}

TEST(ArtifactOpen, RejectsIndexPastEndOfFile) {
  std::vector<uint8_t> bytes = validFile();
  patchU64(bytes, 24, bytes.size()); // index_size
  expectInvalid(bytes, "index [offset 64, size");
  patchU64(bytes, 24, UINT64_MAX - 8); // offset + size overflows
  expectInvalid(bytes, "extends past the end of the file");
}

TEST(ArtifactOpen, RejectsIndexOverlappingHeader) {
  std::vector<uint8_t> bytes = validFile();
  patchU64(bytes, 16, 8);
  expectInvalid(bytes, "overlaps the 64-byte header");
}

TEST(ArtifactOpen, RejectsMisalignedIndex) {
  std::vector<uint8_t> bytes = validFile();
  patchU64(bytes, 16, 68);
  patchU64(bytes, 24, 16);
  expectInvalid(bytes, "not a multiple of 8");
}

TEST(ArtifactOpen, RejectsTinyIndex) {
  std::vector<uint8_t> bytes = validFile();
  patchU64(bytes, 24, 4);
  expectInvalid(bytes, "too small");
}

TEST(ArtifactOpen, RejectsIndexWithoutIdentifier) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  std::memcpy(&bytes[builder.indexOffset() + 4], "XXXX", 4);
  resealChecksum(bytes);
  expectInvalid(bytes, "file identifier");
}

// Regression (UBSan, found by fuzzing): FlatBuffers aligns a vector's 4-byte length prefix, not its
// elements, so an index whose shape-vector offset is moved by 4 bytes passes the FlatBuffers
// verifier with 8-byte dims at an address that is 4 mod 8. The loader must read them without a
// misaligned load (memcpy): here the shifted vector reads as rank 1 with dim N << 32. Under the
// sanitizer build (scripts/sanitize.sh, in CI) a misaligned read aborts this test.
TEST(ArtifactOpen, ShapeVectorWithMisalignedDimsIsReadSafely) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<int64_t> &dims = builder.model.inputs[0]->shape;
  dims.insert(dims.begin(), 1); // [N] -> [1, N]: same bytes, rank 2
  std::vector<uint8_t> bytes = builder.build();
  ASSERT_EQ(openBytes(bytes).code, KILN_OK) << "the unedited file must open";
  uint8_t *index = bytes.data() + builder.indexOffset();
  const fb::Model *model = fb::GetModel(index);
  ASSERT_NE(model->inputs(), nullptr);
  const fb::TensorDesc *desc = model->inputs()->Get(0);
  ASSERT_NE(desc->shape(), nullptr);
  ASSERT_EQ(desc->shape()->size(), 2u);
  const uint8_t *vector = reinterpret_cast<const uint8_t *>(desc->shape());
  ASSERT_EQ(reinterpret_cast<uintptr_t>(vector + 4) % 8, 0u) << "elements start 8-byte aligned";
  // A table field holds its vector's offset relative to the field itself: find the one 4-byte
  // aligned slot of the index that points at the shape vector.
  size_t field = 0, found = 0;
  uint32_t relative = 0;
  for (size_t q = builder.indexOffset(); q + 4 <= bytes.size(); q += 4) {
    uint32_t value = 0;
    std::memcpy(&value, &bytes[q], 4);
    if (value != 0 && bytes.data() + q + value == vector) {
      field = q;
      relative = value;
      ++found;
    }
  }
  ASSERT_EQ(found, 1u) << "the shape vector's offset field";
  relative += 4;
  std::memcpy(&bytes[field], &relative, 4);
  resealChecksum(bytes);
  // Structurally the edited file is valid (a rank-1 input of N << 32 elements, no launch reads past
  // its first N): it opens, and the dims are the bytes at the shifted place, copied out aligned.
  std::string path = kiln::test::writeTempFile("misaligned-dims.kiln", bytes);
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  ASSERT_EQ(kiln_status_code(status), KILN_OK) << kiln_status_message(status);
  kiln_status_free(status);
  kiln_tensor_info_t info{};
  status = kiln_artifact_input_info(artifact, 0, &info);
  ASSERT_EQ(kiln_status_code(status), KILN_OK) << kiln_status_message(status);
  kiln_status_free(status);
  ASSERT_EQ(info.rank, 1u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(info.shape) % alignof(int64_t), 0u);
  EXPECT_EQ(info.shape[0], kiln::test::kAddElements << 32);
  kiln_artifact_release(artifact);
}

TEST(ArtifactOpen, RejectsCorruptFlatbuffer) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  // Root table offset pointing far outside the index.
  patchU64(bytes, builder.indexOffset(), 0);
  bytes[builder.indexOffset()] = 0xf0;
  bytes[builder.indexOffset() + 1] = 0xff;
  bytes[builder.indexOffset() + 2] = 0xff;
  bytes[builder.indexOffset() + 3] = 0x7f;
  std::memcpy(&bytes[builder.indexOffset() + 4], "KILN", 4);
  resealChecksum(bytes);
  expectInvalid(bytes, "failed FlatBuffers verification");
}

TEST(ArtifactOpen, RejectsIndexVersionMismatch) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.format_version = 7; }),
                "index format_version 7 does not match the header's 1");
}

TEST(ArtifactOpen, SingleGpuArtifactHasNoTensorParallelism) {
  std::string path = kiln::test::writeTempFile("valid.kiln", validFile());
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  EXPECT_EQ(kiln_artifact_tp_world_size(artifact), 1u);
  EXPECT_EQ(kiln_artifact_tp_rank(artifact), 0u);
  EXPECT_EQ(kiln_artifact_tp_group_hash(artifact), 0u);
  EXPECT_EQ(kiln_artifact_collective_count(artifact), 0u);
  kiln_collective_info_t info;
  info.kind = "x";
  kiln_status_t status = kiln_artifact_collective_info(artifact, 0, &info);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_EQ(info.kind, nullptr) << "out_info must be zeroed on entry";
  kiln_status_free(status);
  status = kiln_artifact_collective_info(artifact, 0, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  kiln_artifact_release(artifact);
  EXPECT_EQ(kiln_artifact_tp_world_size(nullptr), 1u);
  EXPECT_EQ(kiln_artifact_collective_count(nullptr), 0u);
}

/// A valid rank file: rank 1 of the 2-rank all-reduce model.
std::vector<uint8_t> tpFile(const std::function<void(fb::ModelT &)> &mutate = nullptr) {
  ArtifactBuilder builder;
  kiln::test::buildAllReduceModel(builder, 1, 2, 0x0123456789abcdefull);
  if (mutate)
    mutate(builder.model);
  return builder.build();
}

/// Appends a copy of collective 0 to the all-reduce model, then applies `edit` to the copy.
std::function<void(fb::ModelT &)>
addCollective(const std::function<void(fb::CollectiveT &)> &edit) {
  return [edit](fb::ModelT &m) {
    m.collectives.push_back(std::make_unique<fb::CollectiveT>(*m.collectives[0]));
    edit(*m.collectives.back());
  };
}

TEST(ArtifactTensorParallel, AcceptsRankFileAndAnswersQueries) {
  std::vector<uint8_t> bytes = tpFile();
  EXPECT_EQ(fb::decodeHeader(bytes.data()).formatVersion, 2u);
  std::string path = kiln::test::writeTempFile("rank1.kiln", bytes);
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(kiln_artifact_tp_world_size(artifact), 2u);
  EXPECT_EQ(kiln_artifact_tp_rank(artifact), 1u);
  EXPECT_EQ(kiln_artifact_tp_group_hash(artifact), 0x0123456789abcdefull);
  EXPECT_EQ(kiln_artifact_launch_count(artifact), 2u);
  ASSERT_EQ(kiln_artifact_collective_count(artifact), 1u);
  kiln_collective_info_t info;
  ASSERT_EQ(kiln_artifact_collective_info(artifact, 0, &info), nullptr);
  EXPECT_STREQ(info.kind, "all_reduce_sum");
  EXPECT_EQ(info.dtype, KILN_DTYPE_F32);
  EXPECT_EQ(info.count, 4u);
  EXPECT_EQ(info.before_launch, 1u);
  status = kiln_artifact_collective_info(artifact, 1, &info);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("collective index 1 is out of range (1 "
                      "collectives)"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
  kiln_artifact_release(artifact);
}

TEST(ArtifactTensorParallel, AcceptsDisjointF16AndBf16CollectivesAfterTheLastLaunch) {
  OpenResult result = openBytes(tpFile([](fb::ModelT &m) {
    addCollective([](fb::CollectiveT &c) {
      c.dtype = fb::DType::F16;
      c.count = 8;
      c.input = kiln::test::makeRef(fb::Segment::Arena, 512, 16);
      c.output = kiln::test::makeRef(fb::Segment::Arena, 768, 16);
      c.before_launch = 2; // == launch count: after the last launch
    })(m);
    addCollective([](fb::CollectiveT &c) {
      c.dtype = fb::DType::BF16;
      c.count = 2;
      c.input = kiln::test::makeRef(fb::Segment::Arena, 768, 4);
      c.output = kiln::test::makeRef(fb::Segment::Arena, 768, 4);
      c.before_launch = 2; // equal before_launch: index order
    })(m);
  }));
  EXPECT_EQ(result.code, KILN_OK) << result.message;
}

TEST(ArtifactTensorParallel, RejectsCollectivesInVersion1File) {
  ArtifactBuilder builder;
  kiln::test::buildAllReduceModel(builder, 0, 2);
  builder.model.format_version = 1;
  builder.headerFormatVersion = 1;
  expectInvalid(builder.build(),
                "format version 1 has a tensor_parallel table and collectives, which need "
                "format version 2");
}

TEST(ArtifactTensorParallel, RejectsTensorParallelTableInVersion1File) {
  ArtifactBuilder builder;
  kiln::test::buildAllReduceModel(builder, 0, 2);
  builder.model.collectives.clear();
  builder.model.format_version = 1;
  builder.headerFormatVersion = 1;
  expectInvalid(builder.build(), "format version 1 has a tensor_parallel table, which need");
}

TEST(ArtifactTensorParallel, RejectsCollectivesWithoutTensorParallelTable) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.tensor_parallel.reset(); }),
                "has 1 collective but no tensor_parallel table (world size and rank unknown)");
}

TEST(ArtifactTensorParallel, RejectsWorldSizeOne) {
  expectInvalid(tpFile([](fb::ModelT &m) {
                  m.tensor_parallel->world_size = 1;
                  m.tensor_parallel->rank = 0;
                }),
                "tensor_parallel.world_size is 1; a tensor-parallel rank file needs at least 2");
}

TEST(ArtifactTensorParallel, RejectsWorldSizeAboveNcclLimit) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.tensor_parallel->world_size = 0x80000000u; }),
                "tensor_parallel.world_size 2147483648 exceeds 2147483647, NCCL's rank count "
                "limit");
}

TEST(ArtifactTensorParallel, RejectsRankOutOfRange) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.tensor_parallel->rank = 2; }),
                "tensor_parallel.rank 2 is out of range for world size 2");
}

TEST(ArtifactTensorParallel, RejectsUnknownCollectiveKind) {
  expectInvalid(
      tpFile([](fb::ModelT &m) { m.collectives[0]->kind = static_cast<fb::CollectiveKind>(5); }),
      "collective 0 has unknown kind 5 (this runtime knows 0 = all_reduce_sum)");
}

TEST(ArtifactTensorParallel, RejectsUnknownCollectiveDType) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->dtype = static_cast<fb::DType>(40); }),
                "collective 0 (all_reduce_sum) has unknown dtype 40");
}

TEST(ArtifactTensorParallel, RejectsIntegerCollectiveDType) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->dtype = fb::DType::I32; }),
                "collective 0 (all_reduce_sum) has dtype i32; collectives carry f32, f16 or bf16 "
                "only");
}

TEST(ArtifactTensorParallel, RejectsZeroCount) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->count = 0; }),
                "collective 0 (all_reduce_sum) has count 0");
}

TEST(ArtifactTensorParallel, RejectsCountOverflow) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->count = UINT64_MAX / 2; }),
                "collective 0 (all_reduce_sum): count 9223372036854775807 x f32 overflows 64 "
                "bits");
}

TEST(ArtifactTensorParallel, RejectsMissingInput) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->input.reset(); }),
                "collective 0 (all_reduce_sum) input is missing");
}

TEST(ArtifactTensorParallel, RejectsMissingOutput) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->output.reset(); }),
                "collective 0 (all_reduce_sum) output is missing");
}

TEST(ArtifactTensorParallel, RejectsNonArenaInput) {
  expectInvalid(tpFile([](fb::ModelT &m) {
                  m.collectives[0]->input = kiln::test::makeRef(fb::Segment::Weights, 0, 16);
                }),
                "collective 0 (all_reduce_sum) input is in segment Weights; collectives read and "
                "write the arena only");
}

TEST(ArtifactTensorParallel, RejectsNonArenaOutput) {
  expectInvalid(tpFile([](fb::ModelT &m) {
                  m.collectives[0]->output = kiln::test::makeRef(fb::Segment::Input, 0, 16, 0);
                }),
                "collective 0 (all_reduce_sum) output is in segment Input");
}

TEST(ArtifactTensorParallel, RejectsInputSizeMismatch) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->input->size = 12; }),
                "collective 0 (all_reduce_sum) input covers 12 bytes but count 4 x f32 is 16 "
                "bytes");
}

TEST(ArtifactTensorParallel, RejectsOutputSizeMismatchForF16) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->dtype = fb::DType::F16; }),
                "collective 0 (all_reduce_sum) input covers 16 bytes but count 4 x f16 is 8 "
                "bytes");
}

TEST(ArtifactTensorParallel, RejectsOutputOutsideArena) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->output->offset = 1016; }),
                "collective 0 (all_reduce_sum) output [offset 1016, size 16] is outside the arena "
                "(1024 bytes)");
}

TEST(ArtifactTensorParallel, RejectsPartiallyOverlappingInputAndOutput) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->output->offset = 8; }),
                "collective 0 (all_reduce_sum): input [offset 0, size 16] and output [offset 8, "
                "size 16] overlap without being equal");
}

TEST(ArtifactTensorParallel, RejectsBeforeLaunchPastTheSchedule) {
  expectInvalid(tpFile([](fb::ModelT &m) { m.collectives[0]->before_launch = 3; }),
                "collective 0 (all_reduce_sum): before_launch 3 is past the end of the schedule "
                "(2 launches; 2 means after the last launch)");
}

TEST(ArtifactTensorParallel, RejectsUnsortedCollectives) {
  expectInvalid(tpFile(addCollective([](fb::CollectiveT &c) { c.before_launch = 0; })),
                "collective 1 (all_reduce_sum): before_launch 0 is smaller than collective 0's 1 "
                "(collectives must be sorted by before_launch)");
}

TEST(ArtifactOpen, RejectsWeightsBlobPastEndOfFile) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  // Grow the weights blob's size in place: rebuild with a huge size but same layout.
  builder.model.weights = std::make_unique<fb::Blob>(builder.model.weights->offset(), 1u << 30);
  flatbuffers::FlatBufferBuilder fbb;
  fb::FinishModelBuffer(fbb, fb::Model::Pack(fbb, &builder.model));
  ASSERT_EQ(fbb.GetSize(), builder.indexSize());
  std::memcpy(&bytes[builder.indexOffset()], fbb.GetBufferPointer(), fbb.GetSize());
  resealChecksum(bytes);
  expectInvalid(bytes, "weights blob [offset");
}

/// Rewrites the index of `builder`'s last file after `mutate`; blob layout is kept and the
/// checksum resealed.
std::vector<uint8_t> repackIndex(ArtifactBuilder &builder, std::vector<uint8_t> bytes,
                                 const std::function<void(fb::ModelT &)> &mutate) {
  mutate(builder.model);
  flatbuffers::FlatBufferBuilder fbb;
  fb::FinishModelBuffer(fbb, fb::Model::Pack(fbb, &builder.model));
  EXPECT_EQ(fbb.GetSize(), builder.indexSize());
  std::memcpy(&bytes[builder.indexOffset()], fbb.GetBufferPointer(), fbb.GetSize());
  resealChecksum(bytes);
  return bytes;
}

TEST(ArtifactOpen, RejectsPtxBlobOutOfBounds) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  uint64_t fileSize = bytes.size();
  bytes = repackIndex(builder, bytes, [&](fb::ModelT &m) {
    m.modules[0]->ptx = std::make_unique<fb::Blob>(m.modules[0]->ptx->offset(), fileSize);
  });
  expectInvalid(bytes, "module 0 ('add') PTX [offset");
}

TEST(ArtifactOpen, RejectsBlobOffsetOverflow) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  bytes = repackIndex(builder, bytes, [&](fb::ModelT &m) {
    m.modules[0]->ptx = std::make_unique<fb::Blob>(UINT64_MAX - 255, 512);
  });
  expectInvalid(bytes, "extends past the end of the file");
}

TEST(ArtifactOpen, RejectsCubinOutOfBounds) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder, {{90, std::vector<uint8_t>(32, 0xab)}});
  std::vector<uint8_t> bytes = builder.build();
  bytes = repackIndex(builder, bytes, [&](fb::ModelT &m) {
    m.modules[0]->cubins[0]->image = std::make_unique<fb::Blob>(1u << 20, 32);
  });
  expectInvalid(bytes, "cubin for sm_90 [offset 1048576, size 32] extends past the end");
}

TEST(ArtifactOpen, RejectsMisalignedBlob) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  bytes = repackIndex(builder, bytes, [&](fb::ModelT &m) {
    m.weights = std::make_unique<fb::Blob>(m.weights->offset() + 4, 8);
  });
  expectInvalid(bytes, "is not 256-byte aligned");
}

TEST(ArtifactOpen, RejectsBlobOverlappingHeader) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  bytes = repackIndex(builder, bytes,
                      [&](fb::ModelT &m) { m.weights = std::make_unique<fb::Blob>(0, 16); });
  expectInvalid(bytes, "weights blob [offset 0, size 16] overlaps the header");
}

TEST(ArtifactOpen, RejectsBlobOverlappingIndex) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  // The first blob-aligned offset at or after the index start, still inside the index.
  uint64_t aligned = (builder.indexOffset() + kiln::artifact::kBlobAlignment - 1) /
                     kiln::artifact::kBlobAlignment * kiln::artifact::kBlobAlignment;
  ASSERT_LT(aligned, builder.indexOffset() + builder.indexSize()) << "index too small to overlap";
  bytes = repackIndex(builder, bytes,
                      [&](fb::ModelT &m) { m.weights = std::make_unique<fb::Blob>(aligned, 16); });
  expectInvalid(bytes, "weights blob [offset " + std::to_string(aligned) +
                           ", size 16] overlaps the index");
}

TEST(ArtifactOpen, RejectsModuleWithoutCode) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  bytes = repackIndex(builder, bytes,
                      [&](fb::ModelT &m) { m.modules[0]->ptx = std::make_unique<fb::Blob>(0, 0); });
  expectInvalid(bytes, "has neither PTX nor a cubin");
}

TEST(ArtifactOpen, RejectsArenaRefOutOfBounds) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.launches[0]->args[2]->offset = 1020; }),
                "launch 0 ('kiln_add') argument 2 [offset 1020, size 16] is outside the arena "
                "(1024 bytes)");
}

TEST(ArtifactOpen, RejectsArenaRefOverflow) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.launches[0]->args[2]->offset = UINT64_MAX; }),
                "is outside the arena");
}

TEST(ArtifactOpen, RejectsWeightsRefOutOfBounds) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.launches[0]->args[1]->size = 17; }),
                "argument 1 [offset 0, size 17] is outside the weights (16 bytes)");
}

TEST(ArtifactOpen, RejectsInputIndexOutOfRange) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.launches[0]->args[0]->index = 1; }),
                "argument 0 refers to input 1 but the model has 1 inputs");
}

TEST(ArtifactOpen, RejectsInputRefPastInputSize) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.launches[0]->args[0]->offset = 4; }),
                "is outside the input 'x' (16 bytes)");
}

TEST(ArtifactOpen, RejectsUnknownSegment) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  m.launches[0]->args[0]->segment = static_cast<fb::Segment>(9);
                }),
                "unknown segment 9");
}

TEST(ArtifactOpen, RejectsModuleIndexOutOfRange) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.launches[0]->module_ = 3; }),
                "module index 3 is out of range (1 modules)");
}

TEST(ArtifactOpen, RejectsEmptyFunctionName) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.launches[0]->function = ""; }),
                "empty function name");
}

TEST(ArtifactOpen, RejectsGridWithTwoEntries) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  m.launches[0]->grid = {1, 1};
                }),
                "grid has 2 entries, expected 3");
}

TEST(ArtifactOpen, RejectsMissingBlock) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.launches[0]->block.clear(); }),
                "block has 0 entries, expected 3");
}

TEST(ArtifactOpen, RejectsZeroGridDimension) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  m.launches[0]->grid = {1, 0, 1};
                }),
                "grid[1] = 0 is outside [1, 65535]");
}

TEST(ArtifactOpen, RejectsGridBeyondCudaLimit) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  m.launches[0]->grid = {1, 1, 65536};
                }),
                "grid[2] = 65536 is outside [1, 65535]");
}

TEST(ArtifactOpen, RejectsBlockDimensionBeyondLimit) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  m.launches[0]->block = {1, 1, 65};
                }),
                "block[2] = 65 is outside [1, 64]");
}

TEST(ArtifactOpen, RejectsTooManyThreadsPerBlock) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  m.launches[0]->block = {64, 32, 1};
                }),
                "block 64x32x1 has 2048 threads, more than 1024");
}

TEST(ArtifactOpen, RejectsTooManyArguments) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  for (int i = 0; i < 600; ++i)
                    m.launches[0]->args.push_back(kiln::test::makeRef(fb::Segment::Arena, 0, 4));
                }),
                "arguments, more than 512");
}

TEST(ArtifactOpen, RejectsOutputWithoutLocation) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.outputs[0]->location.reset(); }),
                "output 0 'y' has no location");
}

TEST(ArtifactOpen, RejectsOutputLocationOutOfBounds) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.outputs[0]->location->offset = 1016; }),
                "output 0 'y' location [offset 1016, size 16] is outside the arena");
}

TEST(ArtifactOpen, RejectsOutputLocationSizeMismatch) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.outputs[0]->location->size = 8; }),
                "location covers 8 bytes but the tensor is 16 bytes");
}

TEST(ArtifactOpen, RejectsNegativeDimension) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  m.inputs[0]->shape = {4, -1};
                }),
                "input 0 'x' has negative dimension -1 at position 1");
}

TEST(ArtifactOpen, RejectsByteSizeOverflow) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  m.inputs[0]->shape = {INT64_MAX / 2, 4};
                }),
                "byte size overflows 64 bits");
}

TEST(ArtifactOpen, RejectsUnknownDType) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.inputs[0]->dtype = static_cast<fb::DType>(42); }),
                "input 0 'x' has unknown dtype 42");
}

TEST(ArtifactOpen, RejectsEmptyTensorName) {
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.inputs[0]->name = ""; }),
                "input 0 has an empty name");
}

TEST(ArtifactOpen, RejectsDuplicateInputNames) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  m.inputs.push_back(std::make_unique<fb::TensorDescT>(*m.inputs[0]));
                }),
                "duplicate input name 'x'");
}

TEST(ArtifactOpen, RejectsDuplicateOutputNames) {
  expectInvalid(mutatedFile([](fb::ModelT &m) {
                  m.outputs.push_back(std::make_unique<fb::TensorDescT>(*m.outputs[0]));
                }),
                "duplicate output name 'y'");
}

/// Returns the offset of the launch's `block` vector ([4, 1, 1] after its length 3) in the index.
size_t findBlockVector(const std::vector<uint8_t> &bytes, const ArtifactBuilder &builder) {
  const uint8_t pattern[16] = {3, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  size_t begin = builder.indexOffset(), end = begin + builder.indexSize();
  for (size_t i = begin; i + sizeof(pattern) <= end; ++i)
    if (std::memcmp(&bytes[i], pattern, sizeof(pattern)) == 0)
      return i + 4;
  ADD_FAILURE() << "block vector [4, 1, 1] not found in the index";
  return 0;
}

/// Expects a checksum mismatch naming the file and both CRCs.
void expectChecksumMismatch(const std::vector<uint8_t> &bytes, uint32_t expected) {
  char fragment[128];
  std::snprintf(fragment, sizeof(fragment),
                "invalid artifact: checksum mismatch: file is corrupted (expected 0x%08x, got "
                "0x%08x)",
                expected, kiln::test::artifactCrc32(bytes));
  expectInvalid(bytes, fragment);
}

TEST(ArtifactChecksum, BuilderWritesCrc32OfEverythingAfterTheHeader) {
  std::vector<uint8_t> bytes = validFile();
  fb::ArtifactHeader header = fb::decodeHeader(bytes.data());
  EXPECT_EQ(header.checksumKind, fb::kChecksumCrc32);
  EXPECT_EQ(header.checksum, kiln::test::artifactCrc32(bytes));
  // The CRC-32 of "123456789" is the standard check value of CRC-32/ISO-HDLC.
  std::vector<uint8_t> check(fb::kHeaderSize, 0);
  for (char c : std::string("123456789"))
    check.push_back(static_cast<uint8_t>(c));
  EXPECT_EQ(kiln::test::artifactCrc32(check), 0xcbf43926u);
}

/// A single-bit flip in the index that the structural checks cannot see (block 4x1x1 becomes
/// 5x1x1, still a valid launch) is caught by the checksum.
TEST(ArtifactChecksum, RejectsFlippedIndexBit) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  uint32_t recorded = fb::decodeHeader(bytes.data()).checksum;
  size_t block = findBlockVector(bytes, builder);
  ASSERT_NE(block, 0u);
  bytes[block] ^= 0x01;
  expectChecksumMismatch(bytes, recorded);

  // Without a checksum the same file opens with the corrupted launch: what the CRC-32 prevents.
  resealChecksum(bytes, fb::kChecksumNone);
  std::string path = kiln::test::writeTempFile("unchecked.kiln", bytes);
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_launch_info_t launch;
  ASSERT_EQ(kiln_artifact_launch_info(artifact, 0, &launch), nullptr);
  EXPECT_EQ(launch.block[0], 5u);
  kiln_artifact_release(artifact);
}

TEST(ArtifactChecksum, RejectsFlippedWeightByte) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> bytes = builder.build();
  uint32_t recorded = fb::decodeHeader(bytes.data()).checksum;
  bytes[builder.model.weights->offset() + 5] ^= 0x10;
  expectChecksumMismatch(bytes, recorded);
}

TEST(ArtifactChecksum, RejectsWrongRecordedChecksum) {
  std::vector<uint8_t> bytes = validFile();
  uint32_t actual = kiln::test::artifactCrc32(bytes);
  patchU32(bytes, 44, actual ^ 0x80000000u);
  expectChecksumMismatch(bytes, actual ^ 0x80000000u);
}

TEST(ArtifactChecksum, RejectsUnknownChecksumKind) {
  std::vector<uint8_t> bytes = validFile();
  patchU32(bytes, 40, 2);
  expectInvalid(bytes, "unknown checksum kind 0x00000002 (this runtime knows 0x00000000 = none and "
                       "0x31435243 = CRC-32): the header is corrupted or the file needs a newer "
                       "runtime");
}

/// No single bit flip of the CRC-32 kind tag yields "none" (or another accepted kind).
TEST(ArtifactChecksum, KindTagSurvivesNoSingleBitFlip) {
  for (int bit = 0; bit < 32; ++bit) {
    std::vector<uint8_t> bytes = validFile();
    bytes[40 + bit / 8] ^= uint8_t(1u << (bit % 8));
    kiln_artifact_t *artifact = nullptr;
    std::string path = kiln::test::writeTempFile("kindflip.kiln", bytes);
    kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
    EXPECT_NE(status, nullptr) << "bit " << bit;
    kiln_status_free(status);
    kiln_artifact_release(artifact);
  }
}

/// Kind 0 (files written before the checksum existed) is accepted without verification; the
/// checksum field is then ignored.
TEST(ArtifactChecksum, AcceptsChecksumKindNone) {
  std::vector<uint8_t> bytes = validFile();
  resealChecksum(bytes, fb::kChecksumNone);
  patchU32(bytes, 44, 0xdeadbeef);
  OpenResult result = openBytes(bytes);
  EXPECT_EQ(result.code, KILN_OK) << result.message;
}

/// CRC-32 detects every single-bit error: one flipped bit in each byte after the header.
TEST(ArtifactChecksum, EveryBitFlipAfterTheHeaderIsDetected) {
  std::vector<uint8_t> full = validFile();
  for (size_t i = fb::kHeaderSize; i < full.size(); ++i) {
    std::vector<uint8_t> bytes = full;
    bytes[i] ^= static_cast<uint8_t>(1u << (i % 8));
    OpenResult result = openBytes(bytes, "flipped.kiln");
    EXPECT_EQ(result.code, KILN_INVALID_ARTIFACT) << "byte " << i;
    EXPECT_NE(result.message.find("checksum mismatch"), std::string::npos)
        << "byte " << i << ": " << result.message;
  }
}

/// Truncating the file anywhere, and patching the recorded size to match, must give a status.
TEST(ArtifactRobustness, EveryTruncationIsRejectedCleanly) {
  std::vector<uint8_t> full = validFile();
  for (size_t length = 0; length < full.size(); ++length) {
    std::vector<uint8_t> bytes(full.begin(), full.begin() + length);
    if (length >= 64) {
      patchU64(bytes, 32, length);
      resealChecksum(bytes); // reach the structural checks, not just the checksum
    }
    OpenResult result = openBytes(bytes, "truncated.kiln");
    EXPECT_NE(result.code, KILN_OK) << "length " << length;
  }
}

/// Flipping any single byte of the header or index must give OK or a status, never a crash. The
/// file carries no checksum (kind 0, as before it existed), so every flip reaches the structural
/// verifier.
TEST(ArtifactRobustness, ByteFlipsInHeaderAndIndexNeverCrash) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> full = builder.build();
  resealChecksum(full, fb::kChecksumNone);
  size_t end = builder.indexOffset() + builder.indexSize();
  for (size_t i = 0; i < end; ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bytes = full;
      bytes[i] ^= mask;
      OpenResult result = openBytes(bytes, "flipped.kiln");
      if (result.code != KILN_OK) {
        EXPECT_FALSE(result.message.empty());
      }
    }
  }
}

} // namespace

// ---- Programs (Model.programs: one per generation step shape) -------------------------------

namespace {
/// The add model with a second program "twice" (the same kernel on an 8-element input, arena
/// 2048) and program 0 named "once"; `mutate` then edits the index.
std::vector<uint8_t> twoProgramFile(const std::function<void(fb::ModelT &)> &mutate = {}) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  fb::ModelT &model = builder.model;
  model.program_name = "once";
  auto program = std::make_unique<fb::ProgramT>();
  program->name = "twice";
  program->arena_bytes = 2048;
  auto input = std::make_unique<fb::TensorDescT>();
  input->name = "x";
  input->dtype = fb::DType::F32;
  input->shape = {2, 4};
  program->inputs.push_back(std::move(input));
  auto output = std::make_unique<fb::TensorDescT>();
  output->name = "y";
  output->dtype = fb::DType::F32;
  output->shape = {2, 4};
  output->location = kiln::test::makeRef(fb::Segment::Arena, 1024, 32);
  program->outputs.push_back(std::move(output));
  for (uint64_t half = 0; half < 2; ++half) {
    auto launch = std::make_unique<fb::LaunchT>();
    launch->module_ = 0;
    launch->function = "kiln_add";
    launch->grid = {1, 1, 1};
    launch->block = {4, 1, 1};
    launch->args.push_back(kiln::test::makeRef(fb::Segment::Input, 16 * half, 16, 0));
    launch->args.push_back(kiln::test::makeRef(fb::Segment::Weights, 0, 16));
    launch->args.push_back(kiln::test::makeRef(fb::Segment::Arena, 1024 + 16 * half, 16));
    program->launches.push_back(std::move(launch));
  }
  model.programs.push_back(std::move(program));
  if (mutate)
    mutate(model);
  return builder.build();
}
} // namespace

TEST(ArtifactPrograms, OneShapeArtifactHasOneUnnamedProgram) {
  std::string path = kiln::test::writeTempFile("one-program.kiln", validFile());
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  EXPECT_EQ(kiln_artifact_program_count(artifact), 1u);
  EXPECT_STREQ(kiln_artifact_program_name(artifact), "");
  kiln_artifact_t *program = nullptr;
  ASSERT_EQ(kiln_artifact_program(artifact, 0, &program), nullptr);
  EXPECT_EQ(program, artifact);
  kiln_artifact_release(program);
  kiln_status_t status = kiln_artifact_program(artifact, 1, &program);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_NE(std::string(kiln_status_message(status)).find("program index 1 is out of range (1 "
                                                          "program)"),
            std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(program, nullptr);
  kiln_status_free(status);
  status = kiln_artifact_find_program(artifact, "decode_b1", &program);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_NE(std::string(kiln_status_message(status)).find("one unnamed program"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
  status = kiln_artifact_find_program(nullptr, "x", &program);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  kiln_artifact_release(artifact);
  EXPECT_EQ(kiln_artifact_program_count(nullptr), 0u);
  EXPECT_STREQ(kiln_artifact_program_name(nullptr), "");
}

TEST(ArtifactPrograms, EachProgramIsAnArtifactThatKeepsTheFileAlive) {
  std::string path = kiln::test::writeTempFile("two-programs.kiln", twoProgramFile());
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(kiln_artifact_program_count(artifact), 2u);
  EXPECT_STREQ(kiln_artifact_program_name(artifact), "once");
  kiln_artifact_t *twice = nullptr;
  ASSERT_EQ(kiln_artifact_find_program(artifact, "twice", &twice), nullptr);
  kiln_artifact_t *byIndex = nullptr;
  ASSERT_EQ(kiln_artifact_program(artifact, 1, &byIndex), nullptr);
  EXPECT_EQ(byIndex, twice);
  kiln_artifact_release(byIndex);
  // The owner goes first: the program handle keeps the mapping and every table alive.
  kiln_artifact_release(artifact);
  EXPECT_STREQ(kiln_artifact_program_name(twice), "twice");
  EXPECT_EQ(kiln_artifact_program_count(twice), 2u);
  EXPECT_EQ(kiln_artifact_arena_bytes(twice), 2048u);
  EXPECT_EQ(kiln_artifact_weights_bytes(twice), 16u);
  EXPECT_EQ(kiln_artifact_module_count(twice), 1u);
  EXPECT_EQ(kiln_artifact_launch_count(twice), 2u);
  kiln_tensor_info_t info;
  ASSERT_EQ(kiln_artifact_input_info(twice, 0, &info), nullptr);
  EXPECT_STREQ(info.name, "x");
  ASSERT_EQ(info.rank, 2u);
  EXPECT_EQ(info.byte_size, 32u);
  kiln_artifact_t *once = nullptr;
  status = kiln_artifact_find_program(twice, "nope", &once);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_NE(std::string(kiln_status_message(status)).find("its programs: 'once', 'twice'"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
  ASSERT_EQ(kiln_artifact_program(twice, 0, &once), nullptr);
  EXPECT_EQ(kiln_artifact_launch_count(once), 1u);
  kiln_artifact_release(twice);
  EXPECT_EQ(kiln_artifact_input_count(once), 1u);
  kiln_artifact_release(once);
}

// Program.estimated_us / Model.estimated_us (the compiler's time estimates the prefill plan
// compares): read per program; absent (an older file), negative or NaN read as 0.
TEST(ArtifactPrograms, EstimatedTimePerProgram) {
  std::string path = kiln::test::writeTempFile(
      "estimates.kiln", twoProgramFile([](fb::ModelT &m) {
        m.estimated_us = 12.5f;
        m.programs[0]->estimated_us = 40.0f;
      }));
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  kiln_artifact_t *twice = nullptr;
  ASSERT_EQ(kiln_artifact_find_program(artifact, "twice", &twice), nullptr);
  EXPECT_DOUBLE_EQ(kiln_artifact_program_estimated_us(artifact), 12.5);
  EXPECT_DOUBLE_EQ(kiln_artifact_program_estimated_us(twice), 40.0);
  kiln_artifact_release(twice);
  kiln_artifact_release(artifact);
  EXPECT_EQ(kiln_artifact_program_estimated_us(nullptr), 0.0);
  for (float bad : {0.0f, -3.0f, std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity()}) {
    std::string badPath = kiln::test::writeTempFile(
        "bad-estimates.kiln", twoProgramFile([&](fb::ModelT &m) { m.estimated_us = bad; }));
    ASSERT_EQ(kiln_artifact_open(badPath.c_str(), &artifact), nullptr);
    EXPECT_EQ(kiln_artifact_program_estimated_us(artifact), 0.0) << bad;
    kiln_artifact_release(artifact);
  }
}

TEST(ArtifactPrograms, RejectsBadPrograms) {
  expectInvalid(twoProgramFile([](fb::ModelT &m) { m.program_name.clear(); }),
                "program 0 has no program_name");
  expectInvalid(mutatedFile([](fb::ModelT &m) { m.program_name = "lonely"; }),
                "program_name is set but the artifact has no further programs");
  expectInvalid(twoProgramFile([](fb::ModelT &m) { m.programs[0]->name = "once"; }),
                "program 1 repeats the name 'once'");
  expectInvalid(twoProgramFile([](fb::ModelT &m) { m.programs[0]->name.clear(); }),
                "program 1 has an empty name");
  // A program's references are checked against its own inputs and arena.
  expectInvalid(twoProgramFile([](fb::ModelT &m) { m.programs[0]->arena_bytes = 1024; }),
                "program 1 ('twice'): ");
  expectInvalid(twoProgramFile([](fb::ModelT &m) {
                  m.programs[0]->launches[1]->args[0]->index = 3;
                }),
                "program 1 ('twice'): ");
  expectInvalid(twoProgramFile([](fb::ModelT &m) { m.programs[0]->launches[0]->module_ = 7; }),
                "program 1 ('twice'): ");
}
