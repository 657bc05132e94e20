//===- CudaExecutor.cpp - run a plan on one CUDA GPU ----------------------===//
//
// Everything a step needs is decided and prepared in create(): each
// launch's path, the generated kernels' cubins (loaded once), the cuBLASLt
// and cuDNN descriptors and algorithms, then ONE device allocation holding
// the plan's arena, the library workspace sized to the largest need, the
// optimizer kernels' segment tables and the hand-written kernels' operand
// tables, and the step counter. Each launch is a step of its path's type
// (steps/LaunchStep.h, one file per path), prepared against arena offsets
// and bound to addresses once that allocation exists. step() only
// enqueues, or replays the step's CUDA graph. The host fallback runs through a CPU executor
// over a host mirror of the arena, so the CPU backend's kernels,
// initializers and half-precision handling are used as they are, never
// copied.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cuda/CudaExecutor.h"

#include "dlc/runtime/Collective.h"

#include "dlc/runtime/cuda/HandKernels.h"
#include "dlc/runtime/cuda/Nccl.h"
#include "steps/LaunchStep.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace dlc::rt::cuda {

namespace {

/// Advances the device's step counter, and the dropout counter beside it,
/// at the end of every step (inside the graph when there is one).
const char *const kAdvanceStepSource = R"src(
extern "C" __global__ void dlc_advance_step(long long *step) {
  step[0] += 1;
  step[1] += 1;
}
)src";

bool envFlag(const char *name) {
  const char *value = std::getenv(name);
  return value && std::string(value) == "1";
}

} // namespace

/// The executor: what its steps share (StepContext), the steps, the
/// all-reduce stream and its schedule, the CUDA graph and the profile.
struct CudaExecutor::Impl : StepContext {
  std::string deviceName;
  /// Overlapped all-reduces (CudaOptions::overlapAllReduce): their stream,
  /// and per launch the events that fork it from the step's stream and
  /// join it back (all_reduce launches only), the all-reduce launches whose
  /// results launch i waits for, and those the step's end waits for.
  cudaStream_t commStream = nullptr;
  std::vector<cudaEvent_t> forked, joined;
  std::vector<std::vector<size_t>> joinBefore;
  std::vector<size_t> joinAtEnd;
  /// The one device allocation's size (StepContext::arena at its start).
  size_t allocationBytes = 0;
  cudaEvent_t start = nullptr, stop = nullptr;
  bool stepRecorded = false;
  long long dropoutCounterStart = 0; // what initialize() sets the dropout counter to
  /// Advances the step counter and the dropout counter (kAdvanceStepSource).
  cudaKernel_t advanceStep = nullptr;
  /// Step 0: the step counter at 0, the dropout counter at this rank's
  /// offset (two's complement: the kernels read it back as unsigned).
  Status resetCounters(const std::string &where) {
    DLC_RETURN_IF_ERROR(cudaCheck(cudaMemsetAsync(deviceStep, 0, sizeof(long long), stream),
                                  "cudaMemsetAsync", where + ", the step counter"));
    dropoutCounterStart = static_cast<long long>(dropoutStepOffset(options.rank));
    return cudaCheck(cudaMemcpyAsync(deviceDropoutCounter, &dropoutCounterStart,
                                     sizeof(long long), cudaMemcpyHostToDevice, stream),
                     "cudaMemcpyAsync", where + ", the dropout counter");
  }
  /// The captured step; graphNote says why there is none. `warmedUp`: a
  /// step has run launch by launch since create(), so every library call
  /// and kernel has done its lazy, capture-unsafe setup before capture.
  bool graphUsable = false, graphReplayed = false, warmedUp = false;
  std::string graphNote;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t graphExec = nullptr;
  /// Per-launch profiling: marks[i] before launch i, marks.back() after.
  bool profiling = false;
  std::vector<cudaEvent_t> marks;
  std::vector<double> launchMs;
  int64_t profiledSteps = 0;
  /// Every launch in plan order, on its path.
  std::vector<std::unique_ptr<LaunchStep>> launches;
  std::vector<LaunchPath> paths;
  /// Launches a library refused when the executor was created, each with
  /// the path that took it instead and why.
  std::vector<std::string> refusedAtRunTime;
  std::function<void(size_t)> observer;

