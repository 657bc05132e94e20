//===- CpuExecutor.h - run a plan on the CPU --------------------*- C++ -*-===//
//
// The CPU backend: the numerical reference every other backend and every
// fusion is checked against. It allocates the plan's arena once, fills the
// parameters from their initializers, and runs the kernels in order.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CPU_CPUEXECUTOR_H
#define DLC_RUNTIME_CPU_CPUEXECUTOR_H

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Executor.h"
#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace dlc::rt {
class ThreadPool; // Parallel.h
} // namespace dlc::rt

namespace dlc::rt::cpu {

/// A buffer of the arena as a kernel sees it.
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::kF32;
  const std::vector<int64_t> *shape = nullptr;
  /// Elements from one row's start to the next where the plan padded the
  /// buffer's rows (rowStride in Plan.h), 0 where it is dense. Only the
  /// kernels rowStrideRefusal accepts see a nonzero one.
  int64_t rowStride = 0;

  int64_t numElements() const;
  /// The elements its bytes hold: numElements(), or rows x rowStride.
  int64_t storageElements() const;
  /// The row stride in elements: rowStride, or the last dimension.
  int64_t ld() const { return rowStride > 0 ? rowStride : dim(-1); }
  int64_t dim(int64_t i) const; // negative counts from the end
  int64_t rank() const { return static_cast<int64_t>(shape->size()); }
  float *f32() const { return static_cast<float *>(data); }
  int64_t *i64() const { return static_cast<int64_t *>(data); }
};

/// What a kernel gets: its operands, results, attributes and the step.
class KernelContext {
public:
  KernelContext(const PlanKernel &kernel, std::vector<TensorRef> inputs,
                std::vector<TensorRef> outputs, int64_t step,
                Communicator *communicator = nullptr, int rank = 0)
      : kernel_(kernel), inputs(std::move(inputs)), outputs(std::move(outputs)),
        stepIndex(step), comm(communicator),
        rankIndex(communicator ? communicator->rank() : rank) {}

  const TensorRef &in(size_t i) const { return inputs.at(i); }
  const TensorRef &out(size_t i) const { return outputs.at(i); }
  size_t numInputs() const { return inputs.size(); }
  size_t numOutputs() const { return outputs.size(); }
  /// The training step being run, from 0.
  int64_t step() const { return stepIndex; }
  OpId op() const { return kernel_.id; }
  /// The plan's kernel: its typed attributes (`kernel().intAttr("axis", 0)`).
  const PlanKernel &kernel() const { return kernel_; }
  /// This rank's handle on its data-parallel group; null on one rank (and
  /// in the CUDA backend's host fallback, which averages nothing).
  Communicator *communicator() const { return comm; }
  /// This rank's index in its data-parallel group, 0 on one rank: dropout
  /// draws each rank's own masks by it.
  int rank() const { return rankIndex; }

  /// A kernel's error, naming the op.
  Status error(const std::string &message) const;
  /// The same kernel over other buffers (an adapter's copies of these).
  KernelContext withBuffers(std::vector<TensorRef> inputs,
                            std::vector<TensorRef> outputs) const {
    return KernelContext(kernel_, std::move(inputs), std::move(outputs), stepIndex,
                         comm, rankIndex);
  }

private:
  const PlanKernel &kernel_;
  std::vector<TensorRef> inputs, outputs;
  int64_t stepIndex;
  Communicator *comm;
  int rankIndex;
};

using KernelFn = std::function<Status(const KernelContext &)>;
using KernelRegistry = std::map<OpId, KernelFn>;

/// fp16 / bf16 buffers, which kernels see widened to float.
bool isHalf(DType dtype);
/// Widens `n` fp16 / bf16 values to float, and rounds them back (to nearest
/// even).
void widenToFloat(const void *from, DType dtype, float *to, int64_t n);
void roundFromFloat(const float *from, DType dtype, void *to, int64_t n);

/// Every CPU kernel, by op.
const KernelRegistry &cpuKernels();

/// What --backend cpu runs instead of cpuKernels() where it has the op:
/// oneDNN's kernels (Dnnl.h) and dlc's own fast host versions of
/// reference kernels (cross-entropy, loss-scale status, layer norm,
/// embedding, bilinear resize; runtime/src/cpu/Fast*.cpp).
const KernelRegistry &fastKernels();

class HostKernels;
struct HostKernelStats;

class CpuExecutor : public Executor {
public:
  /// How the kernels run. The defaults are the reference: every plan kernel
  /// on its own, by cpuKernels().
  struct Options {
    /// The fast mode (HostKernels.h): every launch the kernel generator
    /// covers runs as one compiled host kernel, all its plan kernels at
    /// once, on cpuThreadCount() threads; the others run one by one.
    bool generatedLaunches = false;
    /// Kernels by op that take precedence over cpuKernels() for the
    /// kernels run one by one (a vendor library's); null: none.
    const KernelRegistry *libraryKernels = nullptr;
    /// Ops of libraryKernels that take bf16 operands and results as they
    /// are (oneDNN's, where the CPU computes bf16); null: none. Every other
    /// kernel sees half-precision buffers widened to float.
    const std::set<OpId> *nativeBf16Ops = nullptr;
    /// Where the fast mode keeps its compiled kernels ("" is no cache).
    std::string kernelCacheDir;
    /// The fast mode's threads; 0 is cpuThreadCount(). Results are the same
    /// for every count (each output element is one thread's, in one order).
    int threads = 0;
    /// Elements a generated launch gives each thread at least; 0 is the
    /// default (HostKernels.h). Tests set 1 to cut small launches too.
    int64_t partElements = 0;
  };
  /// Whether kernel `k`, run one by one under `options`, reads and writes
  /// its bf16 buffers as they are: its op is one of nativeBf16Ops and none
  /// of its buffers is fp16. Else the executor widens them to float.
  static bool takesBf16(const PlanKernel &k, const Plan &plan, const Options &options);
  /// --backend cpu: generated launches as compiled host kernels, and
  /// oneDNN's kernels (Dnnl.h) for the heavy ops where dlc has oneDNN.
  /// Options() is --backend reference, the numerical truth.
  static Options fastOptions();

