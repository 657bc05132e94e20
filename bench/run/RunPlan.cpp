//===- RunPlan.cpp - run a compiled plan and measure it -------------------===//
//
// A plan's counts, and its timed run in this one process; a plan of
// several data-parallel ranks runs through RunRanks.cpp.
//
//===----------------------------------------------------------------------===//

#include "RunPlan.h"

#include "CpuBackend.h"
#include "HostLoad.h"
#include "Interrupt.h"
#include "Roofline.h"
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
#include <iostream>
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
/// Compiles the CPU backend's host kernels (prepareCpuBackend), saying so
/// first on a long run: the host compiler may take minutes over a large
/// model.
rt::Status readyBackend(const rt::Plan &plan, const RunOptions &o, int64_t ranks,
                        Result &result) {
  if (o.backend == "cpu")
    sayPhase(o, stepSecondsAtLeast(plan, o, ranks),
             "compiling the host kernels (or reading them back from the cache)");
  if (rt::Status ready = prepareCpuBackend(plan, o.backend, result); !ready.isOk())
    return failure(ready.toString());
  return rt::Status::ok();
}
} // namespace

void describePlan(const rt::Plan &plan, const std::string &backend, bool gpuFigures,
                  Result &result) {
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
    if (k.opClass == rt::OpClass::kBatchNormalization || k.id == rt::OpId::kConv2d ||
        k.id == rt::OpId::kConv2dBackwardData || k.id == rt::OpId::kConv2dBackwardFilter) {
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
  if (backend != "cuda" && !gpuFigures)
    return;
  // The CUDA backend's routing needs no GPU: compile-only runs report it.
  std::vector<rt::cuda::DeviceLaunch> device = rt::cuda::planDeviceLaunches(plan);
  result.deviceLaunches = static_cast<int64_t>(device.size());
  if (backend == "cuda") {
    result.launchesByPath = rt::cuda::countByPath(device);
    result.deviceMemoryBytesPerStep = rt::cuda::deviceMemoryBytes(plan, device);
  }
}

rt::Status runPlan(const rt::Plan &plan, const RunOptions &o, Result &result) {
  int64_t ranks = rt::planRanks(plan);
  if (ranks > 1 || rt::launchedProcesses() > 1) {
    result.warmup = o.warmup;
    result.steps = o.steps;
    result.repeats = o.repeats;
    result.seed = o.seed;
    if (int launched = rt::launchedProcesses(); launched > 1 && launched != ranks)
      return failure(processCountMessage(launched, ranks));
    announceRun(plan, o, ranks);
    DLC_RETURN_IF_ERROR(readyBackend(plan, o, ranks, result));
    return runDataParallel(plan, o, result, static_cast<int>(ranks));
  }
  RepeatRun run(plan, o, result);
  DLC_RETURN_IF_ERROR(run.start());
  for (int64_t r = 0; r < o.repeats; ++r)
    DLC_RETURN_IF_ERROR(run.runRepeat(r));
  return run.finish();
}

/// What a single-rank run keeps between its repeats.
struct RepeatRun::State {
  // Both backends run the same loop through rt::Executor.
  std::unique_ptr<rt::Executor> executor;
  rt::cuda::CudaExecutor *gpu = nullptr;
  std::unique_ptr<rt::NvmlMonitor> nvml;
  std::unique_ptr<Progress> progress;
  HostBusy busy;
  // Gradients die inside the step; capture each as its update reads it.
  // Under loss scaling they are unscaled with the status the update read.
  GradientCapture lastGrads;
  // --profile: the CUDA backend times its own launches with events.
  OpProfile profile;
  bool observeProfile = false;
};

RepeatRun::RepeatRun(const rt::Plan &plan, const RunOptions &o, Result &result)
    : plan(plan), o(o), result(result), state(std::make_unique<State>()) {}

RepeatRun::~RepeatRun() = default;

rt::Status RepeatRun::start() {
  result.warmup = o.warmup;
  result.steps = o.steps;
  result.repeats = o.repeats;
  result.seed = o.seed;
  result.lossEvery = o.lossEvery;
  announceRun(plan, o, 1);
  DLC_RETURN_IF_ERROR(readyBackend(plan, o, 1, result));
  state->progress = std::make_unique<Progress>(o, stepSecondsAtLeast(plan, o, 1));
  return rt::Status::ok();
}

rt::Status RepeatRun::createExecutor() {
  State &s = *state;
  if (o.backend == "cuda") {
    rt::cuda::CudaOptions options;
    options.cudaGraph = !o.noCudaGraph;
    options.allowTf32 = o.tf32;
    auto created = rt::cuda::CudaExecutor::create(plan, options);
    if (!created.isOk())
      return failure("--backend cuda: " + created.status().toString());
    s.gpu = created->get();
    s.executor = std::move(*created);
    printRefusedAtRunTime(*s.gpu);
    result.launchesByPath = s.executor->launchesByPath();
    result.launchesPerStep = static_cast<int64_t>(s.gpu->launchPaths().size());
    result.device = s.gpu->deviceName();
    result.tf32 = s.gpu->options().allowTf32;
    auto monitor = rt::NvmlMonitor::open(s.gpu->pciBusId());
    if (monitor.isOk())
      s.nvml = std::move(*monitor);
    else
      result.gpuUsageNote = monitor.status().message();
  } else {
    auto created = rt::cpu::CpuExecutor::create(plan, cpuExecutorOptions(o.backend));
    if (!created.isOk())
      return failure(created.status().toString());
    result.launchesPerStep = (*created)->launchesPerStep();
    s.executor = std::move(*created);
  }
  rt::Executor &exec = *s.executor;
  s.observeProfile = o.profile && !s.gpu;
  s.lastGrads.relu = o.dumpRelu;
  if (!o.dumpOut.empty() || s.observeProfile)
    exec.setKernelObserver(
        [this, &exec](size_t k) {
          if (!o.dumpOut.empty())
            captureGradient(exec, k, state->lastGrads);
          if (state->observeProfile)
            state->profile.kernelEnded(k, exec.plan().kernels[k].op);
        },
        /*readsBuffers=*/!o.dumpOut.empty());
  return rt::Status::ok();
}

void RepeatRun::release() {
  if (o.profile && state->gpu)
    return;
  state->nvml.reset();
  state->gpu = nullptr;
  state->executor.reset();
}

rt::Status RepeatRun::runRepeat(int64_t r) {
  State &s = *state;
  if (!s.executor)
    DLC_RETURN_IF_ERROR(createExecutor());
  rt::Executor &exec = *s.executor;
  rt::cuda::CudaExecutor *gpu = s.gpu;
  Progress &progress = *s.progress;
  progress.beginRepeat();
  if (rt::Status st = prepareRepeat(exec, o, o.seed + 1, o.inputsIn); !st.isOk())
    return failure(st.toString());
  RepeatResult repeat;
  // --loss-every: a read of the loss waits for its step on a device, so
  // only the steps asked for read it, and only in the first repeat.
  auto recordLoss = [&](int64_t step) {
    if (r == 0 && o.lossEvery > 0 && step % o.lossEvery == 0)
      result.lossTrajectory.push_back({step, exec.loss()});
  };
  progress.phase(r, /*warmup=*/true, o.warmup);
  for (int64_t i = 0; i < o.warmup; ++i) {
    if (rt::Status st = exec.step(); !st.isOk())
      return failure(st.toString());
    if (i == 0)
      repeat.lossFirst = exec.loss();
    recordLoss(i + 1);
    progress.stepDone(r, /*warmup=*/true, i, o.warmup);
    if (interruptSignal())
      return interrupted(r, o);
  }
  if (rt::Status st = exec.synchronize(); !st.isOk())
    return failure(st.toString());
  progress.phase(r, /*warmup=*/false, o.steps);
  if (gpu && o.profile)
    gpu->setProfiling(true);
  if (s.nvml)
    s.nvml->start();
  HostLoadMeter load;
  load.start();
  auto start = std::chrono::steady_clock::now();
  double cpuStart = processCpuSeconds();
  s.profile.startTiming();
  for (int64_t i = 0; i < o.steps; ++i) {
    if (rt::Status st = exec.step(); !st.isOk())
      return failure(st.toString());
    if (o.warmup == 0 && i == 0)
      repeat.lossFirst = exec.loss();
    recordLoss(o.warmup + i + 1);
    progress.stepDone(r, /*warmup=*/false, i, o.steps);
    if (interruptSignal())
      return interrupted(r, o);
  }
  // A device backend returns before its last steps finish: wait for them.
  if (rt::Status st = exec.synchronize(); !st.isOk())
    return failure(st.toString());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  s.busy.add(processCpuSeconds() - cpuStart, seconds);
  repeat.hostLoadPercent = load.stop();
  s.profile.timing = false;
  if (gpu) {
    gpu->setProfiling(false);
    result.cudaGraph = gpu->replaysCudaGraph();
    result.cudaGraphNote = gpu->cudaGraphNote();
  }
  if (s.nvml) {
    rt::GpuUsage usage = s.nvml->stop();
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
  return rt::Status::ok();
}

rt::Status RepeatRun::finish() {
  State &s = *state;
  s.progress->finish();
  result.hostCpuUtilization = s.busy.percent();
  if (o.profile && s.gpu) {
    ModelFigures model = modelFiguresFor(plan, o);
    if (rt::Status st = printLaunchProfile(*s.gpu, model); !st.isOk())
      return failure(st.toString());
    if (auto ms = s.gpu->launchMsPerStep(); ms.isOk())
      result.profile = cudaProfile(plan, s.gpu->launchPaths(), *ms, model.msPerLaunch);
    Roof roof = cudaRoof(o.gpuName, s.gpu->deviceName(), result.precision, o.tf32,
                         result.peakTflops);
    applyFloors(result.profile, roof);
    result.profileRoof = roof;
    writeFloors(std::cerr, result.profile, roof);
  } else if (o.profile) {
    s.profile.print(o.repeats * o.steps, "");
    result.profile =
        cpuProfile(plan, s.profile.byKernel, o.repeats * o.steps, o.backend);
    result.profileRoof = hostRoof();
    applyFloors(result.profile, result.profileRoof);
    writeFloors(std::cerr, result.profile, result.profileRoof);
  }
  if (!o.dumpOut.empty() && s.executor)
    return writeDump(*s.executor, s.lastGrads, o.dumpOut, s.executor->loss());
  return rt::Status::ok();
}

} // namespace dlc::bench