  ~Impl();

  // create(), step by step.
  /// The device `requested.device` names, made current, and the stream.
  Status openDevice(const std::vector<CudaDeviceInfo> &devices, const CudaOptions &requested);
  /// kResourceExhausted when the plan's arena alone does not fit.
  Status checkArenaFits(const Plan &plan) const;
  Status createHostMirror(Plan plan);
  /// Every launch on its path (prepareLaunch), the step counter's kernel,
  /// the allocation and the all-reduce schedule; then `paths`.
  Status prepareLaunches();
  /// NVRTC on every core for the routed launches' kernels, into the disk
  /// cache that prepareLaunch then loads from.
  void precompile(const std::vector<DeviceLaunch> &routed, const std::vector<Launch> &all,
                  const KernelCompiler &compiler) const;
  /// Whether steps may replay a captured graph; graphNote says why not.
  void decideGraph();

  /// One launch on the path LaunchPaths chose, or on the next one that
  /// takes it; `reason` gathers why it is not on a faster one.
  Status prepareLaunch(const DeviceLaunch &device, const std::vector<Launch> &all,
                       KernelCompiler &compiler, cudnn::AlgorithmCache &algorithms,
                       size_t &tableBytes);
  /// The one allocation, then every launch's addresses and tables.
  Status allocateAndBind(size_t tableBytes);
  /// Where each all_reduce's results are first needed (joinBefore,
  /// joinAtEnd), with its stream and events; nothing without all_reduce.
  Status scheduleAllReduces();
  /// Launch i as the step enqueues it: in place, or with `overlap` an
  /// all_reduce forked onto commStream, after joining the all-reduces
  /// whose results launch i touches.
  Status enqueueLaunch(size_t i, bool overlap);
  /// Joins the all-reduces nothing in the step waited for.
  Status joinAtStepEnd(bool overlap);
  /// Whether this step overlaps its all-reduces.
  bool overlapping() const {
    return options.overlapAllReduce && commStream && communicator && !profiling &&
           !options.syncEachLaunch && !observer;
  }
  /// Every launch and the step's advance, one by one (observer, profiling
  /// and per-launch synchronization happen here).
  Status enqueueEagerly(const std::string &at);
  /// Captures the launches and the advance into graphExec.
  Status captureGraph();
};

CudaExecutor::Impl::~Impl() {
  // Teardown cannot report; every resource is released whatever fails.
  if (stream)
    (void)cudaStreamSynchronize(stream);
  if (commStream)
    (void)cudaStreamSynchronize(commStream);
  for (const std::vector<cudaEvent_t> *events : {&forked, &joined})
    for (cudaEvent_t event : *events)
      if (event)
        (void)cudaEventDestroy(event);
  if (graphExec)
    (void)cudaGraphExecDestroy(graphExec);
  if (graph)
    (void)cudaGraphDestroy(graph);
  for (cudaEvent_t mark : marks)
    (void)cudaEventDestroy(mark);
  launches.clear(); // descriptors before their library handles
  for (auto &[name, library] : libraries)
    (void)cudaLibraryUnload(library);
  if (lt)
    cublasLtDestroy(lt);
  if (dnn)
    cudnnDestroy(dnn);
  if (start)
    (void)cudaEventDestroy(start);
  if (stop)
    (void)cudaEventDestroy(stop);
  (void)cudaFree(arena); // the workspace, tables and step counter with it
  if (stream)
    (void)cudaStreamDestroy(stream);
  if (commStream)
    (void)cudaStreamDestroy(commStream);
}

//===----------------------------------------------------------------------===//
// create: device, arena, paths
//===----------------------------------------------------------------------===//

CudaExecutor::CudaExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaExecutor::~CudaExecutor() = default;

