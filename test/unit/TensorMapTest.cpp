//===- TensorMapTest.cpp - Tensor maps in artifacts, without a GPU --------===//
//
// Tensor maps (TMA descriptors passed as kernel parameters after the pointers, format version 3):
// the C API reads them back; the format version is 3 exactly when a launch has them and older
// versions carrying them are rejected; every verification error kiln_artifact_open reports for a
// malformed map, one test each, with its message naming the launch and the map; the session's
// checks that need no device (a driver without cuTensorMapEncodeTiled, bound addresses a map
// cannot use); and kiln-run --info / --json describing the maps.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include "Session.h"
#include "TestArtifact.h"
#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace fb = kiln::artifact;
using kiln::test::ArtifactBuilder;
using kiln::test::makeRef;
using kiln::test::makeTileMap;

namespace {

/// PTX placeholder: the verifier does not parse PTX, and these tests create no session.
const char *const kNoKernel = "// no kernel: the loader tests never run it\n";

/// The TMA copy model (kiln::test::buildTmaCopyModel) after `mutate`, built.
std::vector<uint8_t> tmaFile(const std::function<void(fb::ModelT &)> &mutate = {}) {
  ArtifactBuilder builder;
  kiln::test::buildTmaCopyModel(builder, kNoKernel);
  if (mutate)
    mutate(builder.model);
  return builder.build();
}

/// The first launch's tensor map `m` of `model`.
fb::TensorMapT &mapOf(fb::ModelT &model, size_t m = 0) {
  return *model.launches[0]->tensor_maps[m];
}

/// Opens `bytes`; returns the artifact (caller releases) or null with `error` set.
kiln_artifact_t *open(const std::vector<uint8_t> &bytes, const std::string &name,
                      std::string *error = nullptr, kiln_status_code_t *code = nullptr) {
  std::string path = kiln::test::writeTempFile(name, bytes);
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  if (error)
    *error = kiln_status_message(status);
  if (code)
    *code = kiln_status_code(status);
  kiln_status_free(status);
  return artifact;
}

/// Expects the TMA model after `mutate` to be rejected as INVALID_ARTIFACT with exactly
/// "'<path>': invalid artifact: " + `message`.
void expectRejected(const std::function<void(fb::ModelT &)> &mutate, const std::string &message) {
  std::string path = kiln::test::writeTempFile("bad_map.kiln", tmaFile(mutate));
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARTIFACT) << kiln_status_message(status);
  EXPECT_EQ(std::string(kiln_status_message(status)),
            "'" + path + "': invalid artifact: " + message);
  EXPECT_EQ(artifact, nullptr);
  kiln_status_free(status);
  kiln_artifact_release(artifact);
}

/// Expects the TMA model after `mutate` to open cleanly.
void expectAccepted(const std::function<void(fb::ModelT &)> &mutate) {
  std::string path = kiln::test::writeTempFile("ok_map.kiln", tmaFile(mutate));
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  EXPECT_EQ(kiln_status_code(status), KILN_OK) << kiln_status_message(status);
  EXPECT_NE(artifact, nullptr);
  kiln_status_free(status);
  kiln_artifact_release(artifact);
}

//===----------------------------------------------------------------------===//
// Reading tensor maps back.
//===----------------------------------------------------------------------===//

