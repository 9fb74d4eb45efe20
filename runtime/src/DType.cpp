//===- DType.cpp - The kiln dtype table and its C accessors ---------------===//
//
// Defines the dtype table (kiln dtype <-> byte size <-> name <-> NumPy descr <-> NCCL type <->
// CUDA tensor-map type) and the
// C API functions that read it. The table is indexed by the enum value and checked at compile time
// to be complete and in order.
//
//===----------------------------------------------------------------------===//

#include "DType.h"

#include "Status.h"

#include <cstring>

namespace kiln {
namespace {

/// The dtype table, one row per kiln_dtype_t value, in enum order.
/// NCCL values: ncclInt8 0, ncclUint8 1, ncclInt32 2, ncclUint32 3, ncclInt64 4, ncclUint64 5,
/// ncclFloat16 6, ncclFloat32 7, ncclBfloat16 9 (nccl.h's ncclDataType_t; static_asserts in
/// TensorParallel.cpp). CUtensorMapDataType values: UINT8 0, UINT16 1, UINT32 2, INT32 3, UINT64 4,
/// INT64 5, FLOAT16 6, FLOAT32 7, BFLOAT16 9 (cuda.h; static_asserts in Session.cpp).
constexpr DTypeInfo kDTypeTable[] = {
    {KILN_DTYPE_F32, "f32", 4, "<f4", /*isFloat=*/true, /*ncclFloat32=*/7, /*FLOAT32=*/7},
    {KILN_DTYPE_F16, "f16", 2, "<f2", /*isFloat=*/true, /*ncclFloat16=*/6, /*FLOAT16=*/6},
    {KILN_DTYPE_BF16, "bf16", 2, "|V2", /*isFloat=*/true, /*ncclBfloat16=*/9, /*BFLOAT16=*/9},
    {KILN_DTYPE_I64, "i64", 8, "<i8", /*isFloat=*/false, /*ncclInt64=*/4, /*INT64=*/5},
    {KILN_DTYPE_I32, "i32", 4, "<i4", /*isFloat=*/false, /*ncclInt32=*/2, /*INT32=*/3},
    {KILN_DTYPE_I8, "i8", 1, "|i1", /*isFloat=*/false, /*ncclInt8=*/0, /*UINT8=*/0},
    {KILN_DTYPE_U8, "u8", 1, "|u1", /*isFloat=*/false, /*ncclUint8=*/1, /*UINT8=*/0},
    {KILN_DTYPE_BOOL, "bool", 1, "|b1", /*isFloat=*/false, kNoNcclDataType, /*UINT8=*/0},
    {KILN_DTYPE_I16, "i16", 2, "<i2", /*isFloat=*/false, kNoNcclDataType, /*UINT16=*/1},
    {KILN_DTYPE_U16, "u16", 2, "<u2", /*isFloat=*/false, kNoNcclDataType, /*UINT16=*/1},
    {KILN_DTYPE_U32, "u32", 4, "<u4", /*isFloat=*/false, /*ncclUint32=*/3, /*UINT32=*/2},
    {KILN_DTYPE_U64, "u64", 8, "<u8", /*isFloat=*/false, /*ncclUint64=*/5, /*UINT64=*/4},
};

static_assert(sizeof(kDTypeTable) / sizeof(kDTypeTable[0]) == KILN_DTYPE_COUNT,
              "dtype table must have one row per kiln_dtype_t value");

/// Returns true if every row sits at the index of its enum value.
constexpr bool isTableInOrder() {
  for (unsigned i = 0; i < KILN_DTYPE_COUNT; ++i)
    if (static_cast<unsigned>(kDTypeTable[i].dtype) != i)
      return false;
  return true;
}
static_assert(isTableInOrder(), "dtype table rows must be in enum order");

} // namespace

const DTypeInfo *lookupDType(kiln_dtype_t dtype) {
  unsigned value = static_cast<unsigned>(dtype);
  return isValidDType(value) ? &kDTypeTable[value] : nullptr;
}

} // namespace kiln

extern "C" {

size_t kiln_dtype_size(kiln_dtype_t dtype) {
  const kiln::DTypeInfo *info = kiln::lookupDType(dtype);
  return info ? info->byteSize : 0;
}

const char *kiln_dtype_name(kiln_dtype_t dtype) {
  const kiln::DTypeInfo *info = kiln::lookupDType(dtype);
  return info ? info->name : nullptr;
}

const char *kiln_dtype_numpy_descr(kiln_dtype_t dtype) {
  const kiln::DTypeInfo *info = kiln::lookupDType(dtype);
  return info ? info->numpyDescr : nullptr;
}

kiln_status_t kiln_dtype_from_numpy_descr(const char *descr, kiln_dtype_t *out_dtype) {
  if (out_dtype)
    *out_dtype = KILN_DTYPE_F32;
  if (!descr || !out_dtype)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_dtype_from_numpy_descr: descr and out_dtype must be non-NULL");
  if (std::strlen(descr) < 2)
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT, "unsupported NumPy dtype '%s'", descr);
  char order = descr[0];
  const char *type = descr + 1;
  if (order == '>')
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                             "unsupported NumPy dtype '%s': big-endian data is not supported",
                             descr);
  for (const kiln::DTypeInfo &row : kiln::kDTypeTable) {
    if (std::strcmp(row.numpyDescr + 1, type) != 0)
      continue;
    // Multi-byte numeric types must say little-endian ('<', or '=' on this little-endian host);
    // one-byte and void types carry '|' but writers also emit '<'.
    bool orderOk = order == '<' || order == '=' || (order == '|' && row.numpyDescr[0] == '|');
    if (!orderOk)
      break;
    *out_dtype = row.dtype;
    return nullptr;
  }
  return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                           "unsupported NumPy dtype '%s' (supported: <f4 <f2 |V2(bf16) <i8 <i4 "
                           "|i1 |u1 |b1)",
                           descr);
}

} // extern "C"
