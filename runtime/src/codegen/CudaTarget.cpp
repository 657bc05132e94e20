//===- CudaTarget.cpp - generated kernels as CUDA for NVRTC ---------------===//
//
// Grid-stride loops: the launcher caps the grid at what fills the GPU and
// each thread strides over the rest (KernelTargets.h).
//
//===----------------------------------------------------------------------===//

#include "KernelTargets.h"

#include <cstdio>
#include <cstdlib>

namespace dlc::rt::codegen {

namespace {
class CudaWriter final : public TargetWriter {
public:
  std::string extraParams() const override { return ""; }
  std::string itemLoop(const std::string &deviceLoop, const std::string &,
                       const std::string &) const override {
    return deviceLoop;
  }
  std::string vectorLoop(const std::string &v) const override {
    return "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
           "  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  // " + v + " elements per thread and access, 16-byte loads and stores.\n"
           "  for (long long q = first; q < n / " + v + "; q += stride) {\n";
  }
  std::string tailLoop(const std::string &v) const override {
    return "  // The tail that does not fill a vector.\n"
           "  for (long long i = n / " + v + " * " + v + " + first; i < n; i += stride) {\n";
  }
  std::string elementLoop() const override {
    return "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; "
           "i += (long long)gridDim.x * blockDim.x) {\n";
  }
  bool packsVectors() const override { return true; }
  std::string rowLoops(const std::string &) const override {
    std::fprintf(stderr, "dlc: the CUDA target packs vectors and has no row loops\n");
    std::abort();
  }
  std::string afterPrelude() const override { return ""; }
  std::string tableBody(const char *cudaBody) const override { return cudaBody; }
  bool keepsRowValues() const override { return false; }
  bool sumsColumnsByRows() const override { return false; }
};
} // namespace

const TargetWriter &cudaTarget() {
  static const CudaWriter writer;
  return writer;
}

} // namespace dlc::rt::codegen
