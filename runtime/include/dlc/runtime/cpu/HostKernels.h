//===- HostKernels.h - generated launches as compiled host code -*- C++ -*-===//
//
// The CPU backend's fast mode runs each launch the kernel generator covers
// as one fused loop over memory: the generator's host target
// (KernelTarget::kHost) writes every such launch as C++, all of a plan's
// kernels go into one translation unit, and the system compiler turns it
// into one shared object (-O3 -march=native, no fast-math), kept on disk
// under a hash of the source, the compiler and the flags, as NVRTC's cubins
// are. A kernel then runs as `parts` calls on the threads of a pool, each
// computing a contiguous share of the launch's items; every output element
// is computed by one call, in an order fixed by the source, so results do
// not depend on the thread count.
//
// Groups the generator cannot compute whole (a GEMM with its epilogue,
// paddle's batch norm + relu) are split as LaunchPaths splits them: the
// element-wise runs are generated, the rest run op by op.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CPU_HOSTKERNELS_H
#define DLC_RUNTIME_CPU_HOSTKERNELS_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/PlanLaunches.h"
#include "dlc/runtime/codegen/KernelCodegen.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlc::rt {
class ThreadPool; // Parallel.h
} // namespace dlc::rt

namespace dlc::rt::cpu {


/// One launch of the fast mode: a generated kernel, or kernels run one by
/// one (`reason` says why).
struct HostLaunch {
  Launch launch;
  std::optional<codegen::GeneratedKernel> kernel;
  std::string reason;
  /// As the CUDA backend's DeviceLaunch: a part of a group that is not one
  /// launch, and whether the group runs as one call (the CPU's op) and one
  /// generated kernel (codegen::markCallPlusKernel), which is no split.
  bool splitFromGroup = false;
  bool callPlusKernel = false;
  std::string splitReason;
};

/// The plan's launches, groups the generator refuses split, every launch
/// the generator covers with its host kernel (lone row ops, dropouts and
/// optimizer updates included).
std::vector<HostLaunch> planHostLaunches(const Plan &plan);

/// The kernels of the launches planHostLaunches generates, in launch order
/// (what --dump-kernels writes for the host).
std::vector<codegen::GeneratedKernel> planHostKernels(const Plan &plan);

/// $DLC_HOST_CXX (a command, arguments allowed), else "c++".
std::string hostCompiler();
/// The flags every host kernel library is compiled with.
const std::vector<std::string> &hostCompileFlags();
/// $DLC_KERNEL_CACHE, else ~/.cache/dlc/host-kernels, else "" (no cache:
/// a temporary directory, compiled every time).
std::string defaultHostKernelCacheDir();

/// A loaded shared object of host kernels.
class HostKernelLibrary {
public:
  /// Every kernel's entry: its arguments as the kernel's parameters in
  /// order, integers (segments, parts) cast to pointers.
  using Entry = void (*)(void *const *args);

  /// One translation unit of `kernels` (host target; equal names once),
  /// compiled unless `cacheDir` holds it. A compiler failure is
  /// kInternal naming the source kept for it and the log's first lines.
  static StatusOr<std::shared_ptr<HostKernelLibrary>>
  build(const std::vector<const codegen::GeneratedKernel *> &kernels,
        const std::string &cacheDir = defaultHostKernelCacheDir());
  ~HostKernelLibrary();

  /// The kernel's entry, or null if it is not in the library.
  Entry entry(const std::string &kernelName) const;
  /// Seconds the compiler ran; 0 on a cache hit.
  double compileSeconds() const { return compileSeconds_; }
  bool cacheHit() const { return cacheHit_; }
  /// The shared object.
  const std::string &path() const { return path_; }

private:
  HostKernelLibrary() = default;
  void *handle_ = nullptr;
  std::map<std::string, Entry> entries_;
  double compileSeconds_ = 0;
  bool cacheHit_ = false;
  std::string path_;
};

/// What the fast mode made of a plan, for reports.
struct HostKernelStats {
  size_t launches = 0;  // the fast mode's launches (groups split)
  size_t generated = 0; // of them, run as a generated kernel
  size_t kernels = 0;   // plan kernels computed by generated launches
  size_t distinct = 0;  // distinct kernels compiled
  double compileSeconds = 0;
  bool cacheHit = false;
  std::string library; // the shared object's path
};

/// A plan's generated launches, compiled and bound to an arena.
class HostKernels {
public:
  static StatusOr<std::unique_ptr<HostKernels>>
  create(const Plan &plan, const std::string &cacheDir = defaultHostKernelCacheDir());