  /// Refuses a plan with a kernel the CPU backend lacks or an element type
  /// it does not run, naming both, and one that does not fit in the host's
  /// available memory (checkHostMemory). The fast mode also fails when the
  /// host compiler does (HostKernels.h).
  static StatusOr<std::unique_ptr<CpuExecutor>> create(Plan plan, const Options &options);
  /// The reference (Options()).
  static StatusOr<std::unique_ptr<CpuExecutor>> create(Plan plan);
  ~CpuExecutor() override;
  /// kResourceExhausted, naming what is needed and what is available, when
  /// `copies` executors of `plan` (ranks run as threads) would need more
  /// host memory than /proc/meminfo's MemAvailable; ok where it cannot tell.
  /// Linux would promise the memory and kill the process touching it.
  static Status checkHostMemory(const Plan &plan, int copies = 1);

  const char *backendName() const override { return "cpu"; }
  Status initialize(uint64_t seed) override;
  Status fillSyntheticBatch(uint64_t seed) override;

  Status write(const std::string &name, const void *data, size_t bytes) override;
  Status read(const std::string &name, void *data, size_t bytes) const override;
  const PlanBuffer *buffer(const std::string &name) const override;
  std::string bytesOf(int32_t id) const override;

  void setKernelObserver(std::function<void(size_t)> observer, bool readsBuffers) override {
    observer_ = std::move(observer);
    observerReadsBuffers_ = readsBuffers;
  }

  Status step() override;
  float loss() const override;
  int64_t stepsRun() const override { return stepCounter; }
  const Plan &plan() const override { return plan_; }

  /// Runs kernel `k` of the plan alone, as step `step` would: the CUDA
  /// backend's host fallback runs the kernels it has no device code for
  /// through this, on a host copy of their buffers.
  Status runKernel(size_t k, int64_t step);
  /// Makes this executor rank `communicator->rank()` of a data-parallel
  /// group: its all_reduce kernels average with the other ranks'. A plan
  /// compiled for N ranks cannot step without a group of N.
  void setCommunicator(Communicator *communicator) { communicator_ = communicator; }
  /// The rank whose dropout masks the kernels draw, without a communicator:
  /// the CUDA backend's host fallback of rank r (default 0).
  void setRank(int rank) { rank_ = rank; }
  /// Whether an all_reduce runs on a thread of its own alongside the
  /// kernels after it, until the first that touches its operands
  /// (allReduceWaitPoints), as DDP overlaps a bucket with the rest of the
  /// backward pass (default). Off, each runs in its place. Both give the
  /// same bytes.
  void setOverlapAllReduce(bool overlap) { overlap_ = overlap; }
  /// The arena: buffer b lives at hostArena() + b.offset.
  unsigned char *hostArena() { return arena_; }
  /// The fast mode's launches and compile time; null in the reference mode.
  const HostKernelStats *hostKernelStats() const;
  /// The launches a step makes, as step() makes them: a generated host
  /// launch once, every other kernel alone (the reference mode: every
  /// kernel). What a CPU run's report counts, not the CUDA backend's.
  int64_t launchesPerStep() const;

private:
  explicit CpuExecutor(Plan plan);
  TensorRef ref(int32_t id);
  /// All_reduce kernel k on a thread beside the step's (its own memory for
  /// half-precision operands, not the kernels' scratch).
  Status allReduceAside(size_t k, int64_t step);
  /// Runs the cast of generated launch `launch` that writes optimizer
  /// kernel k's gradient, if there is one (for an observer).
  Status materializeGradientCast(size_t k, const std::vector<size_t> &launch);
  /// Kernel k's failure at step `step`, as every kernel reports it.
  static Status kernelError(const Status &status, int64_t step, size_t k);

  Plan plan_;
  std::vector<KernelFn> kernels_;
  /// malloc'd, not new'd: an arena too large for the host is an error to
  /// report, and operator new would call a new-handler (LLVM's aborts).
  struct FreeStorage {
    void operator()(unsigned char *p) const;
  };
  std::unique_ptr<unsigned char[], FreeStorage> storage_;
  unsigned char *arena_ = nullptr;
  std::map<std::string, int32_t> byName_;
  std::function<void(size_t)> observer_;
  bool observerReadsBuffers_ = true;
  Communicator *communicator_ = nullptr;
  int rank_ = 0;
  bool overlap_ = true;
  /// allReduceWaitPoints(plan_).
  std::vector<int64_t> waitAt_;
  int64_t stepCounter = 0;
  /// Per kernel: float elements of scratch its half-precision buffers need.
  std::vector<int64_t> halfScratch_;
  /// Per kernel: takesBf16().
  std::vector<bool> nativeBf16_;
  int64_t scratchElements_ = 0;
  std::vector<float> scratch_;
  /// The fast mode's kernels and threads; null in the reference mode.
  std::unique_ptr<HostKernels> host_;
  std::unique_ptr<ThreadPool> pool_;
};

} // namespace dlc::rt::cpu

#endif // DLC_RUNTIME_CPU_CPUEXECUTOR_H
