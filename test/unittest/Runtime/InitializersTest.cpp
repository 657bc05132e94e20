//===- InitializersTest.cpp - initial values, whatever the storage order --===//

#include "dlc/runtime/Initializers.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace dlc::rt;

namespace {

PlanBuffer filter(std::vector<int64_t> shape) {
  PlanBuffer w;
  w.name = "w";
  w.shape = std::move(shape);
  w.role = BufferRole::kParam;
  w.bytes = w.numElements() * 4;
  w.init = {{"init", std::string("kaiming_normal")}, {"mode", std::string("fan_in")}};
  return w;
}

/// A filter stored OHWI starts from the values of the same filter stored as
/// declared (OIHW), reordered: the draws follow the declared order and the
/// fans the declared shape, so an NHWC step starts where its NCHW twin does.
TEST(Initializers, StoredFilterStartsFromTheDeclaredValues) {
  PlanBuffer declared = filter({8, 3, 5, 5});
  PlanBuffer stored = filter({8, 5, 5, 3});
  stored.init["storage"] = std::vector<int64_t>{0, 2, 3, 1};

  std::mt19937_64 rng1(7), rng2(7);
  std::vector<float> a, b;
  ASSERT_TRUE(initializeValues(declared, rng1, a).isOk());
  ASSERT_TRUE(initializeValues(stored, rng2, b).isOk());
  ASSERT_EQ(a.size(), b.size());
  std::string back = toDeclaredOrder(
      stored, std::string_view(reinterpret_cast<const char *>(b.data()), b.size() * 4), 4);
  EXPECT_EQ(std::memcmp(back.data(), a.data(), back.size()), 0);
  // And the reordering is not the identity: element [0][1][0][0] of the
  // declared filter is element 1 of the stored one, not element 25.
  EXPECT_EQ(b[1], a[25]);
  EXPECT_NE(b[1], a[1]);
}

} // namespace
