//===- KernelDump.cpp - the kernels the CUDA backend generates ------------===//

#include "dlc/runtime/cuda/KernelDump.h"

#include "dlc/runtime/cuda/LaunchPaths.h"

namespace dlc::rt::cuda {

StatusOr<std::vector<GeneratedKernel>> generateDeviceKernels(const Plan &plan) {
  std::vector<DeviceLaunch> device = planDeviceLaunches(plan);
  std::vector<Launch> launches = launchesOf(device);
  std::vector<GeneratedKernel> kernels;
  for (const DeviceLaunch &d : device) {
    if (d.path != DevicePath::kGenerated)
      continue;
    auto kernel = generateKernel(plan, d.launch, launches);
    if (!kernel.isOk())
      return kernel.status();
    kernels.push_back(std::move(*kernel));
  }
  return kernels;
}

} // namespace dlc::rt::cuda
