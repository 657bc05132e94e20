//===- CpuExecutor.cpp - run a plan on the CPU ----------------------------===//

#include "dlc/runtime/cpu/CpuExecutor.h"

#include "KernelRegistration.h"
#include "dlc/runtime/Half.h"
#include "dlc/runtime/Initializers.h"
#include "dlc/runtime/Shape.h"
#include "dlc/runtime/cpu/Dnnl.h"
#include "dlc/runtime/cpu/HostKernels.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <mutex>
#include <random>

namespace dlc::rt::cpu {

//===----------------------------------------------------------------------===//
// TensorRef and KernelContext
//===----------------------------------------------------------------------===//

int64_t TensorRef::numElements() const { return rt::numElements(*shape); }
int64_t TensorRef::storageElements() const {
  return rowStride > 0 && !shape->empty() && shape->back() > 0
             ? numElements() / shape->back() * rowStride
             : numElements();
}

int64_t TensorRef::dim(int64_t i) const {
  return (*shape)[i < 0 ? i + rank() : i];
}

Status KernelContext::error(const std::string &message) const {
  return Status(StatusCode::kInvalidArgument, "kernel '" + kernel_.op + "': " + message);
}

bool isHalf(DType dtype) { return dtype == DType::kF16 || dtype == DType::kBF16; }

void widenToFloat(const void *from, DType dtype, float *to, int64_t n) {
  const auto *h = static_cast<const uint16_t *>(from);
  if (dtype == DType::kF16)
    parallelFor(0, n, [&](int64_t i) { to[i] = halfToFloat(h[i]); }, kGrain);
  else
    parallelFor(0, n, [&](int64_t i) { to[i] = bfloat16ToFloat(h[i]); }, kGrain);
}

void roundFromFloat(const float *from, DType dtype, void *to, int64_t n) {
  auto *h = static_cast<uint16_t *>(to);
  if (dtype == DType::kF16)
    parallelFor(0, n, [&](int64_t i) { h[i] = floatToHalf(from[i]); }, kGrain);
  else
    parallelFor(0, n, [&](int64_t i) { h[i] = floatToBfloat16(from[i]); }, kGrain);
}

const KernelRegistry &cpuKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerShapeKernels(r);
    registerDenseKernels(r);
    registerAttentionKernels(r);
    registerSpatialKernels(r);
    registerCollectiveKernels(r);
    return r;
  }();
  return registry;
}

//===----------------------------------------------------------------------===//
// CpuExecutor
//===----------------------------------------------------------------------===//

CpuExecutor::CpuExecutor(Plan plan) : plan_(std::move(plan)) {}
CpuExecutor::~CpuExecutor() = default;

const KernelRegistry &fastKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r = dnnlKernels();
    registerFastLossKernels(r);
    registerFastLossScaleKernels(r);
    registerFastNormKernels(r);
    registerFastAttentionKernels(r);
    registerFastEmbeddingKernels(r);
    registerFastResizeKernels(r);
    return r;
  }();
  return registry;
}

bool CpuExecutor::takesBf16(const PlanKernel &k, const Plan &plan, const Options &options) {
  if (!options.libraryKernels || !options.nativeBf16Ops || !options.nativeBf16Ops->count(k.id) ||
      !options.libraryKernels->count(k.id))
    return false;
  bool anyBf16 = false;
  for (const std::vector<int32_t> *ids : {&k.inputs, &k.outputs})
    for (int32_t id : *ids) {
      DType dtype = plan.buffers[id].dtype;
      if (dtype == DType::kF16)
        return false;
      anyBf16 |= dtype == DType::kBF16;
    }
  return anyBf16;
}

CpuExecutor::Options CpuExecutor::fastOptions() {
  Options options;
  options.generatedLaunches = true;
  options.libraryKernels = &fastKernels();
  options.nativeBf16Ops = &dnnlNativeBf16Ops();
  options.kernelCacheDir = defaultHostKernelCacheDir();
  return options;
}

