//===- RunPlan.cpp - run a compiled plan and measure it -------------------===//
//
// A plan's counts, and its timed run in this one process; a plan of
// several data-parallel ranks runs through RunRanks.cpp.
//
//===----------------------------------------------------------------------===//

#include "RunPlan.h"

#include "CpuBackend.h"
#include "Interrupt.h"
#include "RunSteps.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Nvml.h"
#include "dlc/runtime/Parallel.h"
#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cuda/CudaExecutor.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

namespace dlc::bench {

namespace {
/// The step loop's answer to SIGINT / SIGTERM: the repeats that finished
/// stay in the result; dlc-bench reports the configuration as interrupted.
rt::Status interrupted(int64_t repeat, const RunOptions &o) {
  return failure("interrupted by " + interruptName() + " in repeat " +
                 std::to_string(repeat + 1) + " of " + std::to_string(o.repeats));
}
} // namespace

void describePlan(const rt::Plan &plan, const std::string &backend, Result &result) {
  result.model = plan.model;
  result.backend = backend;
  result.precision = plan.precision;
  result.fusion = plan.fusion;
  result.batch = plan.batch;
  result.gpus = rt::planRanks(plan);
  result.threads = rt::cpuThreadCount();
  result.peakArenaBytes = plan.arenaBytes;
  for (const rt::PlanKernel &k : plan.kernels)
    if (k.opClass == rt::OpClass::kOptimizer) {
      result.optimizer = k.op.substr(0, k.op.find('_'));
      break;
    }
  for (const rt::PlanKernel &k : plan.kernels)
    if (k.op.rfind("conv2d", 0) == 0 || k.op.rfind("batch_norm", 0) == 0) {
      std::string layout = rt::kernelLayout(k);
      if (result.layout.empty() || layout != "NCHW")
        result.layout = layout;
    }
  for (const rt::PlanKernel &k : plan.kernels)
    if (k.opClass == rt::OpClass::kCollective) {
      ++result.allReducesPerStep;
      for (int32_t id : k.inputs) {
        result.allReduceBytesPerStep += plan.buffers[id].bytes;
        std::string dtype = rt::dtypeName(plan.buffers[id].dtype);
        if (result.allReduceDtype.empty())
          result.allReduceDtype = dtype;
        else if (result.allReduceDtype != dtype)
          result.allReduceDtype = "mixed";
      }
    }
  std::vector<int64_t> waitAt = rt::allReduceWaitPoints(plan);
  for (size_t k = 0; k < waitAt.size(); ++k)
    if (waitAt[k] >= 0)
      result.allReduceOverlapKernels.push_back(waitAt[k] - static_cast<int64_t>(k) - 1);
  rt::PlanSummary summary = rt::summarizePlan(plan);
  result.parameters = summary.parameters;
  result.forwardMacsPerSample = summary.forwardMacs / std::max<int64_t>(plan.batch, 1);
  result.trainFlopsPerStep = 2 * summary.stepMacs;
  result.kernelsPerStep = summary.launches;
  result.memoryBytesPerStep = summary.memoryBytes;
  result.fusedGroups = summary.groupsByKind;
  result.kernelsByKind = summary.launchesByKind;
  // The CUDA backend's routing needs no GPU: compile-only runs report it.
  if (backend == "cuda") {
    std::vector<rt::cuda::DeviceLaunch> device = rt::cuda::planDeviceLaunches(plan);
    result.launchesByPath = rt::cuda::countByPath(device);
    result.deviceMemoryBytesPerStep = rt::cuda::deviceMemoryBytes(plan, device);
  }
}

rt::Status runPlan(const rt::Plan &plan, const RunOptions &o, Result &result) {
  result.warmup = o.warmup;
  result.steps = o.steps;
  result.repeats = o.repeats;
  result.seed = o.seed;
  int64_t ranks = rt::planRanks(plan);
  if (int launched = rt::launchedProcesses(); launched > 1 && launched != ranks)
    return failure(processCountMessage(launched, ranks));
  announceRun(plan, o, ranks);
  if (rt::Status ready = prepareCpuBackend(plan, o.backend, result); !ready.isOk())
    return failure(ready.toString());
  if (ranks > 1)
    return runDataParallel(plan, o, result, static_cast<int>(ranks));
  // Both backends run the same loop below through rt::Executor.
  std::unique_ptr<rt::Executor> executor;
  rt::cuda::CudaExecutor *gpu = nullptr;
  std::unique_ptr<rt::NvmlMonitor> nvml;
  if (o.backend == "cuda") {
    rt::cuda::CudaOptions options;
    options.cudaGraph = !o.noCudaGraph;
    options.allowTf32 = o.tf32;
    auto created = rt::cuda::CudaExecutor::create(plan, options);
    if (!created.isOk())
      return failure("--backend cuda: " + created.status().toString());
    gpu = created->get();
    executor = std::move(*created);
    result.launchesByPath = executor->launchesByPath();
    result.device = gpu->deviceName();
    result.tf32 = gpu->options().allowTf32;
    auto monitor = rt::NvmlMonitor::open(gpu->pciBusId());
    if (monitor.isOk())
      nvml = std::move(*monitor);
    else
      result.gpuUsageNote = monitor.status().message();
  } else {
    auto created = rt::cpu::CpuExecutor::create(plan, cpuExecutorOptions(o.backend));
    if (!created.isOk())
      return failure(created.status().toString());
    executor = std::move(*created);
  }

  Progress progress(o);
  HostBusy busy;
  rt::Executor &exec = *executor;
  // Gradients die inside the step; capture each as its update reads it.
  // Under loss scaling they are unscaled with the status the update read.
  GradientCapture lastGrads;
  // --profile: the CUDA backend times its own launches with events.
  OpProfile profile;
  bool observeProfile = o.profile && !gpu;
  if (!o.dumpOut.empty() || observeProfile)
    exec.setKernelObserver([&](size_t k) {
      if (!o.dumpOut.empty())
        captureGradient(exec, k, lastGrads);
      if (observeProfile)
        profile.kernelEnded(exec.plan().kernels[k].op);
    });
  for (int64_t r = 0; r < o.repeats; ++r) {
    if (rt::Status s = prepareRepeat(exec, o, o.seed + 1, o.inputsIn); !s.isOk())
      return failure(s.toString());
    RepeatResult repeat;
    for (int64_t i = 0; i < o.warmup; ++i) {
      if (rt::Status s = exec.step(); !s.isOk())
        return failure(s.toString());
      if (i == 0)
        repeat.lossFirst = exec.loss();
      progress.stepDone(r, /*warmup=*/true, i, o.warmup);
      if (interruptSignal())
        return interrupted(r, o);
    }
    if (rt::Status s = exec.synchronize(); !s.isOk())
      return failure(s.toString());
    if (gpu && o.profile)
      gpu->setProfiling(true);
    if (nvml)
      nvml->start();
    auto start = std::chrono::steady_clock::now();
    double cpuStart = processCpuSeconds();
    profile.startTiming();
    for (int64_t i = 0; i < o.steps; ++i) {
      if (rt::Status s = exec.step(); !s.isOk())
        return failure(s.toString());
      if (o.warmup == 0 && i == 0)
        repeat.lossFirst = exec.loss();
      progress.stepDone(r, /*warmup=*/false, i, o.steps);
      if (interruptSignal())
        return interrupted(r, o);
    }
    // A device backend returns before its last steps finish: wait for them.
    if (rt::Status s = exec.synchronize(); !s.isOk())
      return failure(s.toString());
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    busy.add(processCpuSeconds() - cpuStart, seconds);
    profile.timing = false;
    if (gpu) {
      gpu->setProfiling(false);
      result.cudaGraph = gpu->replaysCudaGraph();
      result.cudaGraphNote = gpu->cudaGraphNote();
    }
    if (nvml) {
      rt::GpuUsage usage = nvml->stop();
      // Utilization: the mean over every repeat's samples.
      double total = result.gpuUtilization * result.gpuSamples +
                     usage.gpuUtilizationPercent * usage.samples;
      result.gpuSamples += usage.samples;
      if (result.gpuSamples)
        result.gpuUtilization = total / result.gpuSamples;
      result.gpuMemoryUsedBytes = std::max(result.gpuMemoryUsedBytes, usage.memoryUsedBytes);
    }
    repeat.lossLast = exec.loss();
    repeat.samplesPerSec = result.batch * o.steps / seconds;
    repeat.stepMs = seconds * 1000 / o.steps;
    result.repeatResults.push_back(repeat);
  }
  progress.finish();
  result.hostCpuUtilization = busy.percent();

  if (o.profile && gpu) {
    if (rt::Status s = printLaunchProfile(*gpu); !s.isOk())
      return failure(s.toString());
  } else if (o.profile) {
    profile.print(o.repeats * o.steps, "");
  }

  if (!o.dumpOut.empty())
    return writeDump(exec, lastGrads.byParam, o.dumpOut, exec.loss());
  return rt::Status::ok();
}

} // namespace dlc::bench