StatusOr<std::unique_ptr<CudaExecutor>> CudaExecutor::create(Plan plan, CudaOptions options) {
  if (Status status = validatePlan(plan); !status.isOk())
    return status;
  auto devices = listCudaDevices();
  if (!devices.isOk())
    return devices.status();
  auto impl = std::make_unique<Impl>();
  DLC_RETURN_IF_ERROR(impl->openDevice(*devices, options));
  DLC_RETURN_IF_ERROR(impl->checkArenaFits(plan));
  DLC_RETURN_IF_ERROR(impl->createHostMirror(std::move(plan)));
  DLC_RETURN_IF_ERROR(cudaCheck(cudaEventCreate(&impl->start), "cudaEventCreate"));
  DLC_RETURN_IF_ERROR(cudaCheck(cudaEventCreate(&impl->stop), "cudaEventCreate"));
  DLC_RETURN_IF_ERROR(impl->prepareLaunches());
  impl->decideGraph();
  return std::unique_ptr<CudaExecutor>(new CudaExecutor(std::move(impl)));
}

Status CudaExecutor::Impl::openDevice(const std::vector<CudaDeviceInfo> &devices,
                                      const CudaOptions &requested) {
  auto chosen = std::find_if(devices.begin(), devices.end(), [&](const CudaDeviceInfo &d) {
    return d.ordinal == requested.device;
  });
  if (chosen == devices.end())
    return Status(StatusCode::kUnavailable,
                  "no CUDA device " + std::to_string(requested.device) +
                      ": this machine has " + std::to_string(devices.size()));
  device = *chosen;
  deviceName = device.name + " (" + arch() + ")";
  options = requested;
  options.syncEachLaunch |= envFlag("DLC_CUDA_SYNC");
  options.allowTf32 |= envFlag("DLC_CUDA_TF32");
  DLC_RETURN_IF_ERROR(cudaCheck(cudaSetDevice(device.ordinal), "cudaSetDevice"));
  return cudaCheck(cudaStreamCreate(&stream), "cudaStreamCreate");
}

Status CudaExecutor::Impl::checkArenaFits(const Plan &plan) const {
  // Refused before the host mirror and the kernels are prepared;
  // allocateAndBind() allocates.
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess &&
      static_cast<size_t>(plan.arenaBytes) > freeBytes)
    return Status(StatusCode::kResourceExhausted,
                  "cannot allocate the plan's arena on " + deviceName + ": planned peak " +
                      std::to_string(plan.arenaBytes) + " bytes, the device has " +
                      std::to_string(freeBytes) + " bytes free of " +
                      std::to_string(totalBytes) + " (reduce --batch)");
  return Status::ok();
}

Status CudaExecutor::Impl::createHostMirror(Plan plan) {
  auto created = cpu::CpuExecutor::create(std::move(plan));
  if (!created.isOk())
    return Status(created.status().code(), "the CUDA backend's host fallback: " +
                                               created.status().message());
  host = std::move(*created);
  // A dropout left to the host draws this rank's masks, as the device's do.
  host->setRank(options.rank);
  return Status::ok();
}

Status CudaExecutor::Impl::prepareLaunches() {
  KernelCompiler compiler;
  cudnn::AlgorithmCache algorithms;
  size_t tableBytes = 0;
  std::vector<DeviceLaunch> routed = planDeviceLaunches(plan());
  std::vector<Launch> all = launchesOf(routed);
  precompile(routed, all, compiler);
  for (const DeviceLaunch &d : routed)
    DLC_RETURN_IF_ERROR(prepareLaunch(d, all, compiler, algorithms, tableBytes));
  DLC_RETURN_IF_ERROR(loadKernel(compiler, "dlc_advance_step", kAdvanceStepSource,
                                 "dlc_advance_step", "the step counter", advanceStep));
  DLC_RETURN_IF_ERROR(allocateAndBind(tableBytes));
  DLC_RETURN_IF_ERROR(scheduleAllReduces());
  DLC_RETURN_IF_ERROR(
      cudaCheck(cudaStreamSynchronize(stream), "cudaStreamSynchronize", "create()"));
  for (const std::unique_ptr<LaunchStep> &l : launches)
    paths.push_back(l->describe());
  return Status::ok();
}

