// float -> f16 / bf16 bits, nearest even, as the CPU rounds (Half.h); a NaN
// becomes the CPU's quiet NaN. The device rounds to f16 in hardware.
DLC_DEVICE unsigned short dlc_float_to_f16_bits(float f) {
  const unsigned int b = dlc_float_to_bits(f), sign = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return (unsigned short)(sign | 0x7e00u);
#if defined(__CUDACC__)
  return __half_as_ushort(__float2half_rn(f));
#else
  if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u); // rounds to inf
  if (a < 0x38800000u) { // a subnormal: |f| / 2^-24 rounded to an integer
    const float scaled = dlc_bits_to_float(a) * 16777216.0f;
    unsigned int whole = (unsigned int)scaled;
    const float rest = scaled - (float)whole;
    if (rest > 0.5f || (rest == 0.5f && (whole & 1u))) ++whole;
    return (unsigned short)(sign | whole);
  }
  unsigned int h = (((a >> 23) - 112u) << 10) | ((a & 0x7fffffu) >> 13);
  const unsigned int rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h; // may carry into the exponent
  return (unsigned short)(sign | h);
#endif
}
DLC_DEVICE unsigned short dlc_float_to_bf16_bits(float f) {
  const unsigned int b = dlc_float_to_bits(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((b >> 16) | 0x40u);
  return (unsigned short)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
