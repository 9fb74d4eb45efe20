//===- InputGen.cpp - generated input tensors for kiln-run ----------------===//
//
// Spec parsing and tensor filling for kiln-run's generated inputs (InputGen.h). Element i of a
// random tensor is a function of (seed, input name, i) only: SplitMix64 of a per-input key plus i.
//
//===----------------------------------------------------------------------===//

#include "InputGen.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace kiln {
namespace inputgen {
namespace {

/// SplitMix64 (Steele, Lea, Flood 2014): a well-mixed 64-bit function of `x`.
uint64_t splitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// FNV-1a of `text`: mixes the input name into the seed.
uint64_t hashName(const std::string &text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// The inclusive range of values `dtype` holds (integer dtypes only).
void dtypeLimits(kiln_dtype_t dtype, long double &lo, long double &hi) {
  switch (dtype) {
  case KILN_DTYPE_I64:
    lo = static_cast<long double>(std::numeric_limits<int64_t>::min());
    hi = static_cast<long double>(std::numeric_limits<int64_t>::max());
    return;
  case KILN_DTYPE_I32:
    lo = std::numeric_limits<int32_t>::min();
    hi = std::numeric_limits<int32_t>::max();
    return;
  case KILN_DTYPE_I16:
    lo = std::numeric_limits<int16_t>::min();
    hi = std::numeric_limits<int16_t>::max();
    return;
  case KILN_DTYPE_I8:
    lo = std::numeric_limits<int8_t>::min();
    hi = std::numeric_limits<int8_t>::max();
    return;
  case KILN_DTYPE_U64:
    lo = 0;
    hi = static_cast<long double>(std::numeric_limits<uint64_t>::max());
    return;
  case KILN_DTYPE_U32:
    lo = 0;
    hi = std::numeric_limits<uint32_t>::max();
    return;
  case KILN_DTYPE_U16:
    lo = 0;
    hi = std::numeric_limits<uint16_t>::max();
    return;
  case KILN_DTYPE_U8:
  case KILN_DTYPE_BOOL:
    lo = 0;
    hi = dtype == KILN_DTYPE_BOOL ? 1 : 255;
    return;
  default:
    lo = hi = 0;
    return;
  }
}

bool isFloatDType(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F16 || dtype == KILN_DTYPE_BF16;
}

/// Stores the low `size` bytes of `bits` little-endian at `dst`.
void storeBits(uint8_t *dst, uint64_t bits, size_t size) {
  for (size_t b = 0; b < size; ++b)
    dst[b] = static_cast<uint8_t>(bits >> (8 * b));
}

/// Stores float `value` as `dtype` at `dst`.
void storeFloat(uint8_t *dst, kiln_dtype_t dtype, float value) {
  if (dtype == KILN_DTYPE_F32) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    storeBits(dst, bits, 4);
  } else if (dtype == KILN_DTYPE_F16) {
    storeBits(dst, floatToHalf(value), 2);
  } else {
    storeBits(dst, floatToBFloat16(value), 2);
  }
}

std::string formatRange(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

} // namespace

uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t exponent = (bits >> 23) & 0xff;
  uint32_t mantissa = bits & 0x7fffff;
  if (exponent == 0xff) // inf or NaN
    return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 31)
    return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal half (or zero): shift the implicit-one mantissa, rounding to nearest even.
    if (e < -10)
      return sign;
    uint32_t m = mantissa | 0x800000;
    int shift = 14 - e;
    uint32_t half = m >> shift;
    uint32_t rest = m & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1)))
      ++half;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, up to infinity: correct rounding
  return sign | static_cast<uint16_t>(half);
}

uint16_t floatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

ParseResult parseSpec(const std::string &text, Spec &out, std::string &error) {
  out = Spec();
  out.text = text;
  if (text == "zeros") {
    out.kind = Kind::Zeros;
    return ParseResult::Spec;
  }
  if (text == "random") {
    out.kind = Kind::Random;
    return ParseResult::Spec;
  }
  if (text.rfind("random:", 0) == 0) {
    std::string seed = text.substr(7);
    char *end = nullptr;
    errno = 0;
    unsigned long long value = std::strtoull(seed.c_str(), &end, 10);
    if (seed.empty() || *end != '\0' || errno != 0 || seed[0] == '-' || seed[0] == '+' ||
        seed[0] == ' ') {
      error = "'" + text + "': the seed of random:SEED must be a decimal integer in [0, 2^64)";
      return ParseResult::Error;
    }
    out.kind = Kind::Random;
    out.seed = value;
    return ParseResult::Spec;
  }
  if (text.rfind("const:", 0) == 0) {
    std::string number = text.substr(6);
    char *end = nullptr;
    double value = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || !std::isfinite(value) || number[0] == ' ') {
      error = "'" + text + "': the value of const:V must be a finite number";
      return ParseResult::Error;
    }
    out.kind = Kind::Constant;
    out.value = value;
    return ParseResult::Spec;
  }
  return ParseResult::NotASpec;
}