void CudaExecutor::Impl::precompile(const std::vector<DeviceLaunch> &routed,
                                    const std::vector<Launch> &all,
                                    const KernelCompiler &compiler) const {
  // Hundreds of kernels for a large model at once; prepareLaunch's own
  // compile reports any failure, with the launch it belongs to.
  if (compiler.cacheDir().empty())
    return;
  std::vector<KernelSource> sources = {{"dlc_advance_step", kAdvanceStepSource}};
  for (const DeviceLaunch &d : routed) {
    if (d.path == DevicePath::kGenerated) {
      if (auto g = generateKernel(plan(), d.launch, all); g.isOk())
        sources.push_back({g->name, g->source});
    } else if (d.path == DevicePath::kHandWritten) {
      const PlanKernel &k = plan().kernels[d.launch.kernels.front()];
      if (auto hand = planHandKernel(plan(), k); hand.isOk())
        sources.push_back({"dlc_hw_" + hand->family, handKernelSource(hand->family)});
    }
  }
  (void)compileInParallel(sources, arch(), std::max(1u, std::thread::hardware_concurrency()),
                          compiler.cacheDir());
}

void CudaExecutor::Impl::decideGraph() {
  int64_t onHost = 0;
  for (const LaunchPath &path : paths)
    onHost += path.path == "host-fallback";
  if (!options.cudaGraph)
    graphNote = "disabled (--no-cuda-graph)";
  else if (onHost)
    graphNote = std::to_string(onHost) + " launch" + (onHost > 1 ? "es fall" : " falls") +
                " back to the host";
  else if (options.syncEachLaunch)
    graphNote = "waiting after every launch (DLC_CUDA_SYNC=1)";
  else
    graphUsable = true;
}

Status CudaExecutor::Impl::prepareLaunch(const DeviceLaunch &device,
                                         const std::vector<Launch> &all,
                                         KernelCompiler &compiler,
                                         cudnn::AlgorithmCache &algorithms,
                                         size_t &tableBytes) {
  std::string label = launchLabelWithOps(plan(), device.launch);
  // LaunchPaths decided the path from the plan; a library may still refuse
  // here (no algorithm for the shape), and then the next path takes the
  // launch (the hand-written kernel, the host), with why in `reason`.
  std::string reason = device.reason;
  const size_t routedReason = reason.size();
  Preparation preparation{*this,     device.launch, label,      all,
                          compiler,  algorithms,    tableBytes, reason};
  for (DevicePath path : fallbacksOf(device.path, device.launch)) {
    PreparedStep step = prepareStep(path, preparation);
    if (!step.isOk())
      return step.status();
    if (*step) {
      if (path != device.path) {
        std::string why = reason.substr(routedReason);
        if (why.rfind("; ", 0) == 0)
          why = why.substr(2);
        refusedAtRunTime.push_back(label + " on " + devicePathName(path) + ": " + why);
      }
      (*step)->setReason(reason);
      launches.push_back(std::move(*step));
      return Status::ok();
    }
  }
  return Status(StatusCode::kInternal, label + ": no path took it");
}

