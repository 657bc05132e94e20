//===- CudaExecutor.cpp - run a plan on one CUDA GPU ----------------------===//
//
// Everything a step needs is decided and prepared in create(): each
// launch's path, the generated kernels' cubins (loaded once), the cuBLASLt
// and cuDNN descriptors and algorithms, then ONE device allocation holding
// the plan's arena, the library workspace sized to the largest need, the
// optimizer kernels' segment tables and the hand-written kernels' operand
// tables, and the step counter. Launches are prepared against arena
// offsets and bound to addresses once that allocation exists. step() only enqueues, or replays
// the step's CUDA graph. The host fallback runs through a CPU executor
// over a host mirror of the arena, so the CPU backend's kernels,
// initializers and half-precision handling are used as they are, never
// copied.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cuda/CudaExecutor.h"

#include "dlc/runtime/Collective.h"

#include "../cublas/CublasLtGemm.h"
#include "../cudnn/CudnnBatchNorm.h"
#include "../cudnn/CudnnConv.h"
#include "../cudnn/CudnnFusedBatchNorm.h"
#include "CudaCheck.h"
#include "dlc/runtime/Device.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cuda/HandKernels.h"
#include "dlc/runtime/cuda/LaunchPaths.h"
#include "dlc/runtime/cuda/KernelCompiler.h"
#include "dlc/runtime/cuda/Nccl.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

namespace dlc::rt::cuda {

namespace {

/// The optimizer and operand tables' alignment in their device allocation
/// (DlcSegment and DlcHandOperand hold 8-byte pointers; 16 keeps every
/// table on a vector boundary).
constexpr size_t kTableAlignment = 16;
/// Regions of the one device allocation start on this boundary.
constexpr size_t kRegionAlignment = 256;

size_t alignUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

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

/// One launch as the step runs it.
struct LaunchStep {
  Launch launch;
  LaunchPath path;
  // generated
  KernelForm form = KernelForm::kLoop;
  std::string kernelName;
  cudaKernel_t kernel = nullptr;
  dim3 grid, block;
  std::vector<void *> pointers; // loop, reduction and row kernels' parameters
  std::vector<int64_t> pointerOffsets; // their arena offsets, until bound
  bool readsStep = false;       // ... then the dropout counter
  size_t tableOffset = 0;       // optimizer, hand-written: its table in Impl::tables
  int segments = 0;
  // hand-written: the kernel's one parameter block (pointers filled in)
  bool hand = false;
  HandKernelArgs handArgs;
  int handTableSlot = -1; // p slot of its operand table (at tableOffset), or -1
  int handScratchSlot = -1; // p slot of its scratch (at scratchOffset), or -1
  int handPhases = 1;       // launches in a row, the phase in handArgs.i[kPhaseSlot]
  size_t scratchOffset = 0;
  int64_t handOffsets[HandKernelArgs::kPointers]; // p's arena offsets (-1: null)
  /// The launch's table (segments or operands) for a given arena address.
  std::function<std::string(unsigned char *arena)> packTable;
  // library
  std::unique_ptr<cublas::Gemm> gemm;
  std::unique_ptr<cudnn::Conv> conv;
  std::unique_ptr<cudnn::BatchNorm> bn;
  std::unique_ptr<cudnn::FusedBatchNorm> fusedBn;
  // nccl: the plan kernel's buffers averaged over the ranks
  bool nccl = false;
  // host fallback: buffers copied down (inputs and outputs, so that bytes
  // a kernel leaves alone keep their device values) and copied back up.
  std::vector<int32_t> hostReads, hostWrites;
};

/// Reserves `bytes` of the tables region for `step`'s table.
void reserveTable(LaunchStep &step, size_t bytes, size_t &tableBytes) {
  tableBytes = alignUp(tableBytes, kTableAlignment);
  step.tableOffset = tableBytes;
  tableBytes += bytes;
}

/// Adds `why` to the reasons a launch is not on a faster path.
void addReason(std::string &reason, const std::string &why) {
  reason += (reason.empty() ? "" : "; ") + why;
}

} // namespace

struct CudaExecutor::Impl {
  CudaDeviceInfo device;
  std::string deviceName;
  /// The host mirror: the CPU backend over a host copy of the arena. Its
  /// plan is the plan.
  std::unique_ptr<cpu::CpuExecutor> host;
  cudaStream_t stream = nullptr;
  /// Overlapped all-reduces (CudaOptions::overlapAllReduce): their stream,
  /// and per launch the events that fork it from the step's stream and
  /// join it back (all_reduce launches only), the all-reduce launches whose
  /// results launch i waits for, and those the step's end waits for.
  cudaStream_t commStream = nullptr;
  std::vector<cudaEvent_t> forked, joined;
  std::vector<std::vector<size_t>> joinBefore;
  std::vector<size_t> joinAtEnd;
  /// The one device allocation: the arena at its start, then the
  /// workspace, the tables and the step counter.
  unsigned char *arena = nullptr;
  size_t allocationBytes = 0;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  unsigned char *tables = nullptr;
  /// cuDNN's fused batch norm: what each forward group leaves for its
  /// gradient (CudnnFusedBatchNorm.h), one slice per forward group, found
  /// by the group's (input, relu output) buffers.
  unsigned char *reserve = nullptr;
  size_t reserveBytes = 0;
  std::map<std::pair<int32_t, int32_t>, size_t> reserveOf;
  cudaEvent_t start = nullptr, stop = nullptr;
  bool stepRecorded = false;
  CudaOptions options;
  /// The step counter the kernels read (see the header), and its kernel.
  /// Beside it the dropout counter: the step plus this rank's
  /// dropoutStepOffset, which dropout kernels read instead, so that each
  /// rank draws the CPU backend's masks for its rank.
  long long *deviceStep = nullptr, *deviceDropoutCounter = nullptr;
  long long dropoutCounterStart = 0; // what initialize() sets it to
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
  cublasLtHandle_t lt = nullptr;
  cudnnHandle_t dnn = nullptr;
  std::map<std::string, cudaLibrary_t> libraries;
  std::vector<LaunchStep> launches;
  std::vector<LaunchPath> paths;
  std::function<void(size_t)> observer;
  int64_t stepCounter = 0;
  /// This rank's NCCL communicator; null on one GPU.
  NcclCommunicator *communicator = nullptr;