TEST(ArtifactTensorMap, QueriesReadBackEveryField) {
  kiln_artifact_t *artifact = open(tmaFile([](fb::ModelT &model) {
                                     // Map 1: rank 1 with an offset, 32-byte swizzle.
                                     fb::TensorMapT &map = mapOf(model, 1);
                                     map.offset = 256;
                                     map.dtype = fb::DType::F32;
                                     map.dims = {1024};
                                     map.strides.clear();
                                     map.box = {8};
                                     map.swizzle = fb::TensorMapSwizzle::B32;
                                   }),
                                   "tma.kiln");
  ASSERT_NE(artifact, nullptr);
  ASSERT_EQ(kiln_artifact_launch_tensor_map_count(artifact, 0), 2u);
  kiln_launch_info_t launch;
  ASSERT_EQ(kiln_artifact_launch_info(artifact, 0, &launch), nullptr);
  EXPECT_EQ(launch.arg_count, 2u) << "pointer arguments only";

  kiln_tensor_map_info_t info;
  ASSERT_EQ(kiln_artifact_launch_tensor_map_info(artifact, 0, 0, &info), nullptr);
  EXPECT_EQ(info.arg, 0u);
  EXPECT_EQ(info.offset_bytes, 0u);
  EXPECT_EQ(info.dtype, KILN_DTYPE_F16);
  ASSERT_EQ(info.rank, 2u);
  EXPECT_EQ(info.dims[0], kiln::test::kTmaCols);
  EXPECT_EQ(info.dims[1], kiln::test::kTmaRows);
  ASSERT_NE(info.strides, nullptr);
  EXPECT_EQ(info.strides[0], kiln::test::kTmaCols * 2);
  EXPECT_EQ(info.box[0], 64u);
  EXPECT_EQ(info.box[1], 64u);
  EXPECT_EQ(info.swizzle, KILN_TENSOR_MAP_SWIZZLE_128B);

  ASSERT_EQ(kiln_artifact_launch_tensor_map_info(artifact, 0, 1, &info), nullptr);
  EXPECT_EQ(info.arg, 1u);
  EXPECT_EQ(info.offset_bytes, 256u);
  EXPECT_EQ(info.dtype, KILN_DTYPE_F32);
  ASSERT_EQ(info.rank, 1u);
  EXPECT_EQ(info.dims[0], 1024u);
  EXPECT_EQ(info.strides, nullptr) << "rank 1 has no strides";
  EXPECT_EQ(info.box[0], 8u);
  EXPECT_EQ(info.swizzle, KILN_TENSOR_MAP_SWIZZLE_32B);
  kiln_artifact_release(artifact);
}

TEST(ArtifactTensorMap, QueriesRejectBadIndicesAndNulls) {
  kiln_artifact_t *artifact = open(tmaFile(), "tma.kiln");
  ASSERT_NE(artifact, nullptr);
  EXPECT_EQ(kiln_artifact_launch_tensor_map_count(artifact, 1), 0u) << "no launch 1";
  EXPECT_EQ(kiln_artifact_launch_tensor_map_count(nullptr, 0), 0u);
  kiln_tensor_map_info_t info;
  info.rank = 99;
  kiln_status_t status = kiln_artifact_launch_tensor_map_info(artifact, 0, 2, &info);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_STREQ(kiln_status_message(status), "tensor map index 2 is out of range (launch 0 has 2)");
  EXPECT_EQ(info.rank, 0u) << "out_info is zeroed on entry";
  kiln_status_free(status);
  status = kiln_artifact_launch_tensor_map_info(artifact, 3, 0, &info);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_STREQ(kiln_status_message(status), "launch index 3 is out of range (1 launches)");
  kiln_status_free(status);
  status = kiln_artifact_launch_tensor_map_info(artifact, 0, 0, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "kiln_artifact_launch_tensor_map_info: artifact and out_info must be non-NULL");
  kiln_status_free(status);
  kiln_artifact_release(artifact);

  // Launches of older files have none.
  ArtifactBuilder add;
  kiln::test::buildAddModel(add);
  artifact = open(add.build(), "add.kiln");
  ASSERT_NE(artifact, nullptr);
  EXPECT_EQ(kiln_artifact_launch_tensor_map_count(artifact, 0), 0u);
  kiln_artifact_release(artifact);
}

TEST(ArtifactTensorMap, AcceptsMapsReachingExactlyTheEndOfTheirBuffer) {
  // The model's maps already end at byte 16384 of 16384: 64 * 2 + 127 * 128. Rank 5 and an
  // offset that leaves exactly the room needed are fine too.
  kiln_artifact_t *artifact = open(tmaFile([](fb::ModelT &model) {
                                     fb::TensorMapT &map = mapOf(model, 1);
                                     map.offset = 16;
                                     map.dims = {8, 2, 2, 2, 63};     // 16 + 16 + ...
                                     map.strides = {16, 32, 64, 256}; // ... + 62 * 256 = 16000
                                     map.box = {8, 1, 2, 1, 63};
                                     map.swizzle = fb::TensorMapSwizzle::None;
                                   }),
                                   "tma_rank5.kiln");
  ASSERT_NE(artifact, nullptr);
  kiln_tensor_map_info_t info;
  ASSERT_EQ(kiln_artifact_launch_tensor_map_info(artifact, 0, 1, &info), nullptr);
  EXPECT_EQ(info.rank, 5u);
  kiln_artifact_release(artifact);
  artifact = open(tmaFile([](fb::ModelT &model) {
                    // One row fewer, moved up by one row: ends at 128 + 64 * 2 + 126 * 128.
                    fb::TensorMapT &map = mapOf(model, 0);
                    map.offset = 128;
                    map.dims = {64, 127};
                  }),
                  "tma_offset.kiln");
  EXPECT_NE(artifact, nullptr);
  kiln_artifact_release(artifact);
}

