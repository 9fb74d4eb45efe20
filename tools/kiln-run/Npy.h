//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// A small .npy reader/writer for kiln-run and the runtime tests (library target kiln_npy; it
// depends only on kiln_runtime's dtype table, never on LLVM). Supports format versions 1.0, 2.0
// and 3.0, little-endian, C order, the dtypes of the kiln dtype table. Errors are returned as
// strings that name the file.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_NPY_H
#define KILN_TOOLS_KILNRUN_NPY_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace npy {

/// An array read from a .npy file: element type, row-major shape and raw little-endian bytes.
struct NpyArray {
  kiln_dtype_t dtype = KILN_DTYPE_F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// Number of elements (product of shape; 1 for a scalar).
  uint64_t elementCount() const;
};

/// Parses the .npy image `bytes` (`size` bytes). `source` names it in messages. On failure returns
/// false and sets `error` (e.g. "'x.npy': not a .npy file (bad magic)").
bool parseNpy(const uint8_t *bytes, size_t size, const std::string &source, NpyArray &out,
              std::string &error);

/// Reads and parses the .npy file at `path`; see parseNpy.
bool readNpyFile(const std::string &path, NpyArray &out, std::string &error);

/// Encodes a .npy version 1.0 image of `dtype` elements with `shape` from `data` (`bytes` must
/// equal the element count times the dtype size). Returns false and sets `error` otherwise.
bool encodeNpy(kiln_dtype_t dtype, const std::vector<int64_t> &shape, const void *data,
               size_t bytes, std::vector<uint8_t> &out, std::string &error);

/// Encodes as with encodeNpy and writes the result to `path`.
bool writeNpyFile(const std::string &path, kiln_dtype_t dtype, const std::vector<int64_t> &shape,
                  const void *data, size_t bytes, std::string &error);

/// Formats a shape as "2x3x4" ("scalar" for rank 0).
std::string formatShape(const int64_t *shape, size_t rank);

} // namespace npy
} // namespace kiln

#endif // KILN_TOOLS_KILNRUN_NPY_H
