//===- DTypeTest.cpp - One test per row of the dtype table ----------------===//
//
// Checks every row of the runtime's dtype table (size, name, NumPy descr, descr round trip,
// float-ness, NCCL data type against nccl.h when the runtime was built with it, and the CUDA
// tensor-map data type against cuda.h)
// against values written out independently here, plus the rejections of the descr parser.
//
//===----------------------------------------------------------------------===//

#include "DType.h"

#include "kiln/runtime.h"

#include <cuda.h>
#include <gtest/gtest.h>
#if KILN_HAVE_NCCL
#include <nccl.h>
#endif

#include <string>

namespace {

/// The expected row for one dtype.
struct ExpectedRow {
  kiln_dtype_t dtype;
  size_t size;
  const char *name;
  const char *descr;
  bool isFloat;
  /// The ncclDataType_t value, or kiln::kNoNcclDataType.
  int ncclDataType;
  /// The CUtensorMapDataType value.
  int tensorMapDataType;
};

// cuda.h's CUtensorMapDataType values (TMA copies bytes: i8 and bool as UINT8, i16 as UINT16).
constexpr int kTmF32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32, kTmF16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
              kTmBf16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, kTmI64 = CU_TENSOR_MAP_DATA_TYPE_INT64,
              kTmI32 = CU_TENSOR_MAP_DATA_TYPE_INT32, kTmU8 = CU_TENSOR_MAP_DATA_TYPE_UINT8,
              kTmU16 = CU_TENSOR_MAP_DATA_TYPE_UINT16, kTmU32 = CU_TENSOR_MAP_DATA_TYPE_UINT32,
              kTmU64 = CU_TENSOR_MAP_DATA_TYPE_UINT64;

#if KILN_HAVE_NCCL
constexpr int kNcclF32 = ncclFloat32, kNcclF16 = ncclFloat16, kNcclBf16 = ncclBfloat16,
              kNcclI64 = ncclInt64, kNcclI32 = ncclInt32, kNcclI8 = ncclInt8, kNcclU8 = ncclUint8,
              kNcclU32 = ncclUint32, kNcclU64 = ncclUint64;
#else
// nccl.h's values, written out (NCCL 2.x ncclDataType_t).
constexpr int kNcclF32 = 7, kNcclF16 = 6, kNcclBf16 = 9, kNcclI64 = 4, kNcclI32 = 2, kNcclI8 = 0,
              kNcclU8 = 1, kNcclU32 = 3, kNcclU64 = 5;
#endif

class DTypeRowTest : public testing::TestWithParam<ExpectedRow> {};

TEST_P(DTypeRowTest, MatchesTable) {
  const ExpectedRow &row = GetParam();
  EXPECT_EQ(kiln_dtype_size(row.dtype), row.size);
  EXPECT_STREQ(kiln_dtype_name(row.dtype), row.name);
  EXPECT_STREQ(kiln_dtype_numpy_descr(row.dtype), row.descr);
  kiln_dtype_t parsed = KILN_DTYPE_BOOL;
  kiln_status_t status = kiln_dtype_from_numpy_descr(row.descr, &parsed);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(parsed, row.dtype);
  const kiln::DTypeInfo *info = kiln::lookupDType(row.dtype);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->isFloat, row.isFloat);
  EXPECT_EQ(info->ncclDataType, row.ncclDataType);
  EXPECT_EQ(info->tensorMapDataType, row.tensorMapDataType);
}

INSTANTIATE_TEST_SUITE_P(
    AllDTypes, DTypeRowTest,
    testing::Values(
        ExpectedRow{KILN_DTYPE_F32, 4, "f32", "<f4", true, kNcclF32, kTmF32},
        ExpectedRow{KILN_DTYPE_F16, 2, "f16", "<f2", true, kNcclF16, kTmF16},
        ExpectedRow{KILN_DTYPE_BF16, 2, "bf16", "|V2", true, kNcclBf16, kTmBf16},
        ExpectedRow{KILN_DTYPE_I64, 8, "i64", "<i8", false, kNcclI64, kTmI64},
        ExpectedRow{KILN_DTYPE_I32, 4, "i32", "<i4", false, kNcclI32, kTmI32},
        ExpectedRow{KILN_DTYPE_I8, 1, "i8", "|i1", false, kNcclI8, kTmU8},
        ExpectedRow{KILN_DTYPE_U8, 1, "u8", "|u1", false, kNcclU8, kTmU8},
        ExpectedRow{KILN_DTYPE_BOOL, 1, "bool", "|b1", false, kiln::kNoNcclDataType, kTmU8},
        ExpectedRow{KILN_DTYPE_I16, 2, "i16", "<i2", false, kiln::kNoNcclDataType, kTmU16},
        ExpectedRow{KILN_DTYPE_U16, 2, "u16", "<u2", false, kiln::kNoNcclDataType, kTmU16},
        ExpectedRow{KILN_DTYPE_U32, 4, "u32", "<u4", false, kNcclU32, kTmU32},
        ExpectedRow{KILN_DTYPE_U64, 8, "u64", "<u8", false, kNcclU64, kTmU64}),
    [](const testing::TestParamInfo<ExpectedRow> &info) { return std::string(info.param.name); });