//===----------------------------------------------------------------------===//
// Format version.
//===----------------------------------------------------------------------===//

TEST(ArtifactTensorMap, FilesWithTensorMapsAreVersion3AndOnlyThose) {
  std::vector<uint8_t> bytes = tmaFile();
  EXPECT_EQ(fb::decodeHeader(bytes.data()).formatVersion, 3u);
  kiln_artifact_t *artifact = open(bytes, "v3.kiln");
  EXPECT_NE(artifact, nullptr);
  kiln_artifact_release(artifact);

  ArtifactBuilder add;
  kiln::test::buildAddModel(add);
  EXPECT_EQ(fb::decodeHeader(add.build().data()).formatVersion, 1u);
  ArtifactBuilder rank;
  kiln::test::buildAllReduceModel(rank, 0, 2);
  EXPECT_EQ(fb::decodeHeader(rank.build().data()).formatVersion, 2u);

  // The writers' rule, in one place.
  EXPECT_EQ(fb::formatVersionFor(false, false), 1u);
  EXPECT_EQ(fb::formatVersionFor(false, true), 2u);
  EXPECT_EQ(fb::formatVersionFor(true, false), 3u);
  EXPECT_EQ(fb::formatVersionFor(true, true), 3u);
}

TEST(ArtifactTensorMap, Version3RankFileWithCollectivesAndTensorMapsOpens) {
  ArtifactBuilder builder;
  kiln::test::buildAllReduceModel(builder, 1, 2);
  builder.model.format_version = fb::kFormatVersionTensorMaps;
  // A 1-D map over launch 0's input x (16 bytes of f32).
  auto map = std::make_unique<fb::TensorMapT>();
  map->arg = 0;
  map->dtype = fb::DType::F32;
  map->dims = {4};
  map->box = {4};
  builder.model.launches[0]->tensor_maps.push_back(std::move(map));
  std::vector<uint8_t> bytes = builder.build();
  EXPECT_EQ(fb::decodeHeader(bytes.data()).formatVersion, 3u);
  std::string error;
  kiln_artifact_t *artifact = open(bytes, "tp_v3.rank1.kiln", &error);
  ASSERT_NE(artifact, nullptr) << error;
  EXPECT_EQ(kiln_artifact_tp_world_size(artifact), 2u);
  EXPECT_EQ(kiln_artifact_collective_count(artifact), 1u);
  EXPECT_EQ(kiln_artifact_launch_tensor_map_count(artifact, 0), 1u);
  kiln_artifact_release(artifact);
}

TEST(ArtifactTensorMap, Version3WithoutTensorMapsOpens) {
  ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  builder.model.format_version = 3;
  builder.headerFormatVersion = 3;
  std::string error;
  kiln_artifact_t *artifact = open(builder.build(), "v3_plain.kiln", &error);
  EXPECT_NE(artifact, nullptr) << error;
  kiln_artifact_release(artifact);
}

TEST(ArtifactTensorMap, RejectsTensorMapsInVersion1And2Files) {
  for (uint32_t version : {1u, 2u}) {
    ArtifactBuilder builder;
    kiln::test::buildTmaCopyModel(builder, kNoKernel);
    builder.model.format_version = version;
    builder.headerFormatVersion = version;
    std::string path = kiln::test::writeTempFile("old_version.kiln", builder.build());
    kiln_artifact_t *artifact = nullptr;
    kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
    EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARTIFACT);
    EXPECT_EQ(std::string(kiln_status_message(status)),
              "'" + path + "': invalid artifact: format version " + std::to_string(version) +
                  " has tensor maps in launch 0 ('kiln_tma_copy'), which need format version 3 "
                  "(a writer that emits tensor maps must mark the file version 3, or an older "
                  "runtime would launch the kernel without them)");
    kiln_status_free(status);
  }
}

