//===- Dropout.cpp - dropout with the CPU's counter-based mask ------------===//
//
// The keep decision is the CPU's keepElement (runtime/src/cpu/OpsDense.cpp):
// splitmix64 finalizers over (seed, step, element index), the top 53 bits
// as a double in [0, 1) compared with the rate. Integer arithmetic and one
// exact conversion, so the device's mask is the CPU's bit for bit.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandDropoutText.inc"
} // namespace

const char *dropoutBody() { return kHandDropoutText; }

} // namespace dlc::rt::cuda::handwritten