TEST(DType, TableCoversEveryEnumValue) {
  for (int value = 0; value < KILN_DTYPE_COUNT; ++value)
    EXPECT_GT(kiln_dtype_size(static_cast<kiln_dtype_t>(value)), 0u) << value;
}

TEST(DType, InvalidValueHasNoRow) {
  kiln_dtype_t invalid = static_cast<kiln_dtype_t>(KILN_DTYPE_COUNT);
  EXPECT_EQ(kiln_dtype_size(invalid), 0u);
  EXPECT_EQ(kiln_dtype_name(invalid), nullptr);
  EXPECT_EQ(kiln_dtype_numpy_descr(invalid), nullptr);
}

TEST(DType, AcceptsAlternativeByteOrderMarks) {
  kiln_dtype_t dtype;
  ASSERT_EQ(kiln_dtype_from_numpy_descr("<u1", &dtype), nullptr);
  EXPECT_EQ(dtype, KILN_DTYPE_U8);
  ASSERT_EQ(kiln_dtype_from_numpy_descr("<V2", &dtype), nullptr);
  EXPECT_EQ(dtype, KILN_DTYPE_BF16);
  ASSERT_EQ(kiln_dtype_from_numpy_descr("=f4", &dtype), nullptr);
  EXPECT_EQ(dtype, KILN_DTYPE_F32);
}

/// Expects `descr` to be rejected with `fragment` in the message.
void expectRejected(const char *descr, const char *fragment) {
  kiln_dtype_t dtype = KILN_DTYPE_BOOL;
  kiln_status_t status = kiln_dtype_from_numpy_descr(descr, &dtype);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT) << descr;
  EXPECT_NE(std::string(kiln_status_message(status)).find(fragment), std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(dtype, KILN_DTYPE_F32) << "out_dtype must be reset on entry";
  kiln_status_free(status);
}

TEST(DType, RejectsBigEndian) { expectRejected(">f4", "big-endian"); }
TEST(DType, RejectsUnknownType) { expectRejected("<f8", "unsupported NumPy dtype '<f8'"); }
TEST(DType, RejectsPipeOnMultiByteType) { expectRejected("|f4", "unsupported NumPy dtype"); }
TEST(DType, RejectsTooShort) { expectRejected("f", "unsupported NumPy dtype 'f'"); }
TEST(DType, RejectsNull) {
  kiln_status_t status = kiln_dtype_from_numpy_descr(nullptr, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
}

TEST(Status, NullIsOk) {
  EXPECT_EQ(kiln_status_code(nullptr), KILN_OK);
  EXPECT_STREQ(kiln_status_message(nullptr), "");
  kiln_status_free(nullptr);
}

TEST(InputRole, Names) {
  EXPECT_STREQ(kiln_input_role_name(KILN_INPUT_ROLE_DATA), "data");
  EXPECT_STREQ(kiln_input_role_name(KILN_INPUT_ROLE_KEY_CACHE), "key_cache");
  EXPECT_STREQ(kiln_input_role_name(KILN_INPUT_ROLE_BLOCK_TABLE), "block_table");
  EXPECT_STREQ(kiln_input_role_name(KILN_INPUT_ROLE_SAMPLE_OFFSET), "sample_offset");
  // A role this runtime does not name. It stays inside the enum's value range (0..15): a C++
  // caller cannot hold a value outside it without undefined behaviour.
  EXPECT_EQ(kiln_input_role_name(static_cast<kiln_input_role_t>(15)), nullptr);
}

TEST(Status, CodeNames) {
  EXPECT_STREQ(kiln_status_code_name(KILN_OK), "OK");
  EXPECT_STREQ(kiln_status_code_name(KILN_INVALID_ARTIFACT), "INVALID_ARTIFACT");
  EXPECT_STREQ(kiln_status_code_name(KILN_UNAVAILABLE), "UNAVAILABLE");
  EXPECT_STREQ(kiln_status_code_name(KILN_INTERNAL), "INTERNAL");
  EXPECT_STREQ(kiln_status_code_name(KILN_DEADLINE_EXCEEDED), "DEADLINE_EXCEEDED");
  EXPECT_STREQ(kiln_status_code_name(static_cast<kiln_status_code_t>(99)), "UNKNOWN");
}

} // namespace