//===----------------------------------------------------------------------===//
// Verification: one test per error.
//===----------------------------------------------------------------------===//

TEST(ArtifactTensorMapInvalid, ArgumentOutOfRange) {
  expectRejected([](fb::ModelT &model) { mapOf(model, 1).arg = 2; },
                 "launch 0 ('kiln_tma_copy') tensor map 1: arg 2 is out of range (the launch has "
                 "2 arguments)");
}

TEST(ArtifactTensorMapInvalid, UnknownDType) {
  expectRejected([](fb::ModelT &model) { mapOf(model).dtype = static_cast<fb::DType>(200); },
                 "launch 0 ('kiln_tma_copy') tensor map 0 has unknown dtype 200");
}

TEST(ArtifactTensorMapInvalid, RankZeroAndRankSix) {
  expectRejected(
      [](fb::ModelT &model) {
        mapOf(model).dims.clear();
        mapOf(model).strides.clear();
        mapOf(model).box.clear();
      },
      "launch 0 ('kiln_tma_copy') tensor map 0 has 0 dims; tensor maps have rank 1 to 5");
  expectRejected(
      [](fb::ModelT &model) {
        mapOf(model).dims = {64, 2, 2, 2, 2, 2};
        mapOf(model).strides = {128, 256, 512, 1024, 2048};
        mapOf(model).box = {64, 1, 1, 1, 1, 1};
      },
      "launch 0 ('kiln_tma_copy') tensor map 0 has 6 dims; tensor maps have rank 1 to 5");
}

TEST(ArtifactTensorMapInvalid, StrideCountDiffersFromRankMinusOne) {
  expectRejected(
      [](fb::ModelT &model) {
        mapOf(model).strides = {128, 16384};
      },
      "launch 0 ('kiln_tma_copy') tensor map 0 has 2 strides for rank 2; expected 1 "
      "(the byte strides of dims 1 to rank - 1)");
}

TEST(ArtifactTensorMapInvalid, BoxCountDiffersFromRank) {
  expectRejected([](fb::ModelT &model) { mapOf(model).box = {64}; },
                 "launch 0 ('kiln_tma_copy') tensor map 0 has 1 box entries for rank 2; "
                 "expected 2");
}

TEST(ArtifactTensorMapInvalid, DimZeroOrAbove2To32) {
  expectRejected([](fb::ModelT &model) { mapOf(model).dims[1] = 0; },
                 "launch 0 ('kiln_tma_copy') tensor map 0: dims[1] = 0 is outside [1, 2^32]");
  expectRejected([](fb::ModelT &model) { mapOf(model).dims[0] = (uint64_t(1) << 32) + 1; },
                 "launch 0 ('kiln_tma_copy') tensor map 0: dims[0] = 4294967297 is outside "
                 "[1, 2^32]");
}

TEST(ArtifactTensorMapInvalid, StrideNotAMultipleOf16) {
  expectRejected([](fb::ModelT &model) { mapOf(model).strides[0] = 132; },
                 "launch 0 ('kiln_tma_copy') tensor map 0: strides[0] = 132 bytes is not a "
                 "multiple of 16");
}

TEST(ArtifactTensorMapInvalid, StrideNotBelow2To40) {
  expectRejected([](fb::ModelT &model) { mapOf(model).strides[0] = uint64_t(1) << 40; },
                 "launch 0 ('kiln_tma_copy') tensor map 0: strides[0] = 1099511627776 bytes is "
                 "not below 2^40");
}

TEST(ArtifactTensorMapInvalid, BoxOutsideOneTo256) {
  expectRejected([](fb::ModelT &model) { mapOf(model).box[1] = 0; },
                 "launch 0 ('kiln_tma_copy') tensor map 0: box[1] = 0 is outside [1, 256]");
  expectRejected(
      [](fb::ModelT &model) {
        mapOf(model).dims[1] = 100;
        mapOf(model).box[1] = 257;
      },
      "launch 0 ('kiln_tma_copy') tensor map 0: box[1] = 257 is outside [1, 256]");
}