  ~Impl();
  const Plan &plan() const { return host->plan(); }
  /// "sm_90": what kernels are compiled for.
  std::string arch() const;

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
  Status prepareGenerated(LaunchStep &step, const std::vector<Launch> &all,
                          KernelCompiler &compiler, size_t &tableBytes);
  /// A GEMM (or GEMM-epilogue group) through cuBLASLt; no step.gemm, with
  /// why in `reason`, when cuBLASLt refuses it.
  Status prepareCublasLt(LaunchStep &step, std::string &reason);
  /// A convolution, batch norm or fused batch-norm group through cuDNN; no
  /// library object, with why in `reason`, when cuDNN refuses it.
  Status prepareCudnn(LaunchStep &step, const std::vector<Launch> &all,
                      cudnn::AlgorithmCache &algorithms, std::string &reason);
  /// The CPU backend runs the launch on host copies of what it touches.
  void prepareHostFallback(LaunchStep &step);
  /// The one allocation, then every launch's addresses and tables.
  Status allocateAndBind(size_t tableBytes);
  /// `entry` of the source compiled for this device (once per key).
  Status loadKernel(KernelCompiler &compiler, const std::string &libraryKey,
                    const std::string &source, const std::string &entry,
                    const std::string &where, cudaKernel_t &kernel);
  /// A single kernel's hand-written launch; false (with `reason`) when
  /// HandKernels refuses it.
  StatusOr<bool> prepareHandWritten(const Launch &launch, KernelCompiler &compiler,
                                    LaunchStep &step, std::string &reason,
                                    size_t &tableBytes);
  Status runLaunch(LaunchStep &step);
  /// An all_reduce launch: its buffers' mean over the ranks, through NCCL,
  /// enqueued on `on`.
  Status allReduce(const LaunchStep &step, cudaStream_t on);
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
  Status runOnHost(LaunchStep &step);
  /// The host's wait for the device: for `event`, or for all of `on` when
  /// `event` is null. With a communicator it polls beside NCCL's state
  /// (NcclCommunicator::wait), so that a peer that failed or hangs ends it
  /// with an error instead of blocking forever; without one it blocks.
  Status waitFor(cudaStream_t on, cudaEvent_t event, const std::string &why) const;
  /// Copies buffers between the host mirror and the device, then waits.
  /// Copies buffers between the device arena and the host mirror, and waits.
  Status copy(const std::vector<int32_t> &ids, bool toDevice, const std::string &why);
  Status upload(const std::vector<int32_t> &ids, const std::string &why) {
    return copy(ids, /*toDevice=*/true, why);
  }
  Status download(const std::vector<int32_t> &ids, const std::string &why) {
    return copy(ids, /*toDevice=*/false, why);
  }
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

std::string CudaExecutor::Impl::arch() const {
  return "sm_" + std::to_string(device.computeMajor) + std::to_string(device.computeMinor);
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
  for (const LaunchStep &l : launches)
    paths.push_back(l.path);
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
  LaunchStep step;
  step.launch = device.launch;
  step.path.label = launchLabelWithOps(plan(), device.launch);
  // LaunchPaths decided the path from the plan; a library may still refuse
  // here (no algorithm for the shape), and then the hand-written kernel or
  // the host takes the launch.
  std::string reason = device.reason;
  if (device.path == DevicePath::kCollective) {
    step.path.path = "nccl";
    step.nccl = true;
  } else if (device.path == DevicePath::kGenerated) {
    DLC_RETURN_IF_ERROR(prepareGenerated(step, all, compiler, tableBytes));
  } else {
    if (device.path == DevicePath::kCublasLt)
      DLC_RETURN_IF_ERROR(prepareCublasLt(step, reason));
    else if (isCudnn(device.path))
      DLC_RETURN_IF_ERROR(prepareCudnn(step, all, algorithms, reason));
    bool onLibrary = step.gemm || step.conv || step.bn || step.fusedBn;
    bool handWritten = false;
    if (!onLibrary && device.path != DevicePath::kHostFallback && step.launch.kernels.size() == 1) {
      auto hand = prepareHandWritten(step.launch, compiler, step, reason, tableBytes);
      if (!hand.isOk())
        return hand.status();
      handWritten = *hand;
    }
    if (!onLibrary && !handWritten)
      prepareHostFallback(step);
  }
  step.path.reason = reason;
  launches.push_back(std::move(step));
  return Status::ok();
}

Status CudaExecutor::Impl::prepareGenerated(LaunchStep &step, const std::vector<Launch> &all,
                                            KernelCompiler &compiler, size_t &tableBytes) {
  const Plan &p = plan();
  const std::string &where = step.path.label;
  auto generated = generateKernel(p, step.launch, all);
  if (!generated.isOk())
    return generated.status(); // LaunchPaths said it was generated
  const GeneratedKernel &g = *generated;
  step.path.path = "generated";
  step.form = g.form;
  step.kernelName = g.name;
  DLC_RETURN_IF_ERROR(loadKernel(compiler, g.name, g.source, g.name, where, step.kernel));
  int64_t blocks = gridBlocks(g);
  int64_t cap = int64_t(device.multiprocessors) * kBlocksPerMultiprocessor;
  step.grid = dim3(static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, cap)));
  step.block = dim3(g.blockSize, g.blockSizeY);
  if (walksSegmentTable(g.form)) {
    step.segments = static_cast<int>(g.tableSegments());
    step.packTable = [g, plan = &p](unsigned char *base) {
      return packSegmentTable(g, [&](int32_t id) {
        return reinterpret_cast<uint64_t>(base) + uint64_t(plan->buffers[id].offset);
      });
    };
    reserveTable(step, step.packTable(nullptr).size(), tableBytes);
  } else {
    for (int32_t id : g.args)
      step.pointerOffsets.push_back(p.buffers[id].offset);
    step.readsStep = g.readsStep;
  }
  return Status::ok();
}

