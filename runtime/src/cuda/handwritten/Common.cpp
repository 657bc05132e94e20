//===- Common.cpp - what every hand-written kernel source starts with -----===//
//
// The kernels' parameters (DlcHandArgs, dlc/runtime/cuda/HandKernelArgs.h,
// the header the host fills them through), the half conversions the
// generated kernels use (KernelPrelude.h), and the typed loads and stores
// and block reductions every family uses. Half types are stored as 16-bit
// words and widened to float on load, rounded to nearest even on store, as
// dlc/runtime/Half.h does.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

#include "dlc/runtime/codegen/KernelPrelude.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandKernelArgsText.inc"

// kernels/TypeHeaders.cuh: cuda_fp16.h, the device rounds to f16 in
// hardware (FloatToHalf.cuh).
#include "kHandTypeHeadersText.inc"

// kernels/CommonBegin.cuh guards the half conversions too, which have no
// guard of their own: a host test compiles every family's source as one
// text. kernels/Common.cuh closes the guard.
#include "kHandCommonBeginText.inc"
#include "kHandCommonText.inc"
} // namespace

std::string commonHeader() {
  return std::string(kHandTypeHeadersText) + codegen::kernelPrelude() + kHandKernelArgsText +
         kHandCommonBeginText + codegen::halfToFloatText() + codegen::floatToHalfText() +
         kHandCommonText;
}

} // namespace dlc::rt::cuda::handwritten
