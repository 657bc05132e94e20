//===- RunPlan.cpp - run a compiled plan and measure it -------------------===//

#include "RunPlan.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Device.h"
#include "dlc/runtime/Npy.h"
#include "dlc/runtime/Nvml.h"
#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/Parallel.h"
#include "dlc/runtime/cuda/CudaExecutor.h"
#include "dlc/runtime/cuda/LaunchPaths.h"
#include "dlc/runtime/cuda/Nccl.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>
#include <sys/resource.h>
#include <unistd.h>

namespace rt = ::dlc::rt;

namespace dlc::bench {

namespace {

rt::Status failure(const std::string &text) {
  return rt::Status(rt::StatusCode::kInvalidArgument, text);
}

/// mpirun started `launched` processes for a plan of `ranks` ranks.
std::string processCountMessage(int launched, int64_t ranks) {
  return "mpirun started " + std::to_string(launched) + " processes, one per rank, and " +
         "the plan runs " + std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") +
         ": compile it with --gpus " + std::to_string(launched) + ", or run it with " +
         "mpirun -np " + std::to_string(ranks);
}

/// A buffer's bytes as float32 values (half precision widened).
std::vector<float> asFloats(const std::string &bytes, rt::DType dtype) {
  size_t n = bytes.size() / rt::dtypeBytes(dtype);
  std::vector<float> values(n);
  if (rt::cpu::isHalf(dtype))
    rt::cpu::widenToFloat(bytes.data(), dtype, values.data(), n);
  else
    std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

/// Loads DIR/<name>.npy into every buffer of the given roles; a missing file
/// is an error only when `required`.
rt::Status loadBuffers(rt::Executor &exec, const std::string &dir,
                       std::initializer_list<rt::BufferRole> roles,
                       bool required(rt::BufferRole)) {
  for (const rt::PlanBuffer &b : exec.plan().buffers) {
    if (std::find(roles.begin(), roles.end(), b.role) == roles.end())
      continue;
    std::string path = dir + "/" + b.name + ".npy";
    if (!required(b.role) && !std::ifstream(path))
      continue;
    auto array = rt::readNpy(path);
    if (!array.isOk())
      return array.status();
    // Half-precision buffers (--precision fp16) load from float32 files.
    bool widened = rt::cpu::isHalf(b.dtype) && array->dtype == rt::DType::kF32;
    std::vector<int64_t> declared = rt::declaredShape(b);
    if ((array->dtype != b.dtype && !widened) || array->shape != declared) {
      std::string expected, got;
      for (int64_t d : declared)
        expected += std::to_string(d) + " ";
      for (int64_t d : array->shape)
        got += std::to_string(d) + " ";
      return rt::Status(rt::StatusCode::kInvalidArgument,
                        path + ": '" + b.name + "' is " + rt::dtypeName(b.dtype) +
                            " [ " + expected + "], the file holds " +
                            rt::dtypeName(array->dtype) + " [ " + got + "]");
    }
    if (widened) {
      std::string half(b.bytes, '\0');
      rt::cpu::roundFromFloat(reinterpret_cast<const float *>(array->data.data()),
                              b.dtype, half.data(), b.numElements());
      array->data = std::move(half);
    }
    // Files hold the declared order; a filter may be stored OHWI.
    array->data = rt::toStoredOrder(b, array->data, rt::dtypeBytes(b.dtype));
    if (rt::Status s = exec.write(b.name, array->data.data(), array->data.size());
        !s.isOk())
      return s;
  }
  return rt::Status::ok();
}

/// What every repeat starts from: parameters from the seed (or
/// --params-in), and a batch drawn from `dataSeed` (or read from
/// `inputsDir`, "" for none).
/// CPU seconds this process has used (every thread, user and system).
double processCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

/// The share of the host's hardware threads the timed steps kept busy,
/// accumulated over the repeats.
struct HostBusy {
  double cpuSeconds = 0, wallSeconds = 0;
  void add(double cpu, double wall) { cpuSeconds += cpu, wallSeconds += wall; }
  double percent() const {
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return wallSeconds > 0 ? 100.0 * cpuSeconds / (wallSeconds * cores) : -1;
  }
};

/// "45 s", "3 min 05 s", "2 h 05 min".
std::string durationText(double seconds) {
  auto whole = static_cast<int64_t>(seconds + 0.5);
  std::ostringstream os;
  os << std::setfill('0');
  if (whole < 60)
    os << whole << " s";
  else if (whole < 3600)
    os << whole / 60 << " min " << std::setw(2) << whole % 60 << " s";
  else
    os << whole / 3600 << " h " << std::setw(2) << (whole % 3600) / 60 << " min";
  return os.str();
}

/// One line on stderr, rewritten in place as the steps run: the repeat,
/// warm-up or timed step, and the time the run has left at the pace so far.
/// A terminal only (pipes and logs get nothing) and rank 0 only. The CPU
/// backend can take hours over a large model; the estimate is how its user
/// knows to shorten the run.
class Progress {
public:
  explicit Progress(const RunOptions &o)
      : enabled_(isatty(STDERR_FILENO) && rt::launchedRank() == 0), label_(o.progressLabel),
        repeats_(o.repeats), total_(o.repeats * (o.warmup + o.steps)),
        start_(std::chrono::steady_clock::now()), shown_(start_) {}
  ~Progress() { finish(); }
  /// Clears the line, before the report or an error is printed.
  void finish() {
    if (enabled_ && done_)
      std::cerr << "\r\033[K" << std::flush;
    enabled_ = false;
  }
  /// After step `step` (0-based) of `steps` of repeat `repeat`'s warm-up or
  /// timed loop.
  void stepDone(int64_t repeat, bool warmup, int64_t step, int64_t steps) {
    if (!enabled_)
      return;
    ++done_;
    auto now = std::chrono::steady_clock::now();
    // The first step at once, the last, and in between four lines a second.
    if (now - shown_ < std::chrono::milliseconds(250) && done_ != 1 && done_ != total_)
      return;
    shown_ = now;
    double elapsed = std::chrono::duration<double>(now - start_).count();
    std::cerr << "\r\033[K" << label_ << "repeat " << repeat + 1 << "/" << repeats_ << ", "
              << (warmup ? "warm-up step " : "step ") << step + 1 << "/" << steps << ", "
              << durationText(elapsed / done_ * (total_ - done_)) << " left" << std::flush;
  }

private:
  bool enabled_;
  std::string label_;
  int64_t repeats_, total_, done_ = 0;
  std::chrono::steady_clock::time_point start_, shown_;
};

rt::Status prepareRepeat(rt::Executor &exec, const RunOptions &o, uint64_t dataSeed,
                         const std::string &inputsDir) {
  if (rt::Status s = exec.initialize(o.seed); !s.isOk())
    return s;
  if (!o.paramsIn.empty())
    if (rt::Status s = loadBuffers(exec, o.paramsIn,
                                   {rt::BufferRole::kParam, rt::BufferRole::kState},
                                   [](rt::BufferRole role) {
                                     return role == rt::BufferRole::kParam;
                                   });
        !s.isOk())
      return s;
  return inputsDir.empty()
             ? exec.fillSyntheticBatch(dataSeed)
             : loadBuffers(exec, inputsDir, {rt::BufferRole::kInput, rt::BufferRole::kLabel},
                           [](rt::BufferRole) { return true; });
}

/// After kernel `k`: if it is an optimizer update, keeps the gradient it
/// read (unscaled with the status the update read, under loss scaling) as
/// its parameter's, for --dump-out.
void captureGradient(const rt::Executor &exec, size_t k,
                     std::map<std::string, std::vector<float>> &lastGrads) {
  const rt::PlanKernel &kernel = exec.plan().kernels[k];
  if (kernel.op != "sgd_update" && kernel.op != "adamw_update")
    return;
  const rt::PlanBuffer &grad = exec.plan().buffers[kernel.inputs[1]];
  std::vector<float> values = asFloats(exec.bytesOf(kernel.inputs[1]), grad.dtype);
  size_t statusOperand = kernel.op == "sgd_update" ? 3 : 4;
  if (kernel.inputs.size() > statusOperand) {
    float factor =
        asFloats(exec.bytesOf(kernel.inputs[statusOperand]), rt::DType::kF32)[0];
    for (float &v : values)
      v *= factor;
  }
  lastGrads[exec.plan().buffers[kernel.inputs[0]].name] = std::move(values);
}

/// --dump-out: every parameter and state, the loss (`loss`, the mean over
/// the ranks), and each parameter's last gradient, in the declared order.
rt::Status writeDump(const rt::Executor &exec,
                     const std::map<std::string, std::vector<float>> &lastGrads,
                     const std::string &dir, float loss) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return failure("cannot create --dump-out directory " + dir + ": " + ec.message());
  for (const rt::PlanBuffer &b : exec.plan().buffers) {
    bool updated = b.role == rt::BufferRole::kParam || b.role == rt::BufferRole::kState;
    if (!updated && b.role != rt::BufferRole::kLoss)
      continue;
    // Every float buffer is written as float32, half precision widened.
    std::string bytes = exec.bytesOf(&b - exec.plan().buffers.data());
    if (b.role == rt::BufferRole::kLoss && b.dtype == rt::DType::kF32 &&
        bytes.size() == sizeof(float))
      std::memcpy(bytes.data(), &loss, sizeof(float));
    std::vector<float> widened;
    rt::DType dtype = b.dtype;
    if (rt::cpu::isHalf(dtype)) {
      widened = asFloats(bytes, dtype);
      dtype = rt::DType::kF32;
    }
    if (!widened.empty())
      bytes.assign(reinterpret_cast<const char *>(widened.data()),
                   widened.size() * sizeof(float));
    // Written in the order the model declares (a filter stored OHWI is
    // dumped OIHW), so dumps compare across layouts and with PyTorch.
    std::vector<int64_t> declared = rt::declaredShape(b);
    bytes = rt::toDeclaredOrder(b, bytes, rt::dtypeBytes(dtype));
    if (rt::Status s = rt::writeNpy(dir + "/" + b.name + ".npy", dtype, declared,
                                    bytes.data());
        !s.isOk())
      return failure(s.toString());
    auto grad = lastGrads.find(b.name);
    if (grad != lastGrads.end()) {
      std::string gradBytes = rt::toDeclaredOrder(
          b,
          std::string_view(reinterpret_cast<const char *>(grad->second.data()),
                           grad->second.size() * sizeof(float)),
          sizeof(float));
      if (rt::Status s = rt::writeNpy(dir + "/" + b.name + ".grad.npy",
                                      rt::DType::kF32, declared, gradBytes.data());
          !s.isOk())
        return failure(s.toString());
    }
  }
  return rt::Status::ok();
}

/// --profile on the CPU backend: seconds and calls by op, between
/// consecutive kernel ends of the timed steps (the executor's observer).
struct OpProfile {
  std::map<std::string, std::pair<double, int64_t>> byOp;
  bool timing = false;
  std::chrono::steady_clock::time_point lastMark = std::chrono::steady_clock::now();

