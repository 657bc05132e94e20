//===- RunRanks.cpp - a plan of N data-parallel ranks, timed as one -------===//
//
// Without a launcher, this process runs all N ranks: one executor per rank,
// each driven by its own thread, averaging through threads of this process
// on the CPU backend and through NCCL over one GPU each on the CUDA
// backend. Under mpirun, with N processes, it runs the one rank that is
// this process: MPI on the CPU backend, NCCL (bootstrapped through MPI) on
// the CUDA backend. Timed like one rank: the clock reads bracket every
// rank's timed steps, samples/s counts every rank's batch, and the loss is
// the ranks' mean.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "HostLoad.h"
#include "RunSteps.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Device.h"
#include "dlc/runtime/Nvml.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cuda/CudaExecutor.h"
#include "dlc/runtime/cuda/Nccl.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>

namespace dlc::bench {

std::string processCountMessage(int launched, int64_t ranks) {
  return "mpirun started " + std::to_string(launched) + " processes, one per rank, and " +
         "the plan runs " + std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") +
         ": compile it with --gpus " + std::to_string(launched) + ", or run it with " +
         "mpirun -np " + std::to_string(ranks);
}

namespace {

/// FNV-1a over a buffer's bytes: what the ranks compare after the run.
uint64_t digest(const std::string &bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

float mean(const std::vector<float> &values) {
  double sum = 0;
  for (float v : values)
    sum += v;
  return static_cast<float>(sum / values.size());
}

/// One data-parallel run: the ranks this process drives, their executors
/// and communicators, and what the repeats gather.
class RankRun {
public:
  RankRun(const rt::Plan &plan, const RunOptions &o, Result &result, int ranks)
      : plan(plan), o(o), result(result), ranks(ranks) {}

  rt::Status run();

private:
  /// Which ranks this process runs: all of them, or under mpirun its own.
  rt::Status joinRanks();
  /// A GPU per local rank, NCCL over them, an executor each, NVML.
  rt::Status createCudaRanks();
  /// Rank r's GPU ordinal for each local rank.
  rt::StatusOr<std::vector<int>> chooseGpus();
  rt::Status createNccl(const std::vector<int> &ordinals);
  /// NVML on every GPU this process drives, or gpuUsageNote says why not.
  void openMonitors();
  rt::Status createCpuRanks();
  /// --dump-out's gradients and --profile's kernel times, from rank 0.
  void observeRankZero();
  /// One repeat: warm-up, then the timed steps on every rank.
  rt::Status runRepeat(int64_t repeat, Progress &progress, HostBusy &busy);
  /// The repeat's utilization and memory over every rank's GPU.
  rt::Status addGpuUsage(const std::vector<rt::GpuUsage> &usage);
  /// Fails when the ranks' parameters differ after the run.
  rt::Status checkRanksAgree();
  /// --profile's tables and --dump-out's files.
  rt::Status report();

  /// Runs body(i) on every local rank's thread (with its GPU current). The
  /// first rank to fail aborts the group, so that the others leave (or
  /// never enter) their collectives instead of waiting for it; its error is
  /// the one reported. A process group is aborted by the program, after it
  /// printed the error (leaveProcessRankGroup).
  rt::Status onEveryRank(const std::function<rt::Status(int)> &body);
  /// Every rank's value of a per-rank float, in rank order.
  rt::StatusOr<std::vector<float>> gather(std::vector<float> values);
  std::string rankName(int i) const {
    return "rank " + std::to_string(mine[i]) + " of " + std::to_string(ranks);
  }

  const rt::Plan &plan;
  const RunOptions &o;
  Result &result;
  const int ranks;
  /// The ranks this process runs (`mine[i]` is local rank i's global rank).
  std::vector<int> mine;
  int local = 0;
  /// Under mpirun: this process's rank in the job, and its place on the node.
  rt::Communicator *process = nullptr;
  rt::ProcessRankGroup node;
  // The communicators outlive the executors (declared first, destroyed
  // last): a CUDA graph holding NCCL calls must be destroyed before its
  // communicator, whose ncclCommDestroy waits for such graphs to go.
  std::vector<std::unique_ptr<rt::Communicator>> threadGroup;
  std::vector<std::unique_ptr<rt::cuda::NcclCommunicator>> ncclGroup;
  std::vector<std::unique_ptr<rt::Executor>> execs;
  std::vector<rt::cuda::CudaExecutor *> gpus;
  std::vector<std::unique_ptr<rt::NvmlMonitor>> monitors;
  // Rank 0's gradients and state are the ones --dump-out writes, and its
  // kernels the ones --profile times (the CUDA backend with its own events).
  bool holdsRankZero = false, observeProfile = false, profileGpu = false;
  GradientCapture lastGrads;
  OpProfile profile;
  /// Each local rank's loss after its first step; every rank's after its
  /// last.
  std::vector<float> first, last;
  /// --loss-every: each local rank's losses of the first repeat, meaned
  /// over every rank after its timed steps.
  std::vector<std::vector<LossPoint>> trajectory;
  void recordLoss(int i, int64_t repeat, int64_t step) {
    if (repeat == 0 && o.lossEvery > 0 && step % o.lossEvery == 0)
      trajectory[i].push_back({step, execs[i]->loss()});
  }
};

rt::Status RankRun::run() {
  DLC_RETURN_IF_ERROR(joinRanks());
  DLC_RETURN_IF_ERROR(o.backend == "cuda" ? createCudaRanks() : createCpuRanks());
  if (process)
    result.rankProcesses = ranks;
  result.allReduceOverlap = !o.noOverlap && !o.profile;
  observeRankZero();
  first.assign(local, 0);
  last.assign(ranks, 0);
  trajectory.assign(local, {});
  result.lossEvery = o.lossEvery;
  Progress progress(o, stepSecondsAtLeast(plan, o, ranks)); // rank 0's steps
  HostBusy busy;        // this process's
  for (int64_t repeat = 0; repeat < o.repeats; ++repeat)
    DLC_RETURN_IF_ERROR(runRepeat(repeat, progress, busy));
  progress.finish();
  result.hostCpuUtilization = busy.percent();
  DLC_RETURN_IF_ERROR(checkRanksAgree());
  return report();
}

rt::Status RankRun::joinRanks() {
  if (int launched = rt::launchedProcesses(); launched > 1) {
    if (launched != ranks)
      return failure(processCountMessage(launched, ranks));
    auto group = rt::joinProcessRankGroup();
    if (!group.isOk())
      return failure("mpirun started " + std::to_string(launched) +
                     " processes: " + group.status().message());
    node = *group;
    process = node.communicator;
    mine = {process->rank()};
  } else {
    for (int r = 0; r < ranks; ++r)
      mine.push_back(r);
  }
  local = static_cast<int>(mine.size());
  return rt::Status::ok();
}

rt::Status RankRun::createCudaRanks() {
  auto ordinals = chooseGpus();
  if (!ordinals.isOk())
    return ordinals.status();
  // NCCL before the executors, whose arenas may leave it no memory.
  DLC_RETURN_IF_ERROR(createNccl(*ordinals));
  for (int i = 0; i < local; ++i) {
    rt::cuda::CudaOptions options;
    options.cudaGraph = !o.noCudaGraph;
    options.allowTf32 = o.tf32;
    options.device = (*ordinals)[i];
    options.rank = mine[i];
    // --profile times each launch in its place, the all-reduces too.
    options.overlapAllReduce = !o.noOverlap && !o.profile;
    auto created = rt::cuda::CudaExecutor::create(plan, options);
    if (!created.isOk())
      return failure("--backend cuda, " + rankName(i) + ": " + created.status().toString());
    gpus.push_back(created->get());
    execs.push_back(std::move(*created));
  }
  for (int i = 0; i < local; ++i)
    gpus[i]->setCommunicator(ncclGroup[i].get());
  printRefusedAtRunTime(*gpus[0]);
  result.launchesByPath = execs[0]->launchesByPath();
  result.launchesPerStep = static_cast<int64_t>(gpus[0]->launchPaths().size());
  result.device = gpus[0]->deviceName() + " x " + std::to_string(ranks);
  result.tf32 = gpus[0]->options().allowTf32;
  openMonitors();
  return rt::Status::ok();
}

rt::StatusOr<std::vector<int>> RankRun::chooseGpus() {
  auto devices = rt::listCudaDevices();
  if (!devices.isOk())
    return failure("--backend cuda: " + devices.status().message());
  // Threads: rank r on GPU r. Processes: the node's k-th process on its
  // k-th GPU, or on the one GPU the launcher left it (CUDA_VISIBLE_DEVICES
  // per process, as srun --gpus-per-task sets it).
  bool ownGpu = process && devices->size() == 1 && std::getenv("CUDA_VISIBLE_DEVICES");
  int needed = process ? (ownGpu ? 1 : node.localRanks) : ranks;
  if (static_cast<int>(devices->size()) < needed)
    return failure("--backend cuda: " +
                   (process ? "mpirun started " + std::to_string(needed) +
                                  " processes on this node, one per GPU,"
                            : "the plan runs " + std::to_string(ranks) +
                                  " ranks, one per GPU,") +
                   " and this machine has " + std::to_string(devices->size()) + " GPU" +
                   (devices->size() == 1 ? "" : "s"));
  std::vector<int> ordinals;
  for (int i = 0; i < local; ++i)
    ordinals.push_back((*devices)[!process ? mine[i] : ownGpu ? 0 : node.localRank].ordinal);
  return ordinals;
}

rt::Status RankRun::createNccl(const std::vector<int> &ordinals) {
  if (!process) {
    auto group = rt::cuda::createNcclGroup(ordinals);
    if (!group.isOk())
      return failure("--backend cuda: " + group.status().message());
    ncclGroup = std::move(*group);
    return rt::Status::ok();
  }
  // Rank 0 makes NCCL's unique id, and MPI hands it to every rank.
  std::string id(128, '\0');
  if (process->rank() == 0) {
    auto made = rt::cuda::ncclUniqueId();
    if (!made.isOk())
      return failure("--backend cuda, " + rankName(0) + ": " + made.status().message());
    id = *made;
  }
  std::string all(id.size() * ranks, '\0');
  if (rt::Status s = process->allGather(id.data(), id.size(), all.data()); !s.isOk())
    return failure(rankName(0) + ": " + s.message());
  if (rt::Status s = rt::selectCudaDevice(ordinals[0]); !s.isOk())
    return failure("--backend cuda, " + rankName(0) + ": " + s.message());
  auto comm =
      rt::cuda::createNcclRank(ordinals[0], ranks, process->rank(), all.substr(0, id.size()));
  if (!comm.isOk())
    return failure("--backend cuda, " + rankName(0) + ": " + comm.status().message());
  ncclGroup.push_back(std::move(*comm));
  return rt::Status::ok();
}

void RankRun::openMonitors() {
  // The utilization is the mean over the ranks' GPUs, the memory the most
  // any used.
  for (rt::cuda::CudaExecutor *gpu : gpus) {
    auto monitor = rt::NvmlMonitor::open(gpu->pciBusId());
    if (!monitor.isOk()) {
      monitors.clear();
      result.gpuUsageNote = monitor.status().message();
      return;
    }
    monitors.push_back(std::move(*monitor));
  }
}

rt::Status RankRun::createCpuRanks() {
  if (!process)
    threadGroup = rt::createThreadRankGroup(ranks);
  // Every rank of this process at once, before any allocates.
  if (rt::Status fits = rt::cpu::CpuExecutor::checkHostMemory(plan, local); !fits.isOk())
    return failure(fits.toString());
  for (int i = 0; i < local; ++i) {
    auto created = rt::cpu::CpuExecutor::create(plan, cpuExecutorOptions(o.backend));
    if (!created.isOk())
      return failure(created.status().toString());
    (*created)->setCommunicator(process ? process : threadGroup[i].get());
    (*created)->setOverlapAllReduce(!o.noOverlap && !o.profile);
    result.launchesPerStep = (*created)->launchesPerStep(); // every rank's alike
    execs.push_back(std::move(*created));
  }
  return rt::Status::ok();
}

void RankRun::observeRankZero() {
  holdsRankZero = mine[0] == 0;
  observeProfile = o.profile && holdsRankZero && gpus.empty();
  profileGpu = o.profile && holdsRankZero && !gpus.empty();
  lastGrads.relu = o.dumpRelu;
  if ((!o.dumpOut.empty() || observeProfile) && holdsRankZero)
    execs[0]->setKernelObserver(
        [this](size_t k) {
          if (!o.dumpOut.empty())
            captureGradient(*execs[0], k, lastGrads);
          if (observeProfile)
            profile.kernelEnded(k, execs[0]->plan().kernels[k].op);
        },
        /*readsBuffers=*/!o.dumpOut.empty());
}

rt::Status RankRun::onEveryRank(const std::function<rt::Status(int)> &body) {
  std::vector<rt::Status> status(local);
  std::atomic<int> firstFailed{-1};
  std::vector<std::thread> threads;
  for (int i = 0; i < local; ++i)
    threads.emplace_back([&, i] {
      status[i] = gpus.empty() ? rt::Status::ok() : gpus[i]->makeCurrent();
      if (status[i].isOk())
        status[i] = body(i);
      if (status[i].isOk())
        return;
      int none = -1;
      if (!firstFailed.compare_exchange_strong(none, i) || process)
        return;
      if (gpus.empty())
        threadGroup[i]->abort(status[i].message());
      else
        for (auto &comm : ncclGroup)
          comm->abort();
    });
  for (std::thread &t : threads)
    t.join();
  if (int i = firstFailed.load(); i >= 0)
    return failure(rankName(i) + ": " + status[i].toString());
  return rt::Status::ok();
}

rt::StatusOr<std::vector<float>> RankRun::gather(std::vector<float> values) {
  if (!process)
    return values;
  std::vector<float> all(ranks);
  if (rt::Status s = process->allGather(values.data(), sizeof(float), all.data()); !s.isOk())
    return failure(rankName(0) + ": " + s.message());
  return all;
}

rt::Status RankRun::runRepeat(int64_t repeat, Progress &progress, HostBusy &busy) {
  DLC_RETURN_IF_ERROR(onEveryRank([&](int i) -> rt::Status {
    rt::Executor &exec = *execs[i];
    int r = mine[i];
    // Every rank starts from the same parameters (DDP broadcasts rank
    // 0's), each with its own slice of the global batch.
    if (rt::Status s = prepareRepeat(
            exec, o, o.seed + 1 + static_cast<uint64_t>(r) * 1000003,
            o.inputsIn.empty() ? "" : o.inputsIn + "/rank" + std::to_string(r));
        !s.isOk())
      return s;
    if (r == 0)
      progress.phase(repeat, /*warmup=*/true, o.warmup);
    for (int64_t step = 0; step < o.warmup; ++step) {
      if (rt::Status s = exec.step(); !s.isOk())
        return s;
      if (step == 0)
        first[i] = exec.loss();
      recordLoss(i, repeat, step + 1);
      if (r == 0)
        progress.stepDone(repeat, /*warmup=*/true, step, o.warmup);
    }
    return exec.synchronize();
  }));
  // Processes start their clocks together (any collective will do).
  if (process)
    if (auto ready = gather({0.0f}); !ready.isOk())
      return ready.status();
  if (mine[0] == 0)
    progress.phase(repeat, /*warmup=*/false, o.steps);
  for (auto &monitor : monitors)
    monitor->start();
  if (profileGpu)
    gpus[0]->setProfiling(true);
  HostLoadMeter load;
  load.start();
  auto start = std::chrono::steady_clock::now();
  double cpuStart = processCpuSeconds();
  profile.startTiming();
  std::vector<float> lastLocal(local);
  rt::Status stepped = onEveryRank([&](int i) -> rt::Status {
    for (int64_t step = 0; step < o.steps; ++step) {
      if (rt::Status s = execs[i]->step(); !s.isOk())
        return s;
      if (o.warmup == 0 && step == 0)
        first[i] = execs[i]->loss();
      recordLoss(i, repeat, o.warmup + step + 1);
      if (mine[i] == 0)
        progress.stepDone(repeat, /*warmup=*/false, step, o.steps);
    }
    // A device backend returns before its last steps finish.
    if (rt::Status s = execs[i]->synchronize(); !s.isOk())
      return s;
    lastLocal[i] = execs[i]->loss();
    return rt::Status::ok();
  });
  float seconds =
      std::chrono::duration<float>(std::chrono::steady_clock::now() - start).count();
  busy.add(processCpuSeconds() - cpuStart, seconds);
  double hostLoad = load.stop();
  profile.timing = false;
  if (profileGpu)
    gpus[0]->setProfiling(false);
  std::vector<rt::GpuUsage> usage;
  for (auto &monitor : monitors)
    usage.push_back(monitor->stop());
  if (!stepped.isOk())
    return stepped;
  if (!gpus.empty())
    DLC_RETURN_IF_ERROR(addGpuUsage(usage));
  // The step is as slow as the slowest rank.
  auto allFirst = gather(first), allLast = gather(lastLocal), allSeconds = gather({seconds});
  for (auto *gathered : {&allFirst, &allLast, &allSeconds})
    if (!gathered->isOk())
      return gathered->status();
  seconds = *std::max_element(allSeconds->begin(), allSeconds->end());
  last = *allLast;
  RepeatResult timed;
  timed.lossFirst = mean(*allFirst);
  timed.lossLast = mean(last);
  // Every rank recorded the same steps; the trajectory is their mean loss.
  for (size_t k = 0; repeat == 0 && k < trajectory[0].size(); ++k) {
    std::vector<float> losses;
    for (const std::vector<LossPoint> &points : trajectory)
      losses.push_back(points[k].loss);
    auto all = gather(losses);
    if (!all.isOk())
      return all.status();
    result.lossTrajectory.push_back({trajectory[0][k].step, mean(*all)});
  }
  timed.samplesPerSec = static_cast<double>(result.batch) * ranks * o.steps / seconds;
  timed.stepMs = seconds * 1000 / o.steps;
  timed.hostLoadPercent = hostLoad;
  result.repeatResults.push_back(timed);
  if (!gpus.empty()) {
    result.cudaGraph = gpus[0]->replaysCudaGraph();
    result.cudaGraphNote = gpus[0]->cudaGraphNote();
  }
  return rt::Status::ok();
}

rt::Status RankRun::addGpuUsage(const std::vector<rt::GpuUsage> &usage) {
  // Processes exchange theirs; every process takes part, with or without
  // NVML.
  float utilization = 0, memory = 0, samples = 0;
  for (const rt::GpuUsage &u : usage) {
    utilization += static_cast<float>(u.gpuUtilizationPercent) / usage.size();
    memory = std::max(memory, static_cast<float>(u.memoryUsedBytes));
    samples += static_cast<float>(u.samples);
  }
  auto allUtilization = gather({utilization}), allMemory = gather({memory}),
       allSamples = gather({samples});
  for (auto *gathered : {&allUtilization, &allMemory, &allSamples})
    if (!gathered->isOk())
      return gathered->status();
  double sum = 0, weight = 0;
  for (size_t r = 0; r < allSamples->size(); ++r)
    if ((*allSamples)[r] > 0) {
      sum += (*allUtilization)[r] * (*allSamples)[r];
      weight += (*allSamples)[r];
      result.gpuMemoryUsedBytes =
          std::max(result.gpuMemoryUsedBytes, static_cast<int64_t>((*allMemory)[r]));
    }
  if (weight > 0) {
    result.gpuUtilization =
        (result.gpuUtilization * result.gpuSamples + sum) / (result.gpuSamples + weight);
    result.gpuSamples += static_cast<int64_t>(weight);
    result.gpuUsageNote.clear();
  }
  return rt::Status::ok();
}

rt::Status RankRun::checkRanksAgree() {
  // The ranks applied the same averaged gradients to the same parameters:
  // any difference is a bug (a gradient left out of the all-reduce), not
  // rounding. Batch-norm running statistics stay each rank's own. Ranks
  // compare digests of their buffers, which processes exchange.
  std::vector<int32_t> compared;
  for (const rt::PlanBuffer &b : plan.buffers)
    if (b.role == rt::BufferRole::kParam || b.role == rt::BufferRole::kOptimizerState)
      compared.push_back(static_cast<int32_t>(&b - plan.buffers.data()));
  std::vector<uint64_t> digests(compared.size() * ranks);
  for (int i = 0; i < local; ++i) {
    if (!gpus.empty())
      if (rt::Status s = gpus[i]->makeCurrent(); !s.isOk())
        return failure(rankName(i) + ": " + s.toString());
    for (size_t k = 0; k < compared.size(); ++k)
      digests[mine[i] * compared.size() + k] = digest(execs[i]->bytesOf(compared[k]));
  }
  if (process) {
    std::vector<uint64_t> own(digests.begin() + mine[0] * compared.size(),
                              digests.begin() + (mine[0] + 1) * compared.size());
    if (rt::Status s = process->allGather(own.data(), own.size() * sizeof(uint64_t),
                                          digests.data());
        !s.isOk())
      return failure(rankName(0) + ": " + s.message());
  }
  for (int r = 1; r < ranks; ++r)
    for (size_t k = 0; k < compared.size(); ++k)
      if (digests[r * compared.size() + k] != digests[k])
        return failure("the ranks diverged: '" + plan.buffers[compared[k]].name +
                       "' differs between rank 0 and rank " + std::to_string(r) +
                       " after the run");
  if (!gpus.empty())
    (void)gpus[0]->makeCurrent();
  return rt::Status::ok();
}

rt::Status RankRun::report() {
  std::string whose = " on rank 0 of " + std::to_string(ranks) + " (all-reduces in place)";
  if (profileGpu) {
    std::cerr << "--profile" << whose << ":\n";
    ModelFigures model = modelFiguresFor(plan, o);
    if (rt::Status s = printLaunchProfile(*gpus[0], model); !s.isOk())
      return failure(s.toString());
    if (auto ms = gpus[0]->launchMsPerStep(); ms.isOk())
      result.profile = cudaProfile(plan, gpus[0]->launchPaths(), *ms, model.msPerLaunch);
  }
  if (observeProfile) {
    profile.print(o.repeats * o.steps, whose);
    result.profile = cpuProfile(plan, profile.byKernel, o.repeats * o.steps, o.backend);
  }
  if (!o.dumpOut.empty() && holdsRankZero)
    return writeDump(*execs[0], lastGrads, o.dumpOut, mean(last));
  return rt::Status::ok();
}

} // namespace

rt::Status runDataParallel(const rt::Plan &plan, const RunOptions &o, Result &result,
                           int ranks) {
  return RankRun(plan, o, result, ranks).run();
}

} // namespace dlc::bench