Status CudaExecutor::Impl::allocateAndBind(size_t tableBytes) {
  // One workspace for every library call, sized to the largest need.
  for (const std::unique_ptr<LaunchStep> &l : launches)
    workspaceBytes = std::max(workspaceBytes, l->workspaceBytes());
  const Plan &p = plan();
  size_t arenaBytes = static_cast<size_t>(std::max<int64_t>(p.arenaBytes, 1));
  size_t workspaceAt = alignUp(arenaBytes, kRegionAlignment);
  size_t reserveAt = alignUp(workspaceAt + workspaceBytes, kRegionAlignment);
  size_t tablesAt = alignUp(reserveAt + reserveBytes, kRegionAlignment);
  size_t stepAt = alignUp(tablesAt + tableBytes, kRegionAlignment);
  allocationBytes = stepAt + 2 * sizeof(long long);
  if (cudaError_t error = cudaMalloc(reinterpret_cast<void **>(&arena), allocationBytes);
      error != cudaSuccess) {
    Status failed = cudaCheck(error, "cudaMalloc");
    size_t freeBytes = 0, totalBytes = 0;
    std::string memory =
        cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess
            ? std::to_string(freeBytes) + " bytes free of " + std::to_string(totalBytes)
            : "free memory unknown (cudaMemGetInfo failed)";
    return Status(StatusCode::kResourceExhausted,
                  "cannot allocate the plan's arena on " + deviceName + ": planned peak " +
                      std::to_string(p.arenaBytes) + " bytes and " +
                      std::to_string(allocationBytes - arenaBytes) +
                      " bytes of cuBLASLt / cuDNN workspace, cuDNN reserve space and kernel "
                      "tables, the device has " +
                      memory + " (" + failed.message() + ")");
  }
  workspace = workspaceBytes ? arena + workspaceAt : nullptr;
  reserve = arena + reserveAt;
  tables = arena + tablesAt;
  deviceStep = reinterpret_cast<long long *>(arena + stepAt);
  deviceDropoutCounter = deviceStep + 1;
  // Zeroed, as the CPU backend's arena is, so both start from equal bytes;
  // the counters at step 0.
  DLC_RETURN_IF_ERROR(cudaCheck(cudaMemsetAsync(arena, 0, allocationBytes, stream),
                                "cudaMemsetAsync", "the arena"));
  DLC_RETURN_IF_ERROR(resetCounters("create()"));
  std::string packed(tableBytes, '\0');
  for (std::unique_ptr<LaunchStep> &l : launches)
    l->bind(*this, packed);
  if (tableBytes)
    DLC_RETURN_IF_ERROR(cudaCheck(cudaMemcpyAsync(tables, packed.data(), tableBytes,
                                                  cudaMemcpyHostToDevice, stream),
                                  "cudaMemcpyAsync",
                                  "the optimizer kernels' segment tables and hand-written "
                                  "operand tables"));
  return cudaCheck(cudaStreamSynchronize(stream), "cudaStreamSynchronize", "the arena");
}

//===----------------------------------------------------------------------===//
// The step
//===----------------------------------------------------------------------===//

Status CudaExecutor::Impl::scheduleAllReduces() {
  const Plan &p = plan();
  std::vector<int64_t> waitAt = allReduceWaitPoints(p);
  std::vector<size_t> launchOf(p.kernels.size());
  for (size_t i = 0; i < launches.size(); ++i)
    for (size_t k : launches[i]->launch().kernels)
      launchOf[k] = i;
  joinBefore.assign(launches.size(), {});
  forked.assign(launches.size(), nullptr);
  joined.assign(launches.size(), nullptr);
  for (size_t i = 0; i < launches.size(); ++i) {
    if (launches[i]->path() != DevicePath::kCollective)
      continue;
    int64_t wait = waitAt[launches[i]->launch().kernels.front()];
    if (wait >= static_cast<int64_t>(p.kernels.size()))
      joinAtEnd.push_back(i);
    else
      joinBefore[launchOf[wait]].push_back(i);
    for (cudaEvent_t *event : {&forked[i], &joined[i]})
      DLC_RETURN_IF_ERROR(cudaCheck(cudaEventCreateWithFlags(event, cudaEventDisableTiming),
                                    "cudaEventCreateWithFlags", launches[i]->label()));
    if (!commStream)
      DLC_RETURN_IF_ERROR(cudaCheck(cudaStreamCreate(&commStream), "cudaStreamCreate",
                                    "the all-reduce stream"));
  }
  return Status::ok();
}

Status CudaExecutor::Impl::enqueueLaunch(size_t i, bool overlap) {
  LaunchStep &launch = *launches[i];
  if (!overlap)
    return launch.enqueue(*this, stream);
  const std::string &where = launch.label();
  for (size_t r : joinBefore[i])
    DLC_RETURN_IF_ERROR(cudaCheck(cudaStreamWaitEvent(stream, joined[r], 0),
                                  "cudaStreamWaitEvent", where + ", waiting for " +
                                                             launches[r]->label()));
  if (launch.path() != DevicePath::kCollective)
    return launch.enqueue(*this, stream);
  // Fork: the all-reduce starts once everything before it is enqueued
  // (its gradients are written), and the step's stream goes on.
  DLC_RETURN_IF_ERROR(
      cudaCheck(cudaEventRecord(forked[i], stream), "cudaEventRecord", where));
  DLC_RETURN_IF_ERROR(cudaCheck(cudaStreamWaitEvent(commStream, forked[i], 0),
                                "cudaStreamWaitEvent", where));
  DLC_RETURN_IF_ERROR(launch.enqueue(*this, commStream));
  return cudaCheck(cudaEventRecord(joined[i], commStream), "cudaEventRecord", where);
}

