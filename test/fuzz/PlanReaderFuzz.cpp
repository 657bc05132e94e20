//===- PlanReaderFuzz.cpp - libFuzzer target for deserializePlan ----------===//
//
// Any bytes must give a plan that validates or a Status error, never a crash.
// A mutated plan almost never keeps its checksum, so each input is also read
// with its header and checksum made to fit: that reaches the payload parser
// and validatePlan.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/DiskCache.h"
#include "dlc/runtime/Plan.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace dlc::rt;

namespace {

constexpr size_t kMagicBytes = 8, kHeaderBytes = 8 + 4 + 8, kTrailerBytes = 8;

/// A plan that reads must write back to bytes that read as the same plan.
void checkRoundTrip(const Plan &plan) {
  std::string once = serializePlan(plan);
  auto again = deserializePlan(once, "round trip");
  if (!again.isOk()) {
    std::fprintf(stderr, "a plan that read does not read back: %s\n",
                 again.status().toString().c_str());
    std::abort();
  }
  if (serializePlan(*again) != once) {
    std::fprintf(stderr, "a plan that read does not write back the same bytes\n");
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (auto plan = deserializePlan(bytes, "fuzz"); plan.isOk())
    checkRoundTrip(*plan);

  // The same bytes with the version, payload size and checksum fixed up.
  if (size < kHeaderBytes + kTrailerBytes)
    return 0;
  std::memcpy(&bytes[0], "DLCPLAN\n", kMagicBytes);
  uint32_t version = kPlanFormatVersion;
  uint64_t payloadBytes = size - kHeaderBytes - kTrailerBytes;
  std::memcpy(&bytes[kMagicBytes], &version, 4);
  std::memcpy(&bytes[kMagicBytes + 4], &payloadBytes, 8);
  uint64_t sum = fnv1a(std::string_view(bytes).substr(kHeaderBytes, payloadBytes));
  std::memcpy(&bytes[kHeaderBytes + payloadBytes], &sum, 8);
  if (auto plan = deserializePlan(bytes, "fuzz"); plan.isOk())
    checkRoundTrip(*plan);
  return 0;
}
