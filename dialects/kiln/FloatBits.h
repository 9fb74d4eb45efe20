//===- FloatBits.h - 16-bit float bit patterns on the host --------*- C++ -*-===//
//
// Conversions between fp32 and the bit patterns of IEEE binary16 and bfloat16,
// for passes that rewrite 16-bit weights (kiln-assign-precision narrows them,
// kiln-fuse-norm-into-gemm folds a norm's scale into them). Bit manipulation,
// no APFloat per element: weights reach gigabytes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_FLOATBITS_H
#define KILN_DIALECTS_KILN_FLOATBITS_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kiln {

/// fp32 -> IEEE binary16 bits, rounded to nearest even; finite values beyond
/// 65504 saturate to it, inf stays inf, NaN stays a (quiet) NaN.
inline uint16_t toF16Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN
    return uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a == 0x7f800000u) // inf
    return uint16_t(sign | 0x7c00u);
  if (a >= 0x477fe000u) // >= 65504: saturate (RNE would give inf from 65520 on)
    return uint16_t(sign | 0x7bffu);
  if (a < 0x38800000u) { // below 2^-14: f16 subnormal (or zero), in units of 2^-24
    float f;
    std::memcpy(&f, &a, 4);
    return uint16_t(sign | uint32_t(std::nearbyint(f * 16777216.0f))); // 1024 = min normal
  }
  uint32_t r = a - (112u << 23); // rebias the exponent (127 - 15)
  r += 0xfffu + ((r >> 13) & 1u); // round to nearest even at bit 13
  return uint16_t(sign | (r >> 13));
}

/// fp32 -> bfloat16 bits, rounded to nearest even; finite values beyond the
/// bf16 range saturate to its largest finite value; NaN stays a quiet NaN.
inline uint16_t toBF16Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::isnan(x))
    return uint16_t((u >> 16) | 0x40u);
  uint16_t b = uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  if ((b & 0x7f80u) == 0x7f80u && std::isfinite(x)) // rounded up to inf
    b = uint16_t(((u >> 16) & 0x8000u) | 0x7f7fu);
  return b;
}

/// IEEE binary16 bits -> fp32 (exact).
inline float fromF16Bits(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) { // zero or subnormal: man x 2^-24
    const float f = std::ldexp(float(man), -24);
    return sign ? -f : f;
  }
  float f;
  const uint32_t u = exp == 31 ? sign | 0x7f800000u | (man << 13)
                               : sign | ((exp + 112u) << 23) | (man << 13);
  std::memcpy(&f, &u, 4);
  return f;
}

/// bfloat16 bits -> fp32 (exact).
inline float fromBF16Bits(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

} // namespace kiln

#endif // KILN_DIALECTS_KILN_FLOATBITS_H