Status CudaExecutor::Impl::joinAtStepEnd(bool overlap) {
  if (!overlap)
    return Status::ok();
  for (size_t r : joinAtEnd)
    DLC_RETURN_IF_ERROR(cudaCheck(cudaStreamWaitEvent(stream, joined[r], 0),
                                  "cudaStreamWaitEvent",
                                  "the end of the step, waiting for " + launches[r]->label()));
  return Status::ok();
}

Status CudaExecutor::Impl::enqueueEagerly(const std::string &at) {
  if (profiling && marks.size() != launches.size() + 1) {
    marks.resize(launches.size() + 1, nullptr);
    for (cudaEvent_t &mark : marks)
      if (!mark)
        DLC_RETURN_IF_ERROR(cudaCheck(cudaEventCreate(&mark), "cudaEventCreate", "profiling"));
    launchMs.assign(launches.size(), 0.0);
  }
  bool overlap = overlapping();
  for (size_t i = 0; i < launches.size(); ++i) {
    LaunchStep &launch = *launches[i];
    if (profiling)
      DLC_RETURN_IF_ERROR(cudaCheck(cudaEventRecord(marks[i], stream), "cudaEventRecord", at));
    if (Status s = enqueueLaunch(i, overlap); !s.isOk())
      return Status(s.code(), at + ": " + s.message());
    if (options.syncEachLaunch || observer)
      DLC_RETURN_IF_ERROR(waitFor(stream, nullptr, at + ", after " + launch.label()));
    if (observer)
      for (size_t k : launch.launch().kernels)
        observer(k);
  }
  if (Status s = joinAtStepEnd(overlap); !s.isOk())
    return Status(s.code(), at + ": " + s.message());
  if (profiling)
    DLC_RETURN_IF_ERROR(
        cudaCheck(cudaEventRecord(marks.back(), stream), "cudaEventRecord", at));
  void *args[] = {&deviceStep};
  DLC_RETURN_IF_ERROR(cudaCheck(cudaLaunchKernel(reinterpret_cast<const void *>(advanceStep),
                                                 dim3(1), dim3(1), args, 0, stream),
                                "cudaLaunchKernel", at + ", dlc_advance_step"));
  if (profiling) {
    DLC_RETURN_IF_ERROR(waitFor(stream, marks.back(), at));
    for (size_t i = 0; i < launches.size(); ++i) {
      float ms = 0;
      DLC_RETURN_IF_ERROR(cudaCheck(cudaEventElapsedTime(&ms, marks[i], marks[i + 1]),
                                    "cudaEventElapsedTime", at + ", " + launches[i]->label()));
      launchMs[i] += ms;
    }
    ++profiledSteps;
  }
  return Status::ok();
}

Status CudaExecutor::Impl::captureGraph() {
  DLC_RETURN_IF_ERROR(
      cudaCheck(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                "cudaStreamBeginCapture", "the step's CUDA graph"));
  // An overlapped all-reduce forks the all-reduce stream into the capture
  // and joins it back before the step's end, as the graph then replays.
  Status captured = Status::ok();
  bool overlap = overlapping();
  for (size_t i = 0; i < launches.size() && captured.isOk(); ++i)
    captured = enqueueLaunch(i, overlap);
  if (captured.isOk())
    captured = joinAtStepEnd(overlap);
  if (captured.isOk()) {
    void *args[] = {&deviceStep};
    captured = cudaCheck(cudaLaunchKernel(reinterpret_cast<const void *>(advanceStep), dim3(1),
                                          dim3(1), args, 0, stream),
                         "cudaLaunchKernel", "dlc_advance_step");
  }
  // The capture ends whatever happened, so the stream is usable again.
  Status ended = cudaCheck(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture",
                           "the step's CUDA graph");
  if (!captured.isOk() || !ended.isOk()) {
    (void)cudaGetLastError();
    if (graph)
      (void)cudaGraphDestroy(graph);
    graph = nullptr;
    return captured.isOk() ? ended : captured;
  }
  return cudaCheck(cudaGraphInstantiate(&graphExec, graph, 0), "cudaGraphInstantiate",
                   "the step's CUDA graph");
}

