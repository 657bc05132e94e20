//===- KernelDump.h - generated kernels as files ----------------*- C++ -*-===//
//
// What `--dump-kernels DIR` writes (dlc-bench, dlc-kernels): generated
// kernels, one file per launch, each a complete translation unit preceded
// by a comment naming the plan kernels it computes and the buffer each
// argument binds: .cu for the CUDA target, .cpp for the host target.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CODEGEN_KERNELDUMP_H
#define DLC_RUNTIME_CODEGEN_KERNELDUMP_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/Status.h"
#include "dlc/runtime/codegen/KernelCodegen.h"

#include <string>
#include <vector>

namespace dlc::rt::codegen {

/// The comment a dumped source starts with: the plan, the launch, its plan
/// kernels, and the buffer each argument (or table segment) binds.
std::string kernelBindings(const Plan &plan, const GeneratedKernel &kernel);

/// Writes each kernel to DIR/<launch, 4 digits>-<name>.cu (.cpp for the
/// host target) after its bindings, creating DIR (and its parents) if
/// needed.
Status writeKernelSources(const Plan &plan, const std::vector<GeneratedKernel> &kernels,
                          const std::string &dir);

} // namespace dlc::rt::codegen

#endif // DLC_RUNTIME_CODEGEN_KERNELDUMP_H