Status CudaExecutor::Impl::prepareCublasLt(LaunchStep &step, std::string &reason) {
  const Plan &p = plan();
  const Launch &launch = step.launch;
  const std::string &where = step.path.label;
  if (!lt)
    DLC_RETURN_IF_ERROR(cublas::cublasCheck(cublasLtCreate(&lt), "cublasLtCreate", where));
  // A GEMM-epilogue group is one call; LaunchPaths chose its epilogue.
  std::optional<GemmEpilogue> epilogue;
  if (launch.kernels.size() > 1) {
    auto chosen = gemmEpilogueFor(p, launch);
    if (!chosen.isOk())
      return chosen.status(); // LaunchPaths said it had one
    epilogue = *chosen;
  }
  const PlanKernel &gemmKernel =
      epilogue ? p.kernels[epilogue->gemm] : p.kernels[launch.kernels.front()];
  std::string refusal;
  DLC_RETURN_IF_ERROR(cublas::Gemm::plan(lt, p, gemmKernel, options.allowTf32, where,
                                         step.gemm, refusal,
                                         epilogue ? &*epilogue : nullptr));
  if (step.gemm)
    step.path.path = "cublaslt";
  else
    addReason(reason, "cuBLASLt refuses it: " + refusal);
  return Status::ok();
}