Status CudaExecutor::step() {
  Impl &d = *impl_;
  std::string at = "step " + std::to_string(d.stepCounter);
  DLC_RETURN_IF_ERROR(
      cudaCheck(cudaEventRecord(d.start, d.stream), "cudaEventRecord", "the start of " + at));
  // The first step runs eagerly: cuBLASLt, cuDNN and module loading may
  // initialize lazily on their first call (allocations, kernel loads), which
  // stream capture forbids; the graph is captured from the next step on.
  // A rank that failed aborted the group: a replay would launch NCCL
  // kernels of the aborted communicator, which wait forever.
  if (d.communicator && d.communicator->aborted())
    return Status(StatusCode::kInternal, at + ": the NCCL group was aborted (another rank "
                                              "failed)");
  bool replay = d.graphUsable && d.warmedUp && !d.observer && !d.profiling;
  if (replay && !d.graphExec) {
    if (Status s = d.captureGraph(); !s.isOk()) {
      d.graphUsable = replay = false;
      d.graphNote = "capture failed: " + s.message();
    }
  }
  d.graphReplayed = replay;
  if (replay)
    DLC_RETURN_IF_ERROR(
        cudaCheck(cudaGraphLaunch(d.graphExec, d.stream), "cudaGraphLaunch", at));
  else {
    DLC_RETURN_IF_ERROR(d.enqueueEagerly(at));
    d.warmedUp = true;
  }
  DLC_RETURN_IF_ERROR(
      cudaCheck(cudaEventRecord(d.stop, d.stream), "cudaEventRecord", "the end of " + at));
  d.stepRecorded = true;
  ++d.stepCounter;
  return Status::ok();
}

Status CudaExecutor::synchronize() {
  return impl_->waitFor(impl_->stream, nullptr, "step " + std::to_string(impl_->stepCounter - 1));
}

StatusOr<float> CudaExecutor::stepMs() const {
  if (!impl_->stepRecorded)
    return Status(StatusCode::kInvalidArgument, "stepMs(): no step has run");
  DLC_RETURN_IF_ERROR(impl_->waitFor(impl_->stream, impl_->stop, "stepMs()"));
  float ms = 0;
  DLC_RETURN_IF_ERROR(cudaCheck(cudaEventElapsedTime(&ms, impl_->start, impl_->stop),
                                "cudaEventElapsedTime", "stepMs()"));
  return ms;
}

//===----------------------------------------------------------------------===//
// Values in and out
//===----------------------------------------------------------------------===//

Status CudaExecutor::initialize(uint64_t seed) {
  // The CPU backend's initializers fill the mirror; the persistent buffers
  // go up as they are (half precision already rounded).
  DLC_RETURN_IF_ERROR(impl_->host->initialize(seed));
  std::vector<int32_t> ids;
  const Plan &p = impl_->plan();
  for (size_t i = 0; i < p.buffers.size(); ++i)
    switch (p.buffers[i].role) {
    case BufferRole::kParam:
    case BufferRole::kState:
    case BufferRole::kOptimizerState:
    case BufferRole::kConstant:
      ids.push_back(static_cast<int32_t>(i));
      break;
    default:
      break;
    }
  impl_->stepCounter = 0;
  DLC_RETURN_IF_ERROR(impl_->resetCounters("initialize()"));
  return impl_->upload(ids, "initialize()");
}

Status CudaExecutor::fillSyntheticBatch(uint64_t seed) {
  DLC_RETURN_IF_ERROR(impl_->host->fillSyntheticBatch(seed));
  std::vector<int32_t> ids;
  const Plan &p = impl_->plan();
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (p.buffers[i].role == BufferRole::kInput || p.buffers[i].role == BufferRole::kLabel)
      ids.push_back(static_cast<int32_t>(i));
  return impl_->upload(ids, "fillSyntheticBatch()");
}

