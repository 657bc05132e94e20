//===- NoDnnl.cpp - the oneDNN kernels in a build without oneDNN ----------===//

#include "dlc/runtime/cpu/Dnnl.h"

namespace dlc::rt::cpu {

bool dnnlAvailable() { return false; }

std::string dnnlDescription() {
  return "no oneDNN: dlc was built without it (Debian: libdnnl-dev, found by "
         "CMake at configure time)";
}

const KernelRegistry &dnnlKernels() {
  static const KernelRegistry empty;
  return empty;
}

const std::set<OpId> &dnnlNativeBf16Ops() {
  static const std::set<OpId> none;
  return none;
}

int64_t dnnlReferenceCalls() { return 0; }

double dnnlGemmGflops() { return 0; }

bool dnnlSgemm(bool, bool, int64_t, int64_t, int64_t, float, const float *, int64_t,
               const float *, int64_t, float, float *, int64_t) {
  return false;
}

} // namespace dlc::rt::cpu