Status CudaExecutor::Impl::prepareCudnn(LaunchStep &step, const std::vector<Launch> &all,
                                        cudnn::AlgorithmCache &algorithms,
                                        std::string &reason) {
  const Plan &p = plan();
  const Launch &launch = step.launch;
  const std::string &where = step.path.label;
  if (!dnn) {
    DLC_RETURN_IF_ERROR(cudnn::cudnnCheck(cudnnCreate(&dnn), "cudnnCreate", where));
    DLC_RETURN_IF_ERROR(
        cudnn::cudnnCheck(cudnnSetStream(dnn, stream), "cudnnSetStream", where));
  }
  std::string refusal;
  // A paddle batch-norm group, or a lone FP16 NHWC batch norm: cuDNN's
  // fused batch norm calls (the lone one without the activation). A lone
  // batch norm they do not take runs on the plain calls below.
  const bool lone = launch.kernels.size() == 1;
  auto group = fusedBatchNormFor(p, launch, all);
  if (!lone && !group.isOk())
    return group.status(); // LaunchPaths said it was one
  std::pair<int32_t, int32_t> key;
  if (group.isOk()) {
    key = std::make_pair(group->x, group->y);
    if (group->backward && !reserveOf.count(key)) {
      if (!lone) {
        addReason(reason,
                  "its forward group did not run fused, so there is no reserve space to read");
        return Status::ok();
      }
    } else {
      DLC_RETURN_IF_ERROR(
          cudnn::FusedBatchNorm::plan(dnn, p, *group, where, step.fusedBn, refusal));
      if (!step.fusedBn && !lone) {
        addReason(reason, "cuDNN refuses it: " + refusal);
        return Status::ok();
      }
    }
  }
  if (step.fusedBn) {
    if (group->backward) {
      step.fusedBn->setReserveOffset(reserveOf.at(key));
    } else {
      reserveBytes = alignUp(reserveBytes, kRegionAlignment);
      step.fusedBn->setReserveOffset(reserveBytes);
      reserveOf[key] = reserveBytes;
      reserveBytes += step.fusedBn->reserveBytes();
    }
    step.path.path = "cudnn";
    return Status::ok();
  }
  const PlanKernel &kernel = p.kernels[launch.kernels.front()];
  if (kernel.opClass == OpClass::kBatchNormalization)
    DLC_RETURN_IF_ERROR(cudnn::BatchNorm::plan(p, kernel, where, step.bn, refusal));
  else
    DLC_RETURN_IF_ERROR(cudnn::Conv::plan(dnn, p, kernel, options.allowTf32, where,
                                          algorithms, step.conv, refusal));
  if (step.conv || step.bn)
    step.path.path = "cudnn";
  else
    addReason(reason, "cuDNN refuses it: " + refusal);
  return Status::ok();
}