// A box larger than its dim is valid (the GEMM's 128-row A box over M = 1): the rest of the box
// is zero-filled, and only dims count towards the bytes the map addresses.
TEST(ArtifactTensorMapValid, BoxLargerThanItsDim) {
  expectAccepted([](fb::ModelT &model) { mapOf(model).dims[1] = 32; });
}

TEST(ArtifactTensorMapInvalid, InnermostBoxRowNotAMultipleOf16Bytes) {
  expectRejected([](fb::ModelT &model) { mapOf(model).box[0] = 4; },
                 "launch 0 ('kiln_tma_copy') tensor map 0: box[0] = 4 f16 elements is 8 bytes, "
                 "not a multiple of 16 (TMA copies the innermost box dimension in 16-byte "
                 "units)");
}

TEST(ArtifactTensorMapInvalid, UnknownSwizzle) {
  expectRejected(
      [](fb::ModelT &model) { mapOf(model).swizzle = static_cast<fb::TensorMapSwizzle>(4); },
      "launch 0 ('kiln_tma_copy') tensor map 0 has unknown swizzle 4 (this runtime knows 0 = "
      "none, 1 = 32B, 2 = 64B, 3 = 128B)");
}

TEST(ArtifactTensorMapInvalid, BoxRowWiderThanTheSwizzleSpan) {
  expectRejected(
      [](fb::ModelT &model) { mapOf(model, 1).swizzle = fb::TensorMapSwizzle::B64; },
      "launch 0 ('kiln_tma_copy') tensor map 1: box[0] = 64 f16 elements is 128 bytes, more "
      "than the 64-byte span of swizzle 64B");
  expectRejected(
      [](fb::ModelT &model) {
        mapOf(model).dims = {128, 64};
        mapOf(model).strides = {256};
        mapOf(model).box = {128, 32};
      },
      "launch 0 ('kiln_tma_copy') tensor map 0: box[0] = 128 f16 elements is 256 bytes, more "
      "than the 128-byte span of swizzle 128B");
}

TEST(ArtifactTensorMapInvalid, OffsetNotAMultipleOf16) {
  expectRejected([](fb::ModelT &model) { mapOf(model).offset = 8; },
                 "launch 0 ('kiln_tma_copy') tensor map 0: offset 8 is not a multiple of 16 (TMA "
                 "needs a 16-byte aligned global address)");
}

TEST(ArtifactTensorMapInvalid, ArgumentNotAt16ByteAlignedOffset) {
  expectRejected(
      [](fb::ModelT &model) {
        model.arena_bytes += 8;
        model.launches[0]->args[1] = makeRef(fb::Segment::Arena, 8, 16384);
      },
      "launch 0 ('kiln_tma_copy') tensor map 1: argument 1 starts at byte 8 of its segment, not "
      "a multiple of 16 (TMA needs a 16-byte aligned global address)");
}

TEST(ArtifactTensorMapInvalid, AddressesBytesPastItsArgument) {
  // One row too many.
  expectRejected([](fb::ModelT &model) { mapOf(model).dims[1] = 129; },
                 "launch 0 ('kiln_tma_copy') tensor map 0 addresses bytes [0, 16512) of argument "
                 "0, which is 16384 bytes (offset 0, dims 64x129 of f16, strides 128)");
  // The offset pushes the last row out.
  expectRejected([](fb::ModelT &model) { mapOf(model, 1).offset = 16; },
                 "launch 0 ('kiln_tma_copy') tensor map 1 addresses bytes [16, 16400) of argument "
                 "1, which is 16384 bytes (offset 16, dims 64x128 of f16, strides 128)");
  // Rank 1: the row itself.
  expectRejected(
      [](fb::ModelT &model) {
        mapOf(model).dims = {8200};
        mapOf(model).strides.clear();
        mapOf(model).box = {64};
      },
      "launch 0 ('kiln_tma_copy') tensor map 0 addresses bytes [0, 16400) of argument 0, which "
      "is 16384 bytes (offset 0, dims 8200 of f16, strides none)");
}

