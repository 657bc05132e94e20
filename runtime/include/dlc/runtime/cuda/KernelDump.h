//===- KernelDump.h - the generated kernels of a plan, as files -----------===//
//
// What `--dump-kernels DIR` writes (dlc-bench, dlc-kernels): every kernel
// the CUDA backend generates for a plan, as it generates them (split
// groups' parts included), one file per launch, each a complete
// translation unit preceded by a comment naming the plan kernels it
// computes and the buffer each argument binds. Needs no GPU.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_KERNELDUMP_H
#define DLC_RUNTIME_CUDA_KERNELDUMP_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/Status.h"
#include "dlc/runtime/codegen/KernelDump.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include <string>
#include <vector>

namespace dlc::rt::cuda {

/// The kernel of every device launch whose path is "generated"
/// (LaunchPaths.h), in launch order.
StatusOr<std::vector<GeneratedKernel>> generateDeviceKernels(const Plan &plan);

/// Writing them: codegen/KernelDump.h.
using codegen::kernelBindings;
using codegen::writeKernelSources;

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_KERNELDUMP_H
