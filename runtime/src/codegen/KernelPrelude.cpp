//===- KernelPrelude.cpp - helpers every generated kernel starts with -----===//
//
// The prelude (kernels/Prelude.cuh) holds the loads and stores by element
// type, the activation formulas and the block reduction, so that a
// generated kernel's body is just the fused computation. Under NVRTC it is
// CUDA; compiled as plain C++ (no __CUDACC__), the same kernel text runs on
// the host with one thread per block, which is how the host target's
// kernels run (kernels/HostParts.h cuts their items into parts) and how a
// unit test checks a CUDA kernel without a GPU; a test that defines
// DLC_HOST_THREADS brings its own threads (and the block reductions then
// combine them).
//
// The texts live in real files that the build embeds byte for byte
// (runtime/cmake/EmbedText.cmake): a kernel's name hashes its text, so an
// edit to them renames every kernel.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/codegen/KernelPrelude.h"

#include <string>

namespace dlc::rt::codegen {

namespace {
#include "kFloatToHalfText.inc"
#include "kHalfToFloatText.inc"
#include "kHostMathText.inc"
#include "kHostPartsText.inc"
#include "kPreludeText.inc"
} // namespace

const char *kernelPrelude() {
  // The host's vectorizable e^x, erf and tanh first (NVRTC skips them).
  static const std::string text = std::string(kHostMathText) + kPreludeText;
  return text.c_str();
}
const char *hostPartsText() { return kHostPartsText; }
const char *halfToFloatText() { return kHalfToFloatText; }
const char *floatToHalfText() { return kFloatToHalfText; }

} // namespace dlc::rt::codegen