const HostKernelStats *CpuExecutor::hostKernelStats() const {
  return host_ ? &host_->stats() : nullptr;
}

int64_t CpuExecutor::launchesPerStep() const {
  int64_t launches = 0;
  for (size_t k = 0; k < plan_.kernels.size(); ++k, ++launches)
    if (int64_t l = host_ ? host_->launchStartingAt(k) : -1; l >= 0)
      k = host_->launches()[l].launch.kernels.back();
  return launches;
}

namespace {
/// MemAvailable from /proc/meminfo in bytes, or -1 where there is none.
int64_t hostMemoryAvailable() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:")
      return kib * 1024;
  return -1;
}
/// Float elements of scratch for the widened copies of kernel k's
/// half-precision buffers (the executor holds the most any kernel needs).
int64_t halfScratchElements(const Plan &plan, const PlanKernel &k) {
  int64_t scratch = 0;
  for (const std::vector<int32_t> *ids : {&k.inputs, &k.outputs})
    for (int32_t id : *ids)
      if (isHalf(plan.buffers[id].dtype))
        scratch += storageElements(plan.buffers[id]);
  return scratch;
}
/// "54.93 GB".
std::string gigabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GB", static_cast<double>(bytes) / 1e9);
  return text;
}
} // namespace

void CpuExecutor::FreeStorage::operator()(unsigned char *p) const { std::free(p); }

Status CpuExecutor::checkHostMemory(const Plan &plan, int copies) {
  int64_t scratch = 0;
  for (const PlanKernel &k : plan.kernels)
    scratch = std::max(scratch, halfScratchElements(plan, k));
  int64_t each = plan.arenaBytes + scratch * int64_t(sizeof(float));
  int64_t available = hostMemoryAvailable();
  if (available < 0 || each * copies <= available)
    return Status::ok();
  std::string what = gigabytes(plan.arenaBytes) + " arena (the memory planner's peak)";
  if (scratch)
    what += " and " + gigabytes(scratch * int64_t(sizeof(float))) +
            " for half-precision operands widened to float";
  return Status(StatusCode::kResourceExhausted,
                (copies > 1 ? std::to_string(copies) + " ranks of the step need " +
                                  gigabytes(each * copies) + " of host memory, each a " + what
                            : "the step needs " + gigabytes(each) + " of host memory: a " +
                                  what) +
                    "; " + gigabytes(available) +
                    " is available (MemAvailable in /proc/meminfo): lower --batch" +
                    (copies > 1 ? " or --gpus" : ""));
}

StatusOr<std::unique_ptr<CpuExecutor>> CpuExecutor::create(Plan plan) {
  return create(std::move(plan), Options());
}