TEST(ArtifactTensorMapInvalid, AddressedBytesOverflow64Bits) {
  expectRejected(
      [](fb::ModelT &model) {
        mapOf(model).dims = {64, uint64_t(1) << 32};
        mapOf(model).strides = {(uint64_t(1) << 40) - 16};
      },
      "launch 0 ('kiln_tma_copy') tensor map 0: the bytes it addresses (offset 0, dims "
      "64x4294967296 of f16, strides 1099511627760) overflow 64 bits");
}

TEST(ArtifactTensorMapInvalid, KernelParametersBeyond4KiB) {
  // 2 pointers (16 bytes, padded to 64) + 32 maps of 128 bytes = 4160 bytes.
  expectRejected(
      [](fb::ModelT &model) {
        for (int m = 2; m < 32; ++m)
          model.launches[0]->tensor_maps.push_back(makeTileMap(m % 2));
      },
      "launch 0 ('kiln_tma_copy') passes 4160 bytes of kernel parameters (2 pointers, then 32 "
      "tensor maps of 128 bytes at 64-byte alignment), more than 4096");
  // 31 maps fit: 64 + 3968 = 4032.
  kiln_artifact_t *artifact = open(tmaFile([](fb::ModelT &model) {
                                     for (int m = 2; m < 31; ++m)
                                       model.launches[0]->tensor_maps.push_back(makeTileMap(m % 2));
                                   }),
                                   "tma_31_maps.kiln");
  EXPECT_NE(artifact, nullptr);
  kiln_artifact_release(artifact);
  EXPECT_EQ(fb::kernelParamBytes(2, 0), 16u);
  EXPECT_EQ(fb::kernelParamBytes(9, 1), 128u + 128u);
}

//===----------------------------------------------------------------------===//
// Session checks that need no device.
//===----------------------------------------------------------------------===//

TEST(SessionTensorMap, ADriverWithoutTheEncoderIsAnErrorOnlyForArtifactsWithMaps) {
  kiln_artifact_t *tma = open(tmaFile(), "tma.kiln");
  ASSERT_NE(tma, nullptr);
  kiln_status_t status = kiln::checkTensorMapEncoder(*tma, /*haveEncoder=*/false);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  EXPECT_EQ(std::string(kiln_status_message(status)),
            "'" + std::string(kiln_artifact_path(tma)) +
                "': launch 0 ('kiln_tma_copy') takes 2 tensor maps (TMA descriptors), which the "
                "runtime encodes with cuTensorMapEncodeTiled; this CUDA driver (libcuda.so.1) "
                "lacks it: it needs a CUDA 12.0 or newer driver");
  kiln_status_free(status);
  EXPECT_EQ(kiln::checkTensorMapEncoder(*tma, /*haveEncoder=*/true), nullptr);
  kiln_artifact_release(tma);

  ArtifactBuilder add;
  kiln::test::buildAddModel(add);
  kiln_artifact_t *plain = open(add.build(), "add.kiln");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(kiln::checkTensorMapEncoder(*plain, /*haveEncoder=*/false), nullptr);
  kiln_artifact_release(plain);
}

TEST(SessionTensorMap, BoundInputsKeepMapAddressesAligned) {
  kiln_artifact_t *artifact = open(tmaFile(), "tma.kiln");
  ASSERT_NE(artifact, nullptr);
  EXPECT_EQ(kiln::checkTensorMapBinding(*artifact, true, 0, 0x7f0000000000ull, {},
                                        "kiln_session_bind_input"),
            nullptr);
  // checkBinding refuses pointers that are not 256-byte aligned first; the map check itself
  // also catches them.
  kiln_status_t status = kiln::checkTensorMapBinding(*artifact, true, 0, 0x7f0000000008ull, {},
                                                     "kiln_session_bind_input");
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "kiln_session_bind_input: input 'x': launch 0 ('kiln_tma_copy') tensor map 0 "
               "would address 0x7f0000000008 (device pointer 0x7f0000000008 + 0), which is not "
               "a multiple of 16 bytes as TMA requires");
  kiln_status_free(status);
  kiln_artifact_release(artifact);
}

