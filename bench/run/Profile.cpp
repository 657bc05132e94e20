//===- Profile.cpp - --profile's figures in the report --------------------===//

#include "Profile.h"

#include "dlc/runtime/PlanLaunches.h"
#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/cuda/CudaExecutor.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include <set>

namespace dlc::bench {

namespace {

/// Bytes and FLOPs of the launch made of `kernels`: each buffer it reads
/// from outside read once, each it writes that outlives it written once.
void launchCost(const rt::Plan &plan, const std::vector<size_t> &kernels,
                const std::vector<std::vector<size_t>> &readers, ProfileEntry &entry) {
  std::set<size_t> inside(kernels.begin(), kernels.end());
  std::set<int32_t> written, read;
  for (size_t k : kernels)
    for (int32_t b : plan.kernels[k].outputs)
      written.insert(b);
  for (size_t k : kernels) {
    const rt::PlanKernel &kernel = plan.kernels[k];
    entry.flops += 2 * rt::kernelMacs(plan, kernel);
    for (int32_t b : kernel.inputs)
      if (!written.count(b))
        read.insert(b);
  }
  for (int32_t b : read)
    entry.bytes += plan.buffers[b].bytes;
  for (int32_t b : written) {
    // A value no kernel outside reads, and that is no parameter, state or
    // output of the step, stays in the launch.
    rt::BufferRole role = plan.buffers[b].role;
    bool outlives = (role != rt::BufferRole::kTemporary && role != rt::BufferRole::kGradient) ||
                    readers[b].empty();
    for (size_t r : readers[b])
      outlives |= !inside.count(r);
    if (outlives)
      entry.bytes += plan.buffers[b].bytes;
  }
}

std::vector<std::vector<size_t>> readersOf(const rt::Plan &plan) {
  std::vector<std::vector<size_t>> readers(plan.buffers.size());
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    for (int32_t b : plan.kernels[k].inputs)
      readers[b].push_back(k);
  return readers;
}

} // namespace

std::vector<ProfileEntry> cpuProfile(const rt::Plan &plan,
                                     const std::vector<double> &kernelSeconds, int64_t steps,
                                     const std::string &backend) {
  std::vector<std::vector<size_t>> readers = readersOf(plan);
  std::vector<ProfileEntry> entries;
  for (const rt::Launch &launch : rt::planLaunches(plan)) {
    ProfileEntry e;
    e.launch = static_cast<int64_t>(launch.index);
    e.kind = launch.kind;
    e.path = backend;
    double seconds = 0;
    for (size_t k : launch.kernels)
      seconds += k < kernelSeconds.size() ? kernelSeconds[k] : 0;
    e.msPerStep = steps > 0 ? seconds * 1000 / steps : 0;
    launchCost(plan, launch.kernels, readers, e);
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<ProfileEntry> cudaProfile(const rt::Plan &plan,
                                      const std::vector<rt::cuda::LaunchPath> &paths,
                                      const std::vector<double> &msPerStep,
                                      const std::vector<double> &predictedMs) {
  std::vector<std::vector<size_t>> readers = readersOf(plan);
  std::vector<rt::cuda::DeviceLaunch> device = rt::cuda::planDeviceLaunches(plan);
  std::vector<ProfileEntry> entries;
  for (size_t i = 0; i < device.size() && i < paths.size() && i < msPerStep.size(); ++i) {
    ProfileEntry e;
    e.launch = static_cast<int64_t>(i);
    e.kind = device[i].launch.kind;
    e.path = paths[i].path;
    e.msPerStep = msPerStep[i];
    if (i < predictedMs.size())
      e.predictedMs = predictedMs[i];
    launchCost(plan, device[i].launch.kernels, readers, e);
    entries.push_back(std::move(e));
  }
  return entries;
}

} // namespace dlc::bench
