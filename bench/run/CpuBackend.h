//===- CpuBackend.h - --backend cpu and --backend reference ------*- C++ -*-===//
//
// Two CPU backends run the same plans through rt::cpu::CpuExecutor:
//
//   reference  every plan kernel on its own, convolutions accumulated in
//              double: the numerical truth the other backends are checked
//              against;
//   cpu        the fast one: every launch the kernel generator covers runs as
//              one fused loop compiled for this host (cpu/HostKernels.h), the
//              heavy ops through oneDNN (cpu/Dnnl.h), the rest as the
//              reference runs them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_CPUBACKEND_H
#define DLC_BENCH_CPUBACKEND_H

#include "Report.h"

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/cpu/CpuExecutor.h"

#include <string>

namespace dlc::bench {

/// Whether `backend` is one of the CPU backends ("cpu", "reference").
bool isCpuBackend(const std::string &backend);

/// The executor options of a CPU backend.
rt::cpu::CpuExecutor::Options cpuExecutorOptions(const std::string &backend);

/// --backend cpu: compiles the plan's generated launches (or finds them in
/// the cache) before any rank's executor loads them, and records what runs
/// where and what compiling cost in `result` (cpuBackendNote,
/// hostCompileSeconds). Nothing for the reference.
rt::Status prepareCpuBackend(const rt::Plan &plan, const std::string &backend,
                             Result &result);

} // namespace dlc::bench

#endif // DLC_BENCH_CPUBACKEND_H
