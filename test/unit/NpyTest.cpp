//===- NpyTest.cpp - Tests of the .npy reader and writer ------------------===//
//
// Round trips for every dtype and one test per reader error (each message names the file).
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "TestArtifact.h"
#include <gtest/gtest.h>

#include <cstring>

using kiln::npy::NpyArray;

namespace {

/// Builds a .npy image by hand: magic, version, header dict (padded with '\n'), data.
std::vector<uint8_t> rawNpy(const std::string &dict, size_t dataBytes, uint8_t major = 1) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  std::string header = dict + "\n";
  if (major == 1) {
    bytes.push_back(static_cast<uint8_t>(header.size()));
    bytes.push_back(static_cast<uint8_t>(header.size() >> 8));
  } else {
    for (int i = 0; i < 4; ++i)
      bytes.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  }
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), dataBytes, 0x11);
  return bytes;
}

/// Expects parsing `bytes` to fail with `fragment` in an error that names "t.npy".
void expectParseError(const std::vector<uint8_t> &bytes, const std::string &fragment) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(kiln::npy::parseNpy(bytes.data(), bytes.size(), "t.npy", array, error));
  EXPECT_NE(error.find("'t.npy'"), std::string::npos) << error;
  EXPECT_NE(error.find(fragment), std::string::npos) << error << "\nexpected: " << fragment;
}

TEST(Npy, RoundTripsEveryDType) {
  for (int value = 0; value < KILN_DTYPE_COUNT; ++value) {
    kiln_dtype_t dtype = static_cast<kiln_dtype_t>(value);
    std::vector<int64_t> shape = {2, 3};
    std::vector<uint8_t> data(6 * kiln_dtype_size(dtype));
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<uint8_t>(i * 7 + 1);
    std::vector<uint8_t> image;
    std::string error;
    ASSERT_TRUE(kiln::npy::encodeNpy(dtype, shape, data.data(), data.size(), image, error))
        << error;
    EXPECT_EQ((image.size() - data.size()) % 64, 0u) << "header must be 64-byte aligned";
    NpyArray array;
    ASSERT_TRUE(kiln::npy::parseNpy(image.data(), image.size(), "rt.npy", array, error)) << error;
    EXPECT_EQ(array.dtype, dtype);
    EXPECT_EQ(array.shape, shape);
    EXPECT_EQ(array.data, data);
  }
}

TEST(Npy, RoundTripsScalarAndVectorThroughFile) {
  float value = 3.5f;
  std::string path = testing::TempDir() + "kiln_npy_scalar.npy";
  std::string error;
  ASSERT_TRUE(kiln::npy::writeNpyFile(path, KILN_DTYPE_F32, {}, &value, 4, error)) << error;
  NpyArray array;
  ASSERT_TRUE(kiln::npy::readNpyFile(path, array, error)) << error;
  EXPECT_TRUE(array.shape.empty());
  EXPECT_EQ(array.elementCount(), 1u);
  float vector[3] = {1, 2, 3};
  ASSERT_TRUE(kiln::npy::writeNpyFile(path, KILN_DTYPE_F32, {3}, vector, 12, error)) << error;
  ASSERT_TRUE(kiln::npy::readNpyFile(path, array, error)) << error;
  EXPECT_EQ(array.shape, std::vector<int64_t>{3});
}

TEST(Npy, ReadsVersion2AndPythonFormatting) {
  std::vector<uint8_t> bytes =
      rawNpy("{\"shape\": (2L, 1), 'fortran_order': False, 'descr': '<i8'}", 16, 2);
  NpyArray array;
  std::string error;
  ASSERT_TRUE(kiln::npy::parseNpy(bytes.data(), bytes.size(), "t.npy", array, error)) << error;
  EXPECT_EQ(array.dtype, KILN_DTYPE_I64);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 1}));
}

TEST(Npy, AcceptsFortranOrderForVectors) {
  std::vector<uint8_t> bytes =
      rawNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", 12);
  NpyArray array;
  std::string error;
  EXPECT_TRUE(kiln::npy::parseNpy(bytes.data(), bytes.size(), "t.npy", array, error)) << error;
}

TEST(Npy, RejectsBadMagic) {
  std::vector<uint8_t> bytes = rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4);
  bytes[1] = 'X';
  expectParseError(bytes, "not a .npy file (bad magic)");
}

TEST(Npy, RejectsUnsupportedVersion) {
  expectParseError(rawNpy("{}", 0, 9), "unsupported .npy format version 9.0");
}

TEST(Npy, RejectsTruncatedHeader) {
  std::vector<uint8_t> bytes = rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0);
  bytes.resize(20);
  expectParseError(bytes, "truncated .npy header");
}

TEST(Npy, RejectsTruncatedData) {
  expectParseError(rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 12),
                   "data is 12 bytes but f32[4] needs 16 (truncated file)");
}

TEST(Npy, RejectsTrailingData) {
  expectParseError(rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 20),
                   "(trailing bytes)");
}

TEST(Npy, RejectsBigEndian) {
  expectParseError(rawNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 4),
                   "big-endian");
}

TEST(Npy, RejectsUnsupportedDType) {
  expectParseError(rawNpy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8),
                   "unsupported NumPy dtype '<c8'");
}

TEST(Npy, RejectsStructuredDType) {
  expectParseError(rawNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4),
                   "structured dtypes are not supported");
}

TEST(Npy, RejectsFortranOrderMatrix) {
  expectParseError(rawNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16),
                   "Fortran-order");
}

TEST(Npy, RejectsMissingKey) {
  expectParseError(rawNpy("{'descr': '<f4', 'shape': (1,), }", 4), "header lacks");
}

TEST(Npy, RejectsUnexpectedKey) {
  expectParseError(rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4),
                   "unexpected header key 'x'");
}

TEST(Npy, RejectsMalformedShape) {
  expectParseError(rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 4),
                   "'shape' entries must be non-negative integers");
}

TEST(Npy, RejectsNonDict) { expectParseError(rawNpy("[1, 2]", 0), "header is not a dict"); }

TEST(Npy, ReportsMissingFile) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(kiln::npy::readNpyFile("/nonexistent/x.npy", array, error));
  EXPECT_NE(error.find("cannot open '/nonexistent/x.npy'"), std::string::npos) << error;
}

TEST(Npy, WriterRejectsSizeMismatch) {
  float data[2] = {};
  std::vector<uint8_t> image;
  std::string error;
  EXPECT_FALSE(kiln::npy::encodeNpy(KILN_DTYPE_F32, {3}, data, sizeof(data), image, error));
  EXPECT_NE(error.find("buffer is 8 bytes, shape needs 12"), std::string::npos) << error;
}

TEST(Npy, WriterReportsUnwritablePath) {
  float data = 0;
  std::string error;
  EXPECT_FALSE(
      kiln::npy::writeNpyFile("/nonexistent/dir/y.npy", KILN_DTYPE_F32, {}, &data, 4, error));
  EXPECT_NE(error.find("cannot write '/nonexistent/dir/y.npy'"), std::string::npos) << error;
}

} // namespace