  void kernelEnded(const std::string &op) {
    auto now = std::chrono::steady_clock::now();
    if (timing) {
      auto &entry = byOp[op];
      entry.first += std::chrono::duration<double>(now - lastMark).count();
      ++entry.second;
    }
    lastMark = std::chrono::steady_clock::now();
  }
  void startTiming() {
    timing = true;
    lastMark = std::chrono::steady_clock::now();
  }
  /// The table, slowest op first, per step of `steps` timed steps.
  void print(int64_t steps, const std::string &whose) const {
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (auto &[op, entry] : byOp) {
      rows.push_back({entry.first, op});
      total += entry.first;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::cerr << "time by kernel op" << whose << " over " << steps << " timed steps:\n";
    for (auto &[seconds, op] : rows)
      std::cerr << "  " << std::left << std::setw(34) << op << std::right << std::setw(10)
                << std::fixed << std::setprecision(3) << seconds * 1000 / steps
                << " ms/step  " << std::setw(5) << std::setprecision(1)
                << 100 * seconds / total << "%  (" << byOp.at(op).second / steps
                << " per step)\n";
  }
};

/// --profile on the CUDA backend: device milliseconds per step by launch
/// kind and path, slowest first, then the ten slowest launches.
rt::Status printLaunchProfile(const rt::cuda::CudaExecutor &gpu) {
  auto ms = gpu.launchMsPerStep();
  if (!ms.isOk())
    return ms.status();
  const std::vector<rt::cuda::LaunchPath> &paths = gpu.launchPaths();
  std::map<std::string, std::pair<double, int64_t>> byKind;
  double total = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    // "launch #5 (elewise_act, group 2, ...)": the kind is the first word.
    const std::string &label = paths[i].label;
    size_t open = label.find('(') + 1;
    std::string kind = label.substr(open, label.find_first_of(",)", open) - open);
    auto &entry = byKind[kind + " [" + paths[i].path + "]"];
    entry.first += (*ms)[i];
    ++entry.second;
    total += (*ms)[i];
  }
  std::vector<std::pair<double, std::string>> rows;
  for (auto &[kind, entry] : byKind)
    rows.push_back({entry.first, kind});
  std::sort(rows.rbegin(), rows.rend());
  std::cerr << "device time by launch kind [path] over " << gpu.profiledSteps()
            << " profiled steps (CUDA events around each launch, no graph): " << std::fixed
            << std::setprecision(3) << total << " ms/step\n";
  for (auto &[value, kind] : rows)
    std::cerr << "  " << std::left << std::setw(44) << kind << std::right << std::setw(10)
              << std::setprecision(3) << value << " ms/step  " << std::setw(5)
              << std::setprecision(1) << (total > 0 ? 100 * value / total : 0.0) << "%  ("
              << byKind[kind].second << " launches)\n";
  std::vector<size_t> order(paths.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*ms)[a] > (*ms)[b]; });
  std::cerr << "slowest launches:\n";
  for (size_t i = 0; i < std::min<size_t>(10, order.size()); ++i)
    std::cerr << "  " << std::setw(9) << std::setprecision(3) << (*ms)[order[i]] << " ms  "
              << paths[order[i]].path << "  " << paths[order[i]].label << "\n";
  return rt::Status::ok();
}

