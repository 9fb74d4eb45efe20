//===- InputValues.cpp - Checks an integer input against its value range --===//
//
// See InputValues.h.
//
//===----------------------------------------------------------------------===//

#include "InputValues.h"

#include "DType.h"

namespace kiln {

namespace {
std::string formatRange(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}
} // namespace

bool checkInputValues(const std::string &name, kiln_dtype_t dtype,
                      const std::vector<int64_t> &shape, const uint8_t *data, size_t bytes,
                      const InputValueRange &range, std::string &error) {
  const DTypeInfo *info = lookupDType(dtype);
  if (!range.known || !info || info->isFloat || dtype == KILN_DTYPE_BOOL)
    return true;
  size_t elementSize = kiln_dtype_size(dtype);
  if (elementSize == 0)
    return true;
  bool isUnsigned = dtype == KILN_DTYPE_U8 || dtype == KILN_DTYPE_U16 || dtype == KILN_DTYPE_U32 ||
                    dtype == KILN_DTYPE_U64;
  // A table index range [0, R - 1] also allows R negative indices (from the end). In __int128
  // since R can be 2^63.
  __int128 lo = range.min, hi = range.max;
  bool tableIndex = range.fromEnd && range.min == 0;
  if (tableIndex)
    lo = -(hi + 1);
  uint64_t count = bytes / elementSize, outside = 0, first = 0;
  __int128 firstValue = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t *p = data + i * elementSize;
    uint64_t bits = 0;
    for (size_t b = 0; b < elementSize; ++b)
      bits |= static_cast<uint64_t>(p[b]) << (8 * b);
    __int128 value;
    if (isUnsigned || elementSize == 8) {
      value = isUnsigned ? static_cast<__int128>(bits)
                         : static_cast<__int128>(static_cast<int64_t>(bits));
    } else {
      // Sign-extend the low 8 * elementSize bits.
      unsigned shift = static_cast<unsigned>(64 - 8 * elementSize);
      value = static_cast<int64_t>(bits << shift) >> shift;
    }
    if (value >= lo && value <= hi)
      continue;
    if (outside++ == 0) {
      first = i;
      firstValue = value;
    }
  }
  if (outside == 0)
    return true;
  // The position of element `first` in C order.
  std::vector<int64_t> position(shape.size(), 0);
  uint64_t rest = first;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      position[d] = static_cast<int64_t>(rest % static_cast<uint64_t>(shape[d]));
      rest /= static_cast<uint64_t>(shape[d]);
    }
  }
  std::string where;
  for (size_t d = 0; d < position.size(); ++d)
    where += (d ? ", " : "") + std::to_string(position[d]);
  std::string valueText = firstValue < 0
                              ? std::to_string(static_cast<int64_t>(firstValue))
                              : std::to_string(static_cast<unsigned long long>(firstValue));
  std::string rows = std::to_string(static_cast<unsigned long long>(hi + 1));
  error = "input '" + name + "' " + (shape.empty() ? "" : "element [" + where + "] ") + "is " +
          valueText + ", outside " + formatRange(range.min, range.max) +
          ", the values the artifact allows" +
          (tableIndex ? " (the input indexes a table of " + rows + " entries; -" + rows +
                            " to -1 count from the end)"
                      : std::string()) +
          "; " + std::to_string(outside) + " of " + std::to_string(count) + " elements " +
          (outside == 1 ? "is" : "are") + " outside";
  return false;
}

} // namespace kiln
