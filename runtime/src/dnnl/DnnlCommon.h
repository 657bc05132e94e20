//===- DnnlCommon.h - what the oneDNN kernels share -------------*- C++ -*-===//
//
// Primitives are made once per kernel configuration (a Key of shapes and
// attributes) and kept in a thread-safe Cache: creating one costs far more
// than running a small one. Executing a primitive is thread-safe in
// oneDNN; its scratchpad is ours (scratchpad_mode::user) and per thread, so
// ranks running as threads can run the same primitive at once (Debian's
// build has DNNL_ENABLE_CONCURRENT_EXEC, whose library scratchpad would be
// per primitive, hence shared between them).
//
// Buffers stay in the plan's plain layouts (NCHW / NHWC, OIHW / OHWI).
// Where a primitive wants another (blocked) layout, an Operand reorders
// into per-thread memory on the way in, or out of it on the way back.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_DNNL_DNNLCOMMON_H
#define DLC_RUNTIME_DNNL_DNNLCOMMON_H

#include "dlc/runtime/cpu/CpuExecutor.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace dlc::rt::cpu::onednn {

using dims = dnnl::memory::dims;
using md = dnnl::memory::desc;
using tag = dnnl::memory::format_tag;
constexpr dnnl::memory::data_type kF32 = dnnl::memory::data_type::f32;

dnnl::engine &engine();
/// The calling thread's stream (in-order, CPU: execution is synchronous).
dnnl::stream &stream();

/// Registration of each family's kernels (DnnlConv.cpp, ...).
void registerConvKernels(KernelRegistry &registry);
void registerMatmulKernels(KernelRegistry &registry);
/// GFLOP/s of a 512^3 f32 matrix product here (dnnlGemmGflops).
double measureGemmGflops();
void registerNormKernels(KernelRegistry &registry);
void registerPoolKernels(KernelRegistry &registry);

//===----------------------------------------------------------------------===//
// Running a kernel
//===----------------------------------------------------------------------===//

/// Gives oneDNN's OpenMP team on the calling thread cpuThreadCount()
/// threads (the count is a thread's own OpenMP setting, so every caller
/// sets it; it costs a store).
void useCpuThreads();

/// While alive, oneDNN's calls on this thread run on it alone (its
/// OpenMP thread count set to 1; the previous count comes back after).
class ScopedOneThread {
public:
  ScopedOneThread();
  ~ScopedOneThread();
  ScopedOneThread(const ScopedOneThread &) = delete;
  ScopedOneThread &operator=(const ScopedOneThread &) = delete;

private:
  int previous_ = 1;
};

/// The reference kernel of c's op, for configurations oneDNN does not run.
Status runReference(const KernelContext &c);

/// An invalid-argument error unless every operand and result is f32, or
/// also bf16 where `bf16` (an op of dnnlNativeBf16Ops()); the executor
/// widens the other half-precision buffers to float around the kernel.
Status requireF32(const KernelContext &c, bool bf16 = false);

/// oneDNN's element type of an operand that requireF32 let through.
dnnl::memory::data_type dataType(const TensorRef &t);

/// Runs `body` (returning Status, and which may throw dnnl::error) with
/// the thread count set, turning oneDNN's errors into a Status that names
/// the op.
template <typename Body> Status guarded(const KernelContext &c, Body body, bool bf16 = false) {
  if (Status s = requireF32(c, bf16); !s.isOk())
    return s;
  try {
    useCpuThreads();
    return body();
  } catch (const dnnl::error &e) {
    return Status(StatusCode::kInternal,
                  "kernel '" + c.kernel().op + "': oneDNN: " + e.what());
  }
}

//===----------------------------------------------------------------------===//
// Primitive cache
//===----------------------------------------------------------------------===//

/// Shapes and attributes that decide a primitive. The thread count is not
/// in it: cpuThreadCount() is fixed for the process.
using Key = std::vector<int64_t>;

/// The key's common part: the op's tag and every operand's and result's
/// shape; each kernel appends the attributes it reads.
Key shapeKey(const KernelContext &c, int64_t opTag);

/// Entries made once per key and shared; a null entry marks a
/// configuration oneDNN does not implement (the reference runs it).
template <typename Entry> class Cache {
public:
  /// The entry of `key`, made by make() the first time. make() runs under
  /// the lock: a configuration is built once even when ranks (threads)
  /// meet it together.
  template <typename Make>
  std::shared_ptr<const Entry> get(const Key &key, Make make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end())
      return it->second;
    std::shared_ptr<const Entry> entry;
    try {
      entry = make();
    } catch (const dnnl::error &e) {
      if (e.status != dnnl_unimplemented)
        throw;
    }
    entries_.emplace(key, entry);
    return entry;
  }

private:
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<const Entry>> entries_;
};

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Per-thread memory reused across calls, one region per role so that
/// regions in use together never overlap.
enum class Slot { kScratchpad, kSrc, kWeights, kDst, kWorkspace, kStats, kCount };
void *threadBuffer(Slot slot, size_t bytes);

/// A primitive and the scratchpad it needs.
struct Prim {
  dnnl::primitive primitive;
  md scratchpad;
};

/// Attributes of every primitive: our scratchpad, not the library's.
dnnl::primitive_attr userScratchpad();

template <typename PrimitiveT, typename PD> Prim makePrim(const PD &pd) {
  return Prim{PrimitiveT(pd), pd.scratchpad_desc()};
}

/// Executes p with `args` (plus its scratchpad) on the thread's stream.
void execute(const Prim &p, std::unordered_map<int, dnnl::memory> args);

/// A plan buffer of layout `user` as a primitive sees it (`want`): the
/// buffer itself when the two agree, else a reordered copy.
struct Operand {
  md user, want;
  bool input = true;
  std::optional<Prim> reorder; ///< user -> want for inputs, back for outputs

  /// `input`: reorder into `want` before the primitive, else out of it
  /// after.
  static Operand make(const md &user, const md &want, bool input);
  /// The memory to bind: the buffer, or slot's region (an input
  /// reordered into it).
  dnnl::memory bind(void *data, Slot slot) const;
  /// After the primitive: an output's reorder back into the buffer.
  void finish(const dnnl::memory &bound, void *data) const;
};

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

enum class Layout { kNchw, kNhwc };

/// The `layout` attribute as the reference reads it; unknown ones are an
/// error, as there.
StatusOr<Layout> layoutOf(const KernelContext &c);

/// A rank-4 buffer's logical [n, c, h, w] in `layout`.
dims nchwDims(const std::vector<int64_t> &shape, Layout layout);

/// An activation of logical dims [n, c, h, w] stored in `layout`.
md activationDesc(const dims &nchw, Layout layout, dnnl::memory::data_type type = kF32);

/// md of row-major `shape`.
md plainDesc(const std::vector<int64_t> &shape, dnnl::memory::data_type type = kF32);

} // namespace dlc::rt::cpu::onednn

#endif // DLC_RUNTIME_DNNL_DNNLCOMMON_H
