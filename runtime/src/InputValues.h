//===- InputValues.h - Checks an integer input against its value range --*- C++ -*-===//
//
// The one check of input values against the ranges an artifact records (token ids inside the
// embedding table, block ids inside the pool): kiln_artifact_check_input_values, which kiln-run
// and the Python package call before a run. The kernels do not check indices (an index outside
// reads a clamped row), so this is where such an input is caught.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_INPUTVALUES_H
#define KILN_RUNTIME_SRC_INPUTVALUES_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// The values an integer input may take: [min, max] when `known`; a range [0, R - 1] with
/// `fromEnd` (an input that indexes a table of R rows, role data) also allows -R .. -1, counted
/// from the end as ONNX Gather and kiln's kernels count them. A KV-cache step's block table and
/// lengths take their range only (fromEnd false).
struct InputValueRange {
  bool known = false;
  int64_t min = 0;
  int64_t max = 0;
  bool fromEnd = true;
};

/// Checks the values of integer input `name` (`dtype`, `shape`; `data` little-endian, C order,
/// `bytes` = element size x element count) against `range`: true when the range is unknown, the
/// dtype is not an integer dtype (floats, bool), or every element is allowed. Otherwise false
/// with `error` naming the input, the first element outside (its position and value), the range
/// and the count: "input 'input_ids' element [0, 2] is 5000, outside [0, 999], the values the
/// artifact allows (the input indexes a table of 1000 entries; -1000 to -1 count from the end);
/// 3 of 16 elements are outside".
bool checkInputValues(const std::string &name, kiln_dtype_t dtype,
                      const std::vector<int64_t> &shape, const uint8_t *data, size_t bytes,
                      const InputValueRange &range, std::string &error);

} // namespace kiln

#endif // KILN_RUNTIME_SRC_INPUTVALUES_H