StatusOr<std::unique_ptr<CpuExecutor>> CpuExecutor::create(Plan plan, const Options &options) {
  if (Status status = validatePlan(plan); !status.isOk())
    return status;
  std::unique_ptr<CpuExecutor> exec(new CpuExecutor(std::move(plan)));
  const Plan &p = exec->plan_;
  for (const PlanKernel &k : p.kernels) {
    auto it = cpuKernels().find(k.id);
    if (options.libraryKernels)
      if (auto lib = options.libraryKernels->find(k.id); lib != options.libraryKernels->end())
        it = lib;
    if (it == cpuKernels().end())
      return Status(StatusCode::kUnavailable,
                    "the CPU backend has no kernel for '" + k.op + "'");
    exec->kernels_.push_back(it->second);
    // Kernels compute in float: half-precision operands are widened into
    // scratch space and results rounded back (Half.h), except where the
    // library computes bf16 itself.
    bool native = takesBf16(k, p, options);
    exec->nativeBf16_.push_back(native);
    int64_t scratch = native ? 0 : halfScratchElements(p, k);
    exec->halfScratch_.push_back(scratch);
    exec->scratchElements_ = std::max(exec->scratchElements_, scratch);

  }
  exec->waitAt_ = allReduceWaitPoints(p);
  // One allocation for the whole step, aligned like the planner's offsets.
  if (Status fits = checkHostMemory(p); !fits.isOk())
    return fits;
  size_t bytes = static_cast<size_t>(p.arenaBytes) + 2 * 256;
  exec->storage_.reset(static_cast<unsigned char *>(std::malloc(bytes)));
  if (!exec->storage_)
    return Status(StatusCode::kResourceExhausted,
                  "cannot allocate the " + gigabytes(p.arenaBytes) + " arena on the host");
  exec->scratch_.resize(exec->scratchElements_);
  auto base = reinterpret_cast<uintptr_t>(exec->storage_.get());
  exec->arena_ = exec->storage_.get() + ((256 - base % 256) % 256);
  std::memset(exec->arena_, 0, p.arenaBytes);
  for (size_t i = 0; i < p.buffers.size(); ++i)
    exec->byName_.emplace(p.buffers[i].name, static_cast<int32_t>(i));
  if (options.generatedLaunches) {
    auto host = HostKernels::create(p, options.kernelCacheDir);
    if (!host.isOk())
      return host.status();
    exec->host_ = std::move(*host);
    exec->host_->bind(p, exec->arena_);
    if (options.partElements > 0)
      exec->host_->setPartElements(options.partElements);
    exec->pool_ = std::make_unique<ThreadPool>(options.threads > 0 ? options.threads
                                                                   : cpuThreadCount());
  }
  return exec;
}

TensorRef CpuExecutor::ref(int32_t id) {
  const PlanBuffer &b = plan_.buffers[id];
  return TensorRef{arena_ + b.offset, b.dtype, &b.shape, rowStride(b)};
}

const PlanBuffer *CpuExecutor::buffer(const std::string &name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : &plan_.buffers[it->second];
}

Status CpuExecutor::write(const std::string &name, const void *data, size_t bytes) {
  auto b = sizedBuffer(name, bytes);
  if (!b.isOk())
    return b.status();
  std::memcpy(arena_ + (*b)->offset, data, bytes);
  return Status::ok();
}

Status CpuExecutor::read(const std::string &name, void *data, size_t bytes) const {
  auto b = sizedBuffer(name, bytes);
  if (!b.isOk())
    return b.status();
  std::memcpy(data, arena_ + (*b)->offset, bytes);
  return Status::ok();
}

std::string CpuExecutor::bytesOf(int32_t id) const {
  const PlanBuffer &b = plan_.buffers.at(id);
  return std::string(reinterpret_cast<const char *>(arena_ + b.offset), b.bytes);
}

Status CpuExecutor::runKernel(size_t k, int64_t step) {
  const PlanKernel &kernel = plan_.kernels[k];
  std::vector<TensorRef> inputs, outputs;
  float *scratch = scratch_.data();
  // A half-precision buffer is seen widened to float; results are rounded
  // into their buffers after the kernel ran.
  auto widened = [&](int32_t id, bool read) {
    TensorRef r = ref(id);
    if (!isHalf(r.dtype) || nativeBf16_[k])
      return r;
    int64_t n = r.storageElements(); // padded rows keep their stride
    if (read)
      widenToFloat(r.data, r.dtype, scratch, n);
    r.data = scratch;
    r.dtype = DType::kF32;
    scratch += n;
    return r;
  };
  for (int32_t id : kernel.inputs)
    inputs.push_back(widened(id, true));
  for (int32_t id : kernel.outputs)
    outputs.push_back(widened(id, false));
  std::vector<TensorRef> results = halfScratch_[k] ? outputs : std::vector<TensorRef>();
  KernelContext context(kernel, std::move(inputs), std::move(outputs), step,
                        communicator_, rank_);
  if (Status status = kernels_[k](context); !status.isOk())
    return kernelError(status, step, k);
  for (size_t o = 0; o < results.size(); ++o) {
    const PlanBuffer &b = plan_.buffers[kernel.outputs[o]];
    if (isHalf(b.dtype))
      roundFromFloat(results[o].f32(), b.dtype, arena_ + b.offset, storageElements(b));
  }
  return Status::ok();
}

