#if !defined(__CUDACC__)
#include <string.h>
#endif
DLC_DEVICE float dlc_bits_to_float(unsigned int b) {
#if defined(__CUDACC__)
  return __uint_as_float(b);
#else
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
#endif
}
DLC_DEVICE unsigned int dlc_float_to_bits(float f) {
#if defined(__CUDACC__)
  return __float_as_uint(f);
#else
  unsigned int b;
  memcpy(&b, &f, sizeof b);
  return b;
#endif
}
// Exact widening of an IEEE binary16, subnormals included (Half.h).
DLC_DEVICE float dlc_f16_bits_to_float(unsigned short h) {
  const unsigned int sign = (unsigned int)(h & 0x8000) << 16;
  const unsigned int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return dlc_bits_to_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) { const float v = (float)m * (1.0f / 16777216.0f); return sign ? -v : v; }
  return dlc_bits_to_float(sign | ((e + 112) << 23) | (m << 13));
}
DLC_DEVICE float dlc_bf16_bits_to_float(unsigned short h) {
  return dlc_bits_to_float((unsigned int)h << 16);
}