/// FNV-1a over a buffer's bytes: what the ranks compare after the run.
uint64_t digest(const std::string &bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

/// A plan compiled for N data-parallel ranks. Without a launcher, this
/// process runs all N: one executor per rank, each driven by its own
/// thread, averaging through threads of this process on the CPU backend and
/// through NCCL over one GPU each on the CUDA backend. Under mpirun, with N
/// processes, it runs the one rank that is this process: MPI on the CPU
/// backend, NCCL (bootstrapped through MPI) on the CUDA backend. Timed like
/// one rank: the clock reads bracket every rank's timed steps, samples/s
/// counts every rank's batch, and the loss is the ranks' mean.
rt::Status runDataParallel(const rt::Plan &plan, const RunOptions &o, Result &result,
                           int ranks) {
  // The ranks this process runs (`mine[i]` is local rank i's global rank).
  std::vector<int> mine;
  rt::Communicator *process = nullptr;
  rt::ProcessRankGroup node;
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
  const int local = static_cast<int>(mine.size());
  auto rankName = [&](int i) {
    return "rank " + std::to_string(mine[i]) + " of " + std::to_string(ranks);
  };

  // The communicators outlive the executors (declared first, destroyed
  // last): a CUDA graph holding NCCL calls must be destroyed before its
  // communicator, whose ncclCommDestroy waits for such graphs to go.
  std::vector<std::unique_ptr<rt::Communicator>> threadGroup;
  std::vector<std::unique_ptr<rt::cuda::NcclCommunicator>> ncclGroup;
  std::vector<std::unique_ptr<rt::Executor>> execs;
  std::vector<rt::cuda::CudaExecutor *> gpus;
  std::vector<std::unique_ptr<rt::NvmlMonitor>> monitors;
  if (o.backend == "cuda") {
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
      ordinals.push_back(
          (*devices)[!process ? mine[i] : ownGpu ? 0 : node.localRank].ordinal);
    // NCCL before the executors, whose arenas may leave it no memory.
    if (!process) {
      auto group = rt::cuda::createNcclGroup(ordinals);
      if (!group.isOk())
        return failure("--backend cuda: " + group.status().message());
      ncclGroup = std::move(*group);
    } else {
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
      auto comm = rt::cuda::createNcclRank(ordinals[0], ranks, process->rank(),
                                           all.substr(0, id.size()));
      if (!comm.isOk())
        return failure("--backend cuda, " + rankName(0) + ": " + comm.status().message());
      ncclGroup.push_back(std::move(*comm));
    }
    for (int i = 0; i < local; ++i) {
      rt::cuda::CudaOptions options;
      options.cudaGraph = !o.noCudaGraph;
      options.allowTf32 = o.tf32;
      options.device = ordinals[i];
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
    result.launchesByPath = execs[0]->launchesByPath();
    result.device = gpus[0]->deviceName() + " x " + std::to_string(ranks);
    result.tf32 = gpus[0]->options().allowTf32;
    // NVML on every GPU this process drives: the utilization is the mean
    // over the ranks' GPUs, the memory the most any used.
    for (rt::cuda::CudaExecutor *gpu : gpus) {
      auto monitor = rt::NvmlMonitor::open(gpu->pciBusId());
      if (!monitor.isOk()) {
        monitors.clear();
        result.gpuUsageNote = monitor.status().message();
        break;
      }
      monitors.push_back(std::move(*monitor));
    }
  } else {
    if (!process)
      threadGroup = rt::createThreadRankGroup(ranks);
    // Every rank of this process at once, before any allocates.
    if (rt::Status fits = rt::cpu::CpuExecutor::checkHostMemory(plan, local); !fits.isOk())
      return failure(fits.toString());
    for (int i = 0; i < local; ++i) {
      auto created = rt::cpu::CpuExecutor::create(plan);
      if (!created.isOk())
        return failure(created.status().toString());
      (*created)->setCommunicator(process ? process : threadGroup[i].get());
      (*created)->setOverlapAllReduce(!o.noOverlap && !o.profile);
      execs.push_back(std::move(*created));
    }
  }
  if (process)
    result.rankProcesses = ranks;
  result.allReduceOverlap = !o.noOverlap && !o.profile;
  // Rank 0's gradients and state are the ones --dump-out writes, and its
  // kernels the ones --profile times (the CUDA backend with its own events).
  bool holdsRankZero = mine[0] == 0;
  std::map<std::string, std::vector<float>> lastGrads;
  OpProfile profile;
  bool observeProfile = o.profile && holdsRankZero && gpus.empty();
  if ((!o.dumpOut.empty() || observeProfile) && holdsRankZero)
    execs[0]->setKernelObserver([&](size_t k) {
      if (!o.dumpOut.empty())
        captureGradient(*execs[0], k, lastGrads);
      if (observeProfile)
        profile.kernelEnded(execs[0]->plan().kernels[k].op);
    });
  bool profileGpu = o.profile && holdsRankZero && !gpus.empty();

  // Runs body(i) on every local rank's thread (with its GPU current). The
  // first rank to fail aborts the group, so that the others leave (or
  // never enter) their collectives instead of waiting for it; its error is
  // the one reported. A process group is aborted by the program, after it
  // printed the error (leaveProcessRankGroup).
  auto onEveryRank = [&](const std::function<rt::Status(int)> &body) {
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
  };
  // Every rank's value of a per-rank float, in rank order.
  auto gather = [&](std::vector<float> values) -> rt::StatusOr<std::vector<float>> {
    if (!process)
      return values;
    std::vector<float> all(ranks);
    if (rt::Status s = process->allGather(values.data(), sizeof(float), all.data());
        !s.isOk())
      return failure(rankName(0) + ": " + s.message());
    return all;
  };
  auto mean = [&](const std::vector<float> &values) {
    double sum = 0;
    for (float v : values)
      sum += v;
    return static_cast<float>(sum / values.size());
  };

  std::vector<float> first(local), last(ranks);
  Progress progress(o); // rank 0's steps
  HostBusy busy;        // this process's
  for (int64_t repeat = 0; repeat < o.repeats; ++repeat) {
    rt::Status prepared = onEveryRank([&](int i) -> rt::Status {
      rt::Executor &exec = *execs[i];
      int r = mine[i];
      // Every rank starts from the same parameters (DDP broadcasts rank
      // 0's), each with its own slice of the global batch.
      if (rt::Status s = prepareRepeat(
              exec, o, o.seed + 1 + static_cast<uint64_t>(r) * 1000003,
              o.inputsIn.empty() ? "" : o.inputsIn + "/rank" + std::to_string(r));
          !s.isOk())
        return s;
      for (int64_t step = 0; step < o.warmup; ++step) {
        if (rt::Status s = exec.step(); !s.isOk())
          return s;
        if (step == 0)
          first[i] = exec.loss();
        if (r == 0)
          progress.stepDone(repeat, /*warmup=*/true, step, o.warmup);
      }
      return exec.synchronize();
    });
    if (!prepared.isOk())
      return prepared;
    // Processes start their clocks together (any collective will do).
    if (process)
      if (auto ready = gather({0.0f}); !ready.isOk())
        return ready.status();
    for (auto &monitor : monitors)
      monitor->start();
    if (profileGpu)
      gpus[0]->setProfiling(true);
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
    profile.timing = false;
    if (profileGpu)
      gpus[0]->setProfiling(false);
    std::vector<rt::GpuUsage> usage;
    for (auto &monitor : monitors)
      usage.push_back(monitor->stop());
    if (!stepped.isOk())
      return stepped;
    // The mean utilization over every rank's GPU (processes exchange
    // theirs; every process takes part, with or without NVML), and the most
    // memory any used.
    if (!gpus.empty()) {
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
    }
    // The step is as slow as the slowest rank.
    auto allFirst = gather(first), allLast = gather(lastLocal),
         allSeconds = gather({seconds});
    for (auto *gathered : {&allFirst, &allLast, &allSeconds})
      if (!gathered->isOk())
        return gathered->status();
    seconds = *std::max_element(allSeconds->begin(), allSeconds->end());
    last = *allLast;
    RepeatResult timed;
    timed.lossFirst = mean(*allFirst);
    timed.lossLast = mean(last);
    timed.samplesPerSec = static_cast<double>(result.batch) * ranks * o.steps / seconds;
    timed.stepMs = seconds * 1000 / o.steps;
    result.repeatResults.push_back(timed);
    if (!gpus.empty()) {
      result.cudaGraph = gpus[0]->replaysCudaGraph();
      result.cudaGraphNote = gpus[0]->cudaGraphNote();
    }
  }
  progress.finish();
  result.hostCpuUtilization = busy.percent();

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
  std::string whose = " on rank 0 of " + std::to_string(ranks) + " (all-reduces in place)";
  if (profileGpu) {
    std::cerr << "--profile" << whose << ":\n";
    if (rt::Status s = printLaunchProfile(*gpus[0]); !s.isOk())
      return failure(s.toString());
  }
  if (observeProfile)
    profile.print(o.repeats * o.steps, whose);
  if (!o.dumpOut.empty() && holdsRankZero)
    return writeDump(*execs[0], lastGrads, o.dumpOut, mean(last));
  return rt::Status::ok();
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
    if (k.op == "sgd_update" || k.op == "adamw_update") {
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
    if (k.op == "all_reduce") {
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
    auto created = rt::cpu::CpuExecutor::create(plan);
    if (!created.isOk())
      return failure(created.status().toString());
    executor = std::move(*created);
  }

  Progress progress(o);
  HostBusy busy;
  rt::Executor &exec = *executor;
  // Gradients die inside the step; capture each as its update reads it.
  // Under loss scaling they are unscaled with the status the update read.
  std::map<std::string, std::vector<float>> lastGrads;
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
    return writeDump(exec, lastGrads, o.dumpOut, exec.loss());
  return rt::Status::ok();
}

} // namespace dlc::bench