Status CpuExecutor::materializeGradientCast(size_t k, const std::vector<size_t> &launch) {
  const PlanKernel &kernel = plan_.kernels[k];
  if (kernel.opClass != OpClass::kOptimizer || kernel.inputs.size() < 2)
    return Status::ok();
  for (size_t c : launch)
    if (plan_.kernels[c].id == OpId::kCast && plan_.kernels[c].outputs[0] == kernel.inputs[1])
      return runKernel(c, stepCounter);
  return Status::ok();
}

Status CpuExecutor::kernelError(const Status &status, int64_t step, size_t k) {
  return Status(status.code(), "step " + std::to_string(step) + ", kernel #" +
                                   std::to_string(k) + ": " + status.message());
}

Status CpuExecutor::allReduceAside(size_t k, int64_t step) {
  // runKernel's scratch belongs to the kernels running meanwhile: half
  // precision operands are widened into memory of this call's own.
  const PlanKernel &kernel = plan_.kernels[k];
  std::vector<std::vector<float>> widened;
  widened.reserve(kernel.inputs.size() + kernel.outputs.size());
  auto operand = [&](int32_t id, bool read) {
    TensorRef r = ref(id);
    if (!isHalf(r.dtype))
      return r;
    std::vector<float> &copy = widened.emplace_back(r.storageElements());
    if (read)
      widenToFloat(r.data, r.dtype, copy.data(), r.storageElements());
    return TensorRef{copy.data(), DType::kF32, r.shape, r.rowStride};
  };
  std::vector<TensorRef> in, out;
  for (int32_t id : kernel.inputs)
    in.push_back(operand(id, true));
  for (int32_t id : kernel.outputs)
    out.push_back(operand(id, false));
  std::vector<TensorRef> results = out;
  KernelContext context(kernel, std::move(in), std::move(out), step, communicator_,
                        rank_);
  if (Status status = kernels_[k](context); !status.isOk())
    return status;
  for (size_t o = 0; o < results.size(); ++o) {
    TensorRef to = ref(kernel.outputs[o]);
    if (isHalf(to.dtype))
      roundFromFloat(results[o].f32(), to.dtype, to.data, to.storageElements());
  }
  return Status::ok();
}

