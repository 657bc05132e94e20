//===- HalfTest.cpp - fp16 / bf16 conversions of the CPU backend ----------===//
//
// Exhaustive over the 2-byte formats: every finite value converts to float
// and back to itself, a float halfway between two neighbours rounds to the
// one with an even mantissa, and values past the largest finite fp16 round
// to infinity.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Half.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dlc::rt;

TEST(Half, EveryFp16ValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    float f = halfToFloat(h);
    if (std::isnan(f))
      continue;
    EXPECT_EQ(floatToHalf(f), h) << "fp16 bits 0x" << std::hex << bits;
  }
}

TEST(Half, Fp16TiesRoundToEven) {
  // Consecutive positive finite values, subnormals included: the float
  // midpoint (exact: fp16 has 11 significant bits, float 24) rounds to the
  // neighbour with an even last bit; a hair above it rounds up.
  for (uint16_t h = 0; h < 0x7bff; ++h) {
    float lo = halfToFloat(h), hi = halfToFloat(h + 1);
    float mid = (lo + hi) / 2;
    uint16_t even = (h & 1) ? h + 1 : h;
    ASSERT_EQ(floatToHalf(mid), even) << "between 0x" << std::hex << h << " and next";
    ASSERT_EQ(floatToHalf(-mid), even | 0x8000);
    ASSERT_EQ(floatToHalf(std::nextafter(mid, hi)), h + 1);
    ASSERT_EQ(floatToHalf(std::nextafter(mid, lo)), h);
  }
}

TEST(Half, Fp16Overflow) {
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);   // the largest finite fp16
  EXPECT_EQ(floatToHalf(65519.99f), 0x7bff);  // below the midpoint to 65536
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);   // the tie rounds to even: inf
  EXPECT_EQ(floatToHalf(-1e30f), 0xfc00);
  EXPECT_TRUE(std::isinf(halfToFloat(floatToHalf(INFINITY))));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_EQ(floatToHalf(1e-9f), 0);           // under half the smallest subnormal
}

TEST(Half, EveryBf16ValueRoundTripsAndTiesToEven) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t b = static_cast<uint16_t>(bits);
    float f = bfloat16ToFloat(b);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(f))));
      continue;
    }
    ASSERT_EQ(floatToBfloat16(f), b) << "bf16 bits 0x" << std::hex << bits;
    if ((bits & 0x7fff) >= 0x7f7f) // the largest finite and beyond
      continue;
    float next = bfloat16ToFloat(static_cast<uint16_t>(b + 1));
    float mid = bitsToFloat(static_cast<uint32_t>(
        (uint64_t(floatToBits(f)) + floatToBits(next)) / 2));
    uint16_t even = (b & 1) ? b + 1 : b;
    ASSERT_EQ(floatToBfloat16(mid), even) << "bf16 bits 0x" << std::hex << bits;
  }
}
