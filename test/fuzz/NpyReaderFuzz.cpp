//===- NpyReaderFuzz.cpp - libFuzzer target for parseNpy ------------------===//
//
// Any bytes must give an array whose data matches its shape and dtype, or a
// Status error, never a crash.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Npy.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace dlc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto array = parseNpy(std::string_view(reinterpret_cast<const char *>(data), size), "fuzz");
  if (!array.isOk())
    return 0;
  int64_t count = 1;
  for (int64_t d : array->shape)
    count *= d; // parseNpy refused shapes whose product overflows
  if (static_cast<int64_t>(array->data.size()) != count * dtypeBytes(array->dtype)) {
    std::fprintf(stderr, "%zu data bytes for %lld %s elements\n", array->data.size(),
                 static_cast<long long>(count), dtypeName(array->dtype));
    std::abort();
  }
  return 0;
}
