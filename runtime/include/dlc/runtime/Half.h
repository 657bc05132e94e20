//===- Half.h - fp16 and bf16 storage, converted to and from float -*- C++ -*-===//
//
// The CPU backend keeps half-precision buffers in their 2-byte formats and
// computes in float: a kernel reads its fp16 / bf16 operands widened and its
// results are rounded to nearest even when stored, as a GPU kernel that
// accumulates in float and stores half precision does.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_HALF_H
#define DLC_RUNTIME_HALF_H

#include <cstdint>
#include <cstring>

namespace dlc::rt {

inline float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline uint32_t floatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

/// IEEE binary16 -> float (exact).
inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0x1f) // inf / NaN
    return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0)
      return bitsToFloat(sign);
    // Subnormal: mantissa x 2^-24.
    float value = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -value : value;
  }
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// float -> IEEE binary16, rounding to nearest even; overflow gives inf.
inline uint16_t floatToHalf(float f) {
  uint32_t bits = floatToBits(f);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t absBits = bits & 0x7fffffff;
  if (absBits >= 0x7f800000) // inf or NaN (keep NaN quiet)
    return sign | 0x7c00 | (absBits > 0x7f800000 ? 0x200 : 0);
  if (absBits >= 0x477ff000) // rounds to >= 65520: inf
    return sign | 0x7c00;
  if (absBits < 0x38800000) { // below the smallest normal, 2^-14
    // Subnormal: round |f| / 2^-24 to an integer, ties to even.
    float scaled = bitsToFloat(absBits) * 16777216.0f;
    uint32_t whole = static_cast<uint32_t>(scaled);
    float rest = scaled - static_cast<float>(whole);
    if (rest > 0.5f || (rest == 0.5f && (whole & 1)))
      ++whole;
    return sign | static_cast<uint16_t>(whole);
  }
  uint32_t exponent = (absBits >> 23) - 112, mantissa = absBits & 0x7fffff;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, which is right
  return sign | static_cast<uint16_t>(half);
}

/// bfloat16 -> float (exact).
inline float bfloat16ToFloat(uint16_t b) { return bitsToFloat(uint32_t(b) << 16); }

/// float -> bfloat16, rounding to nearest even.
inline uint16_t floatToBfloat16(float f) {
  uint32_t bits = floatToBits(f);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN stays NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

} // namespace dlc::rt

#endif // DLC_RUNTIME_HALF_H