void CudaExecutor::Impl::prepareHostFallback(LaunchStep &step) {
  const Plan &p = plan();
  step.path.path = "host-fallback";
  for (size_t k : step.launch.kernels)
    for (const std::vector<int32_t> *ids : {&p.kernels[k].inputs, &p.kernels[k].outputs})
      for (int32_t id : *ids) {
        if (std::find(step.hostReads.begin(), step.hostReads.end(), id) ==
            step.hostReads.end())
          step.hostReads.push_back(id);
        if (ids == &p.kernels[k].outputs &&
            std::find(step.hostWrites.begin(), step.hostWrites.end(), id) ==
                step.hostWrites.end())
          step.hostWrites.push_back(id);
      }
}

Status CudaExecutor::Impl::loadKernel(KernelCompiler &compiler, const std::string &libraryKey,
                                      const std::string &source, const std::string &entry,
                                      const std::string &where, cudaKernel_t &kernel) {
  // One library per source, compiled (or found in the disk cache) once.
  auto library = libraries.find(libraryKey);
  if (library == libraries.end()) {
    auto cubin = compiler.compile(libraryKey, source, arch());
    if (!cubin.isOk())
      return Status(cubin.status().code(), where + ": " + cubin.status().message());
    cudaLibrary_t loaded = nullptr;
    DLC_RETURN_IF_ERROR(cudaCheck(cudaLibraryLoadData(&loaded, cubin->data(), nullptr, nullptr,
                                                      0, nullptr, nullptr, 0),
                                  "cudaLibraryLoadData", where + ", " + libraryKey));
    library = libraries.emplace(libraryKey, loaded).first;
  }
  return cudaCheck(cudaLibraryGetKernel(&kernel, library->second, entry.c_str()),
                   "cudaLibraryGetKernel", where + ", kernel " + entry);
}

Status CudaExecutor::Impl::allocateAndBind(size_t tableBytes) {
  // One workspace for every library call, sized to the largest need.
  for (const LaunchStep &l : launches)
    workspaceBytes = std::max({workspaceBytes, l.gemm ? l.gemm->workspaceBytes() : size_t(0),
                               l.conv ? l.conv->workspaceBytes() : size_t(0),
                               l.fusedBn ? l.fusedBn->workspaceBytes() : size_t(0)});
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
  for (LaunchStep &l : launches) {
    for (int64_t offset : l.pointerOffsets)
      l.pointers.push_back(arena + offset);
    if (l.hand)
      for (int i = 0; i < HandKernelArgs::kPointers; ++i)
        l.handArgs.p[i] = l.handOffsets[i] < 0 ? nullptr : arena + l.handOffsets[i];
    if (l.packTable) {
      std::string table = l.packTable(arena);
      packed.replace(l.tableOffset, table.size(), table);
    }
  }
  if (tableBytes)
    DLC_RETURN_IF_ERROR(cudaCheck(cudaMemcpyAsync(tables, packed.data(), tableBytes,
                                                  cudaMemcpyHostToDevice, stream),
                                  "cudaMemcpyAsync",
                                  "the optimizer kernels' segment tables and hand-written "
                                  "operand tables"));
  return cudaCheck(cudaStreamSynchronize(stream), "cudaStreamSynchronize", "the arena");
}