  const std::vector<HostLaunch> &launches() const { return launches_; }
  const HostKernelStats &stats() const { return stats_; }
  /// The generated launch that starts at plan kernel k, or -1.
  int64_t launchStartingAt(size_t k) const { return startsAt_[k]; }

  /// Points every kernel's arguments (and tables) at the arena's buffers.
  void bind(const Plan &plan, unsigned char *arena);
  /// Runs generated launch `l` (after bind) as step `step` of rank `rank`
  /// (dropout masks, Collective.h) on the pool's threads.
  void run(size_t l, int64_t step, int rank, ThreadPool &pool);
  /// Elements each part of a launch gets at least (kDefaultPartElements).
  void setPartElements(int64_t elements) { partElements_ = elements; }
  /// Some microseconds of streaming per part, so that waking a worker
  /// (about a microsecond while it spins) stays small beside the work.
  static constexpr int64_t kDefaultPartElements = int64_t(1) << 14;

private:
  HostKernels() = default;
  struct Bound {
    HostKernelLibrary::Entry entry = nullptr;
    std::vector<void *> args; // two slots for the part and the parts last
    std::vector<uint64_t> table;
    std::vector<uint64_t> scratch; // GeneratedKernel::scratchBytes, zeroed
    int64_t elements = 0; // for the parts a launch is cut into
    int64_t items = 0;    // the kernel's work: no more parts than this
  };
  std::vector<HostLaunch> launches_;
  std::vector<int64_t> startsAt_;
  std::vector<Bound> bound_; // per launch
  std::shared_ptr<HostKernelLibrary> library_;
  HostKernelStats stats_;
  /// What the kernels read through their step pointer.
  long long step_ = 0, dropoutCounter_ = 0;
  int64_t partElements_ = kDefaultPartElements;
};

/// One generated launch run against its plan kernels' reference kernels.
struct HostLaunchCheck {
  size_t launch = 0; // into planHostLaunches
  /// The largest, over the buffers the launch writes, of max |fast - ref| /
  /// max |ref| (compare_dumps.py's measure), and the buffer it was.
  double error = 0;
  std::string buffer;
  /// The relative spacing of that buffer's type (2^-23 for f32, 2^-10 for
  /// f16, 2^-7 for bf16): a rounding the two sides take differently moves a
  /// half-precision value by that much, whatever a float tolerance says.
  double unit = 0;
  /// Whether the launch is within `tolerance`, or within one unit.
  bool within(double tolerance) const { return error <= std::max(tolerance, unit); }
  /// With `timedRuns`: the fastest of that many runs of the host kernel
  /// alone, in seconds (0 when not timed). The minimum, since other load on
  /// the machine only adds.
  double minSeconds = 0;
};
/// Every generated launch of `plan` alone on random operands, once by its
/// host kernel and once kernel by kernel with the reference (step 0, rank
/// 0). A value the host kernel fails to write shows as a large error.
/// With `timedRuns` > 0, each launch is then run that many more times (at
/// most about 0.1 s of them) and timed.
StatusOr<std::vector<HostLaunchCheck>>
checkHostLaunches(const Plan &plan, uint64_t seed = 1,
                  const std::string &cacheDir = defaultHostKernelCacheDir(), int timedRuns = 0);

} // namespace dlc::rt::cpu

#endif // DLC_RUNTIME_CPU_HOSTKERNELS_H
