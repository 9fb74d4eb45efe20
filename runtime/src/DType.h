//===- DType.h - The kiln dtype table ---------------------------*- C++ -*-===//
//
// The one table that maps each kiln element type to its byte size, short name, NumPy descr, NCCL
// data type and CUDA tensor-map data type (and says which types are floating point). Every other
// place (artifact verification, the session and its collectives, kiln-run's .npy reader) asks this
// table.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_DTYPE_H
#define KILN_RUNTIME_SRC_DTYPE_H

#include "kiln/runtime.h"

#include <cstddef>

namespace kiln {

/// One row of the dtype table.
struct DTypeInfo {
  /// The element type this row describes.
  kiln_dtype_t dtype;
  /// Short name used in messages and kiln-run output ("f32", ...).
  const char *name;
  /// Bytes per element.
  size_t byteSize;
  /// NumPy descr written into .npy headers ("<f4", ...).
  const char *numpyDescr;
  /// True for the floating-point types (f32, f16, bf16): the element types a collective may
  /// carry (kiln.artifact.Collective.dtype).
  bool isFloat;
  /// The ncclDataType_t value of this type (ncclFloat32 = 7, ...), or kNoNcclDataType when NCCL
  /// has none (bool). Stored as a plain int so this table needs no nccl.h; TensorParallel.cpp
  /// checks the values against nccl.h at compile time.
  int ncclDataType;
  /// The CUtensorMapDataType a tensor map of this type is encoded with (CU_TENSOR_MAP_DATA_TYPE_
  /// FLOAT16 = 6, ...). TMA only copies bytes, so types without their own value use the unsigned
  /// type of their size (i8 and bool: UINT8, i16: UINT16); the out-of-bounds fill (zeros) is the
  /// same for all. A plain int so this table needs no cuda.h; Session.cpp checks the values
  /// against cuda.h at compile time.
  int tensorMapDataType;
};

/// DTypeInfo::ncclDataType of a type NCCL cannot reduce.
constexpr int kNoNcclDataType = -1;

/// Returns the row for `dtype`, or nullptr if `dtype` is not a valid kiln_dtype_t value.
const DTypeInfo *lookupDType(kiln_dtype_t dtype);

/// Returns true if `value` (e.g. a raw byte from a file) is a valid kiln_dtype_t.
inline bool isValidDType(unsigned value) { return value < KILN_DTYPE_COUNT; }

} // namespace kiln

#endif // KILN_RUNTIME_SRC_DTYPE_H