StatusOr<bool> CudaExecutor::Impl::prepareHandWritten(const Launch &launch,
                                                      KernelCompiler &compiler,
                                                      LaunchStep &step, std::string &reason,
                                                      size_t &tableBytes) {
  const Plan &p = plan();
  auto hand = planHandKernel(p, p.kernels[launch.kernels.front()]);
  if (!hand.isOk()) {
    reason += (reason.empty() ? "not hand-written: " : "; not hand-written: ") +
              hand.status().message();
    return false;
  }
  // One library per family.
  DLC_RETURN_IF_ERROR(loadKernel(compiler, "dlc_hw_" + hand->family,
                                 handKernelSource(hand->family), hand->name,
                                 step.path.label, step.kernel));
  step.path.path = "hand-written";
  step.hand = true;
  step.readsStep = hand->family == "dropout"; // the dropout counter, not the step
  step.kernelName = hand->name;
  step.handArgs = hand->args;
  std::fill(std::begin(step.handOffsets), std::end(step.handOffsets), int64_t(-1));
  for (size_t i = 0; i < hand->buffers.size(); ++i)
    step.handOffsets[i] = hand->buffers[i] < 0 ? -1 : p.buffers[hand->buffers[i]].offset;
  if (hand->tableSlot >= 0) {
    // The operand table joins the optimizer tables; runLaunch points
    // p[tableSlot] at it once they are on the device.
    step.handTableSlot = hand->tableSlot;
    step.packTable = [table = hand->table, buffers = hand->tableBuffers,
                      plan = &p](unsigned char *base) {
      std::vector<HandOperand> bound = table;
      for (size_t i = 0; i < bound.size(); ++i)
        bound[i].p = reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(base) +
                                              uintptr_t(plan->buffers[buffers[i]].offset));
      return std::string(reinterpret_cast<const char *>(bound.data()),
                         bound.size() * sizeof(HandOperand));
    };
    reserveTable(step, hand->table.size() * sizeof(HandOperand), tableBytes);
  }
  step.handPhases = hand->phases;
  if (hand->scratchSlot >= 0) {
    // Zeroed with the tables, and left with a zero counter by every launch.
    step.handScratchSlot = hand->scratchSlot;
    tableBytes = alignUp(tableBytes, kTableAlignment);
    step.scratchOffset = tableBytes;
    tableBytes += static_cast<size_t>(hand->scratchBytes);
  }
  int64_t cap = int64_t(device.multiprocessors) * kBlocksPerMultiprocessor;
  step.grid = dim3(static_cast<unsigned>(std::clamp<int64_t>(hand->blocks, 1, cap)));
  step.block = dim3(hand->blockSize);
  return true;
}

//===----------------------------------------------------------------------===//
// The step
//===----------------------------------------------------------------------===//

Status CudaExecutor::Impl::scheduleAllReduces() {
  const Plan &p = plan();
  std::vector<int64_t> waitAt = allReduceWaitPoints(p);
  std::vector<size_t> launchOf(p.kernels.size());
  for (size_t i = 0; i < launches.size(); ++i)
    for (size_t k : launches[i].launch.kernels)
      launchOf[k] = i;
  joinBefore.assign(launches.size(), {});
  forked.assign(launches.size(), nullptr);
  joined.assign(launches.size(), nullptr);
  for (size_t i = 0; i < launches.size(); ++i) {
    if (!launches[i].nccl)
      continue;
    int64_t wait = waitAt[launches[i].launch.kernels.front()];
    if (wait >= static_cast<int64_t>(p.kernels.size()))
      joinAtEnd.push_back(i);
    else
      joinBefore[launchOf[wait]].push_back(i);
    for (cudaEvent_t *event : {&forked[i], &joined[i]})
      DLC_RETURN_IF_ERROR(cudaCheck(cudaEventCreateWithFlags(event, cudaEventDisableTiming),
                                    "cudaEventCreateWithFlags", launches[i].path.label));
    if (!commStream)
      DLC_RETURN_IF_ERROR(cudaCheck(cudaStreamCreate(&commStream), "cudaStreamCreate",
                                    "the all-reduce stream"));
  }
  return Status::ok();
}