TEST(SessionTensorMap, BoundOutputMovingAMapOffAlignmentIsRefused) {
  // Output y (f16[129x64], 16512 bytes) lives at arena offset 8; launch 0 writes its first 128
  // rows through argument 1 at arena offset 16 (16-byte aligned, as the verifier wants). A bound
  // buffer stands in for y's range, so argument 1 moves to buffer + 8, which map 1 cannot use.
  kiln_artifact_t *artifact =
      open(tmaFile([](fb::ModelT &model) {
             model.arena_bytes = 16520;
             model.outputs[0]->shape = {129, 64};
             model.outputs[0]->location = makeRef(fb::Segment::Arena, 8, 16512);
             model.launches[0]->args[1] = makeRef(fb::Segment::Arena, 16, 16384);
           }),
           "tma_unaligned_output.kiln");
  ASSERT_NE(artifact, nullptr);
  std::vector<kiln::ArgRedirect> redirects;
  ASSERT_TRUE(kiln::planOutputRedirect(*artifact, 0, redirects));
  ASSERT_EQ(redirects.size(), 1u);
  EXPECT_EQ(redirects[0].offset, 8u);
  size_t index = 9;
  ASSERT_EQ(kiln::checkBinding(*artifact, false, "y", 0x7f0000000000ull, 16512,
                               "kiln_session_bind_output", index),
            nullptr);
  kiln_status_t status = kiln::checkTensorMapBinding(*artifact, false, index, 0x7f0000000000ull,
                                                     redirects, "kiln_session_bind_output");
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "kiln_session_bind_output: output 'y': launch 0 ('kiln_tma_copy') tensor map 1 "
               "would address 0x7f0000000008 (device pointer 0x7f0000000000 + 8), which is not "
               "a multiple of 16 bytes as TMA requires");
  kiln_status_free(status);
  kiln_artifact_release(artifact);

  // The TMA model's own output moves with offset 0: fine.
  artifact = open(tmaFile(), "tma.kiln");
  ASSERT_NE(artifact, nullptr);
  ASSERT_TRUE(kiln::planOutputRedirect(*artifact, 0, redirects));
  EXPECT_EQ(kiln::checkTensorMapBinding(*artifact, false, 0, 0x7f0000000000ull, redirects,
                                        "kiln_session_bind_output"),
            nullptr);
  kiln_artifact_release(artifact);
}

//===----------------------------------------------------------------------===//
// kiln-run.
//===----------------------------------------------------------------------===//

TEST(KilnRunTensorMap, InfoAndJsonDescribeTheMaps) {
  std::string path = kiln::test::writeTempFile("tma_info.kiln", tmaFile([](fb::ModelT &model) {
                                                 mapOf(model, 1).offset = 0;
                                                 mapOf(model, 1).swizzle =
                                                     fb::TensorMapSwizzle::None;
                                               }));
  kiln::test::CommandResult result = kiln::test::runKilnRun("'" + path + "' --info");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("  0: kiln_tma_copy (module tma) grid=(2,1,1) block=(128,1,1) "
                               "smem=0 args=2\n"
                               "      tensor map 0: arg 0 +0: f16 rank 2, dims 64x128, strides "
                               "128, box 64x64, swizzle 128B\n"
                               "      tensor map 1: arg 1 +0: f16 rank 2, dims 64x128, strides "
                               "128, box 64x64, swizzle none\n"),
            std::string::npos)
      << result.output;
  result = kiln::test::runKilnRun("'" + path + "' --info --json");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("\"tensor_maps\":[{\"arg\":0,\"offset\":0,\"dtype\":\"f16\","
                               "\"dims\":[64,128],\"strides\":[128],\"box\":[64,64],"
                               "\"swizzle\":\"128B\"},{\"arg\":1,"),
            std::string::npos)
      << result.output;

  // Launches without maps print and list nothing new.
  ArtifactBuilder add;
  kiln::test::buildAddModel(add);
  std::string plain = kiln::test::writeTempFile("add_info.kiln", add.build());
  result = kiln::test::runKilnRun("'" + plain + "' --info --json");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output.find("tensor_maps"), std::string::npos) << result.output;
  result = kiln::test::runKilnRun("'" + plain + "' --info");
  EXPECT_EQ(result.output.find("tensor map"), std::string::npos) << result.output;
}

} // namespace