Status CpuExecutor::step() {
  // All-reduces under way on threads of their own, with their kernel index.
  // A communicator runs one collective at a time, in the plan's order, as
  // every rank must: each waits for the one before it. Every one finishes
  // before step() returns, failed or not, so none outlives the buffers it
  // reads.
  std::vector<std::pair<size_t, std::shared_future<Status>>> pending;
  struct WaitAll {
    decltype(pending) &jobs;
    ~WaitAll() {
      for (auto &job : jobs)
        job.second.wait();
    }
  } waitAll{pending};
  auto finish = [&](auto done) -> Status {
    Status first = Status::ok();
    for (auto it = pending.begin(); it != pending.end();) {
      if (!done(*it)) {
        ++it;
        continue;
      }
      Status s = it->second.get();
      if (first.isOk() && !s.isOk())
        first = kernelError(s, stepCounter, it->first);
      it = pending.erase(it);
    }
    return first;
  };
  for (size_t k = 0; k < plan_.kernels.size(); ++k) {
    if (int64_t l = host_ ? host_->launchStartingAt(k) : -1; l >= 0) {
      // A generated launch computes all its kernels at once: the
      // all-reduces any of them waits for finish first.
      const std::vector<size_t> &kernels = host_->launches()[l].launch.kernels;
      size_t last = kernels.back();
      if (Status s = finish([&](auto &p) { return waitAt_[p.first] <= static_cast<int64_t>(last); });
          !s.isOk())
        return s;
      host_->run(static_cast<size_t>(l), stepCounter,
                 communicator_ ? communicator_->rank() : rank_, *pool_);
      if (observer_)
        for (size_t j : kernels) {
          // An observer that reads a kernel's operands after it ran: the
          // fused cast of an update's half gradient is computed in
          // registers, so it is run alone to show the gradient the update
          // read. A profile only times the launch: in BERT-base amp-bf16
          // xla's update, these casts (the reference's kernel) were about
          // 170 of the 224 ms the update was shown to take.
          if (observerReadsBuffers_)
            if (Status s = materializeGradientCast(j, kernels); !s.isOk())
              return s;
          observer_(j);
        }
      k = last;
      continue;
    }
    bool collective = plan_.kernels[k].opClass == OpClass::kCollective;
    bool async = overlap_ && collective && communicator_;
    // An all-reduce in its place waits for those under way.
    if (Status s = finish([&](auto &p) {
          return (collective && !async) || waitAt_[p.first] <= static_cast<int64_t>(k);
        });
        !s.isOk())
      return s;
    if (async) {
      std::shared_future<Status> before =
          pending.empty() ? std::shared_future<Status>() : pending.back().second;
      pending.emplace_back(k, std::async(std::launch::async,
                                         [this, k, before, step = stepCounter] {
                                           if (before.valid())
                                             before.wait();
                                           return allReduceAside(k, step);
                                         })
                                  .share());
    } else if (Status status = runKernel(k, stepCounter); !status.isOk()) {
      return status;
    }
    if (observer_)
      observer_(k);
  }
  if (Status s = finish([](auto &) { return true; }); !s.isOk())
    return s;
  ++stepCounter;
  return Status::ok();
}

float CpuExecutor::loss() const {
  float value = NAN;
  (void)read("loss", &value, sizeof(value));
  return value;
}

} // namespace dlc::rt::cpu

namespace dlc::rt::cpu {

Status CpuExecutor::initialize(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> values;
  for (const PlanBuffer &b : plan_.buffers) {
    unsigned char *where = arena_ + b.offset;
    switch (b.role) {
    case BufferRole::kParam:
    case BufferRole::kState:
    case BufferRole::kOptimizerState:
      if (Status status = initializeValues(b, rng, values); !status.isOk())
        return status;
      if (isHalf(b.dtype))
        roundFromFloat(values.data(), b.dtype, where, b.numElements());
      else
        std::memcpy(where, values.data(), values.size() * sizeof(float));
      break;
    case BufferRole::kConstant:
      std::memcpy(where, b.data.data(), b.data.size());
      break;
    default:
      break;
    }
  }
  stepCounter = 0;
  return Status::ok();
}

Status CpuExecutor::fillSyntheticBatch(uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < plan_.buffers.size(); ++i) {
    const PlanBuffer &b = plan_.buffers[i];
    if (b.role != BufferRole::kInput && b.role != BufferRole::kLabel)
      continue;
    unsigned char *where = arena_ + b.offset;
    if (b.dtype == DType::kF32) {
      std::normal_distribution<float> normal(0.0f, 1.0f);
      auto *data = reinterpret_cast<float *>(where);
      for (int64_t e = 0; e < b.numElements(); ++e)
        data[e] = normal(rng);
      continue;
    }
    int64_t range = integerRangeOf(plan_, static_cast<int32_t>(i));
    if (range <= 0)
      return Status(StatusCode::kInvalidArgument,
                    "cannot synthesize '" + b.name +
                        "': no embedding or loss kernel tells its range");
    std::uniform_int_distribution<int64_t> uniform(0, range - 1);
    for (int64_t e = 0; e < b.numElements(); ++e) {
      int64_t v = uniform(rng);
      if (b.dtype == DType::kI64)
        reinterpret_cast<int64_t *>(where)[e] = v;
      else
        reinterpret_cast<int32_t *>(where)[e] = static_cast<int32_t>(v);
    }
  }
  return Status::ok();
}

} // namespace dlc::rt::cpu