Status CudaExecutor::Impl::enqueueLaunch(size_t i, bool overlap) {
  LaunchStep &launch = launches[i];
  if (!overlap)
    return runLaunch(launch);
  const std::string &where = launch.path.label;
  for (size_t r : joinBefore[i])
    DLC_RETURN_IF_ERROR(cudaCheck(cudaStreamWaitEvent(stream, joined[r], 0),
                                  "cudaStreamWaitEvent", where + ", waiting for " +
                                                             launches[r].path.label));
  if (!launch.nccl)
    return runLaunch(launch);
  // Fork: the all-reduce starts once everything before it is enqueued
  // (its gradients are written), and the step's stream goes on.
  DLC_RETURN_IF_ERROR(
      cudaCheck(cudaEventRecord(forked[i], stream), "cudaEventRecord", where));
  DLC_RETURN_IF_ERROR(cudaCheck(cudaStreamWaitEvent(commStream, forked[i], 0),
                                "cudaStreamWaitEvent", where));
  DLC_RETURN_IF_ERROR(allReduce(launch, commStream));
  return cudaCheck(cudaEventRecord(joined[i], commStream), "cudaEventRecord", where);
}

Status CudaExecutor::Impl::joinAtStepEnd(bool overlap) {
  if (!overlap)
    return Status::ok();
  for (size_t r : joinAtEnd)
    DLC_RETURN_IF_ERROR(cudaCheck(cudaStreamWaitEvent(stream, joined[r], 0),
                                  "cudaStreamWaitEvent",
                                  "the end of the step, waiting for " + launches[r].path.label));
  return Status::ok();
}

Status CudaExecutor::Impl::allReduce(const LaunchStep &step, cudaStream_t on) {
  const Plan &p = plan();
  const PlanKernel &kernel = p.kernels[step.launch.kernels.front()];
  if (!communicator)
    return Status(StatusCode::kInvalidArgument,
                  step.path.label + ": " + runsAloneMessage(planRanks(p)));
  if (communicator->ranks() != planRanks(p))
    return Status(StatusCode::kInvalidArgument,
                  step.path.label + ": compiled for " + std::to_string(planRanks(p)) +
                      " ranks, run on " + std::to_string(communicator->ranks()));
  if (communicator->rank() != options.rank)
    return Status(StatusCode::kInvalidArgument,
                  step.path.label + ": the executor runs rank " + std::to_string(options.rank) +
                      " (its dropout masks) and its NCCL communicator is rank " +
                      std::to_string(communicator->rank()));
  std::vector<DeviceBuffer> bucket;
  for (size_t i = 0; i < kernel.inputs.size(); ++i) {
    const PlanBuffer &in = p.buffers[kernel.inputs[i]];
    const PlanBuffer &out = p.buffers[kernel.outputs[i]];
    bucket.push_back({arena + in.offset, arena + out.offset, in.numElements(), in.dtype});
  }
  if (Status s = communicator->allReduceMean(bucket, on); !s.isOk())
    return Status(s.code(), step.path.label + ": " + s.message());
  return Status::ok();
}