bool generate(const Spec &spec, const std::string &name, kiln_dtype_t dtype, uint64_t count,
              const Range &range, std::vector<uint8_t> &out, std::string &error) {
  size_t elementSize = kiln_dtype_size(dtype);
  if (elementSize == 0) {
    error = "input '" + name + "' has an unknown dtype";
    return false;
  }
  if (count > std::numeric_limits<size_t>::max() / elementSize) {
    error = "input '" + name + "' is too large to generate";
    return false;
  }
  out.assign(static_cast<size_t>(count * elementSize), 0);
  if (spec.kind == Kind::Zeros)
    return true;
  bool isFloat = isFloatDType(dtype);
  bool isBool = dtype == KILN_DTYPE_BOOL;
  bool isUnsigned = dtype == KILN_DTYPE_U8 || dtype == KILN_DTYPE_U16 || dtype == KILN_DTYPE_U32 ||
                    dtype == KILN_DTYPE_U64 || isBool;

  // The allowed integer values: the recorded range (clamped to the dtype), else {0, 1}.
  long double typeLo = 0, typeHi = 0;
  dtypeLimits(dtype, typeLo, typeHi);
  int64_t lo = 0, hi = 1;
  if (!isFloat && !isBool && range.known) {
    lo = static_cast<int64_t>(std::max<long double>(range.min, typeLo));
    hi = static_cast<int64_t>(std::min<long double>(range.max, typeHi));
    if (lo > hi) {
      error = "input '" + name + "' (" + kiln_dtype_name(dtype) + "): the artifact's value range " +
              formatRange(range.min, range.max) + " holds no " + kiln_dtype_name(dtype) + " value";
      return false;
    }
  }

  if (spec.kind == Kind::Constant) {
    double v = spec.value;
    if (isFloat) {
      for (uint64_t i = 0; i < count; ++i)
        storeFloat(out.data() + i * elementSize, dtype, static_cast<float>(v));
      return true;
    }
    if (v != std::floor(v) || static_cast<long double>(v) < typeLo ||
        static_cast<long double>(v) > typeHi) {
      error = "input '" + name + "' (" + kiln_dtype_name(dtype) + "): '" + spec.text +
              "' is not a " + kiln_dtype_name(dtype) + " value";
      return false;
    }
    // A table index range [0, R - 1] also allows -R to -1 (from the end), as
    // kiln_artifact_check_input_values does.
    const bool tableIndex = range.fromEnd && range.min == 0;
    long double allowedLo = tableIndex ? -static_cast<long double>(range.max) - 1 : range.min;
    if (range.known && !isBool &&
        (static_cast<long double>(v) < allowedLo || static_cast<long double>(v) > range.max)) {
      error = "input '" + name + "': '" + spec.text + "' is outside " +
              formatRange(range.min, range.max) + ", the values the artifact allows" +
              (tableIndex ? " (the input indexes a table of " +
                                std::to_string(range.max - range.min + 1) + " entries)"
                          : std::string());
      return false;
    }
    // In range for the dtype (checked above), so both conversions are defined.
    uint64_t bits =
        isUnsigned ? static_cast<uint64_t>(v) : static_cast<uint64_t>(static_cast<int64_t>(v));
    for (uint64_t i = 0; i < count; ++i)
      storeBits(out.data() + i * elementSize, bits, elementSize);
    return true;
  }

  // Random.
  uint64_t key = splitMix64(spec.seed ^ hashName(name));
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t bits = splitMix64(key + i);
    uint8_t *dst = out.data() + i * elementSize;
    if (isFloat) {
      // 24 random bits -> [0, 1) exactly representable in f32, then [-1, 1).
      float unit = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
      storeFloat(dst, dtype, 2.0f * unit - 1.0f);
      continue;
    }
    // Uniform over [lo, hi]: span + 1 values (span < 2^64; the full 64-bit span uses the bits
    // as they are). The modulo bias is below 2^-32 for spans under 2^32 (every table size).
    uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    uint64_t offset = span == std::numeric_limits<uint64_t>::max() ? bits : bits % (span + 1);
    uint64_t value = static_cast<uint64_t>(lo) + offset;
    storeBits(dst, value, elementSize);
  }
  return true;
}

} // namespace inputgen
} // namespace kiln