Status CudaExecutor::write(const std::string &name, const void *data, size_t bytes) {
  auto b = sizedBuffer(name, bytes);
  if (!b.isOk())
    return b.status();
  DLC_RETURN_IF_ERROR(cudaCheck(cudaMemcpyAsync(impl_->arena + (*b)->offset, data, bytes,
                                                cudaMemcpyHostToDevice, impl_->stream),
                                "cudaMemcpyAsync", "write('" + name + "')"));
  return impl_->waitFor(impl_->stream, nullptr, "write('" + name + "')");
}

Status CudaExecutor::read(const std::string &name, void *data, size_t bytes) const {
  auto b = sizedBuffer(name, bytes);
  if (!b.isOk())
    return b.status();
  DLC_RETURN_IF_ERROR(cudaCheck(cudaMemcpyAsync(data, impl_->arena + (*b)->offset, bytes,
                                                cudaMemcpyDeviceToHost, impl_->stream),
                                "cudaMemcpyAsync", "read('" + name + "')"));
  return impl_->waitFor(impl_->stream, nullptr, "read('" + name + "')");
}

const PlanBuffer *CudaExecutor::buffer(const std::string &name) const {
  return impl_->host->buffer(name);
}

std::string CudaExecutor::bytesOf(int32_t id) const {
  const PlanBuffer &b = plan().buffers.at(id);
  std::string bytes(b.bytes, '\0');
  // A failing copy gives an empty string: the caller's size check sees it,
  // and the next step() or synchronize() reports the device's error.
  if (!read(b.name, bytes.data(), bytes.size()).isOk())
    return std::string();
  return bytes;
}

void CudaExecutor::setKernelObserver(std::function<void(size_t)> observer, bool) {
  impl_->observer = std::move(observer);
}

float CudaExecutor::loss() const {
  float value = NAN;
  (void)read("loss", &value, sizeof(value));
  return value;
}

int64_t CudaExecutor::stepsRun() const { return impl_->stepCounter; }
const Plan &CudaExecutor::plan() const { return impl_->plan(); }
const std::vector<LaunchPath> &CudaExecutor::launchPaths() const { return impl_->paths; }
const std::vector<std::string> &CudaExecutor::refusedAtRunTime() const {
  return impl_->refusedAtRunTime;
}
const std::string &CudaExecutor::deviceName() const { return impl_->deviceName; }

std::map<std::string, int64_t> CudaExecutor::launchesByPath() const {
  std::map<std::string, int64_t> counts;
  for (const std::string &path : devicePathNames())
    counts[path] = 0;
  for (const LaunchPath &l : impl_->paths)
    ++counts[l.path];
  return counts;
}

const CudaOptions &CudaExecutor::options() const { return impl_->options; }
const std::string &CudaExecutor::pciBusId() const { return impl_->device.pciBusId; }

void CudaExecutor::setCommunicator(NcclCommunicator *communicator) {
  impl_->communicator = communicator;
}

Status CudaExecutor::makeCurrent() const {
  return cudaCheck(cudaSetDevice(impl_->device.ordinal), "cudaSetDevice");
}
bool CudaExecutor::replaysCudaGraph() const { return impl_->graphReplayed; }
const std::string &CudaExecutor::cudaGraphNote() const { return impl_->graphNote; }
void CudaExecutor::setProfiling(bool on) { impl_->profiling = on; }
int64_t CudaExecutor::profiledSteps() const { return impl_->profiledSteps; }

StatusOr<std::vector<double>> CudaExecutor::launchMsPerStep() const {
  if (impl_->profiledSteps == 0)
    return Status(StatusCode::kInvalidArgument,
                  "launchMsPerStep(): no step ran with profiling on");
  std::vector<double> ms = impl_->launchMs;
  for (double &v : ms)
    v /= impl_->profiledSteps;
  return ms;
}

} // namespace dlc::rt::cuda