Status CudaExecutor::Impl::runLaunch(LaunchStep &step) {
  const std::string &where = step.path.label;
  if (step.nccl)
    return allReduce(step, stream);
  if (step.gemm)
    return step.gemm->run(lt, arena, workspace, workspaceBytes, stream);
  if (step.conv)
    return step.conv->run(dnn, arena, workspace, workspaceBytes);
  if (step.bn)
    return step.bn->run(dnn, arena, stream);
  if (step.fusedBn)
    return step.fusedBn->run(dnn, arena, reserve, workspace, workspaceBytes, stream);
  if (!step.kernel)
    return runOnHost(step);
  std::vector<void *> args;
  void *table = tables + step.tableOffset;
  if (step.hand) {
    // (DlcHandArgs a, const long long *step)
    if (step.handTableSlot >= 0)
      step.handArgs.p[step.handTableSlot] = table;
    if (step.handScratchSlot >= 0)
      step.handArgs.p[step.handScratchSlot] = tables + step.scratchOffset;
    args = {&step.handArgs, step.readsStep ? &deviceDropoutCounter : &deviceStep};
    // Earlier phases: cudaLaunchKernel copies the parameters, so the phase
    // slot can move on between launches (a graph capture copies them too).
    for (int phase = 0; phase + 1 < step.handPhases; ++phase) {
      step.handArgs.i[HandKernel::kPhaseSlot] = phase;
      DLC_RETURN_IF_ERROR(cudaCheck(
          cudaLaunchKernel(reinterpret_cast<const void *>(step.kernel), step.grid, step.block,
                           args.data(), 0, stream),
          "cudaLaunchKernel", where + ", kernel " + step.kernelName + " phase " +
                                  std::to_string(phase)));
    }
    step.handArgs.i[HandKernel::kPhaseSlot] = step.handPhases - 1;
  } else if (walksSegmentTable(step.form)) {
    // (const DlcSegment / DlcCastSegment *table, int segments, const long long *step)
    args = {&table, &step.segments, &deviceStep};
  } else {
    for (void *&pointer : step.pointers)
      args.push_back(&pointer);
    if (step.readsStep)
      args.push_back(&deviceDropoutCounter);
  }
  return cudaCheck(cudaLaunchKernel(reinterpret_cast<const void *>(step.kernel), step.grid,
                                    step.block, args.data(), 0, stream),
                   "cudaLaunchKernel", where + ", kernel " + step.kernelName);
}

Status CudaExecutor::Impl::copy(const std::vector<int32_t> &ids, bool toDevice,
                                const std::string &why) {
  unsigned char *mirror = host->hostArena();
  for (int32_t id : ids) {
    const PlanBuffer &b = plan().buffers[id];
    unsigned char *device = arena + b.offset, *hostCopy = mirror + b.offset;
    DLC_RETURN_IF_ERROR(cudaCheck(
        cudaMemcpyAsync(toDevice ? device : hostCopy, toDevice ? hostCopy : device, b.bytes,
                        toDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync", why + ", buffer '" + b.name + "'"));
  }
  // The mirror is pageable memory, rewritten by the next fallback.
  return waitFor(stream, nullptr, why);
}

Status CudaExecutor::Impl::waitFor(cudaStream_t on, cudaEvent_t event,
                                   const std::string &why) const {
  if (!communicator)
    return event ? cudaCheck(cudaEventSynchronize(event), "cudaEventSynchronize", why)
                 : cudaCheck(cudaStreamSynchronize(on), "cudaStreamSynchronize", why);
  return communicator->wait(
      [&]() -> StatusOr<bool> {
        cudaError_t r = event ? cudaEventQuery(event) : cudaStreamQuery(on);
        if (r == cudaErrorNotReady)
          return false;
        DLC_RETURN_IF_ERROR(cudaCheck(r, event ? "cudaEventQuery" : "cudaStreamQuery", why));
        return true;
      },
      why);
}

Status CudaExecutor::Impl::runOnHost(LaunchStep &step) {
  const std::string &where = step.path.label + " on the host";
  DLC_RETURN_IF_ERROR(download(step.hostReads, where));
  for (size_t k : step.launch.kernels)
    if (Status s = host->runKernel(k, stepCounter); !s.isOk())
      return Status(s.code(), step.path.label + " (host fallback): " + s.message());
  return upload(step.hostWrites, where);
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
    LaunchStep &launch = launches[i];
    if (profiling)
      DLC_RETURN_IF_ERROR(cudaCheck(cudaEventRecord(marks[i], stream), "cudaEventRecord", at));
    if (Status s = enqueueLaunch(i, overlap); !s.isOk())
      return Status(s.code(), at + ": " + s.message());
    if (options.syncEachLaunch || observer)
      DLC_RETURN_IF_ERROR(waitFor(stream, nullptr, at + ", after " + launch.path.label));
    if (observer)
      for (size_t k : launch.launch.kernels)
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
                                    "cudaEventElapsedTime", at + ", " + launches[i].path.label));
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
