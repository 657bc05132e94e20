//===- CpuBackend.cpp - --backend cpu and --backend reference -------------===//

#include "CpuBackend.h"

#include "dlc/runtime/cpu/Dnnl.h"
#include "dlc/runtime/cpu/HostKernels.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>

namespace dlc::bench {

bool isCpuBackend(const std::string &backend) {
  return backend == "cpu" || backend == "reference";
}

rt::cpu::CpuExecutor::Options cpuExecutorOptions(const std::string &backend) {
  return backend == "cpu" ? rt::cpu::CpuExecutor::fastOptions()
                          : rt::cpu::CpuExecutor::Options();
}

rt::Status prepareCpuBackend(const rt::Plan &plan, const std::string &backend,
                             Result &result) {
  if (backend != "cpu")
    return rt::Status::ok();
  rt::cpu::CpuExecutor::Options options = cpuExecutorOptions(backend);
  auto host = rt::cpu::HostKernels::create(plan, options.kernelCacheDir);
  if (!host.isOk())
    return rt::Status(host.status().code(), "--backend cpu: " + host.status().message());
  const rt::cpu::HostKernelStats &stats = (*host)->stats();
  // The kernels run one by one: oneDNN's where it has the op, else dlc's
  // fast host version, else the reference.
  // Half-precision buffers: bf16 as they are where the library computes
  // it, else widened to float around the kernel.
  int64_t library = 0, fastHost = 0, reference = 0, nativeBf16 = 0, widened = 0;
  // The reference kernels by op, for the footer: what is still slow.
  std::map<std::string, int64_t> referenceOps;
  for (const rt::cpu::HostLaunch &launch : (*host)->launches()) {
    if (launch.kernel)
      continue;
    for (size_t k : launch.launch.kernels) {
      const rt::PlanKernel &kernel = plan.kernels[k];
      const std::string &op = kernel.op;
      if (rt::cpu::CpuExecutor::takesBf16(kernel, plan, options))
        ++nativeBf16;
      else
        for (const std::vector<int32_t> *ids : {&kernel.inputs, &kernel.outputs})
          if (std::any_of(ids->begin(), ids->end(), [&](int32_t id) {
                return rt::cpu::isHalf(plan.buffers[id].dtype);
              })) {
            ++widened;
            break;
          }
      if (rt::cpu::dnnlKernels().count(kernel.id))
        ++library;
      else if (options.libraryKernels && options.libraryKernels->count(kernel.id))
        ++fastHost;
      else
        ++reference, ++referenceOps[op];
    }
  }
  std::string referenceNames;
  for (const auto &[op, count] : referenceOps)
    referenceNames += (referenceNames.empty() ? " (" : ", ") + op + " " + std::to_string(count);
  if (!referenceNames.empty())
    referenceNames += ")";
  char compile[96];
  if (stats.generated == 0)
    std::snprintf(compile, sizeof(compile), "nothing to compile");
  else if (stats.cacheHit)
    std::snprintf(compile, sizeof(compile), "host kernels loaded from the cache");
  else
    std::snprintf(compile, sizeof(compile), "host kernels compiled in %.1f s",
                  stats.compileSeconds);
  std::string note = std::to_string(stats.generated) + " of " +
                     std::to_string(stats.launches) + " launches generated (" +
                     std::to_string(stats.kernels) + " of " +
                     std::to_string(plan.kernels.size()) + " kernels, " +
                     std::to_string(stats.distinct) + " distinct), " + std::to_string(library) +
                     " kernels on " + (rt::cpu::dnnlAvailable() ? "oneDNN" : "no library") +
                     (nativeBf16 ? " (" + std::to_string(nativeBf16) + " in bf16)" : "") +
                     ", " + std::to_string(fastHost) + " fast host kernels, " +
                     std::to_string(reference) + " reference kernels" + referenceNames +
                     (widened ? ", " + std::to_string(widened) +
                                    " of these with half-precision buffers widened to float"
                              : "") +
                     "; " + compile;
  result.cpuBackendNote = note;
  result.hostCompileSeconds = stats.cacheHit ? 0 : stats.compileSeconds;
  return rt::Status::ok();
}

} // namespace dlc::bench
