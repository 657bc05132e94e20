//===- DnnlKernels.cpp - the oneDNN kernel registry -----------------------===//

#include "dlc/runtime/cpu/Dnnl.h"

#include "dlc/runtime/Parallel.h"
#include "dnnl/DnnlCommon.h"

namespace dlc::rt::cpu {

bool dnnlAvailable() { return true; }

namespace {
const char *isaName(dnnl::cpu_isa isa) {
  switch (isa) {
  case dnnl::cpu_isa::sse41: return "sse41";
  case dnnl::cpu_isa::avx: return "avx";
  case dnnl::cpu_isa::avx2: return "avx2";
  case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
  case dnnl::cpu_isa::avx512_core: return "avx512_core";
  case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
  case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
  case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
  default: return "other";
  }
}

const char *runtimeName(unsigned runtime) {
  switch (runtime) {
  case DNNL_RUNTIME_OMP: return "OpenMP";
  case DNNL_RUNTIME_TBB: return "TBB";
  case DNNL_RUNTIME_SEQ: return "sequential";
  case DNNL_RUNTIME_THREADPOOL: return "threadpool";
  default: return "another runtime";
  }
}
} // namespace

std::string dnnlDescription() {
  const dnnl::version_t *v = dnnl::version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + ", " + runtimeName(v->cpu_runtime) + ", " +
         std::to_string(cpuThreadCount()) + " threads, ISA " +
         isaName(dnnl::get_effective_cpu_isa());
}

double dnnlGemmGflops() {
  static const double gflops = [] {
    try {
      return onednn::measureGemmGflops();
    } catch (const std::exception &) {
      return 0.0; // no estimate, rather than no run
    }
  }();
  return gflops;
}

const KernelRegistry &dnnlKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    onednn::registerConvKernels(r);
    onednn::registerMatmulKernels(r);
    onednn::registerNormKernels(r);
    onednn::registerPoolKernels(r);
    return r;
  }();
  return registry;
}

const std::set<OpId> &dnnlNativeBf16Ops() {
  static const std::set<OpId> ops = []() -> std::set<OpId> {
    switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
      return {OpId::kMatmul, OpId::kLinear, OpId::kConv2d, OpId::kConv2dBackwardData,
              OpId::kConv2dBackwardFilter};
    default:
      return {};
    }
  }();
  return ops;
}

} // namespace dlc::rt::cpu
