//===- Parallel.h - simple work splitting over host threads -----*- C++ -*-===//
//
// The CPU backend is the numerical reference: kernels are straightforward
// loops, parallel only over independent outer indices (batch, channel) so
// every output element is computed by one thread in a fixed order and the
// results are bit-identical whatever the thread count. The thread ranks'
// all-reduce (Collective.h) splits its sums the same way.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_PARALLEL_H
#define DLC_RUNTIME_PARALLEL_H

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dlc::rt {

/// Threads the CPU kernels use: DLC_CPU_THREADS if set, else the hardware's.
int cpuThreadCount();

/// While alive, cpuThreadCount() is `threads` (at least 1) in this process:
/// the tests run one kernel on 1 and on 2 threads to see that the bytes do
/// not depend on the count. Not for use while kernels run on other threads.
class ScopedCpuThreads {
public:
  explicit ScopedCpuThreads(int threads);
  ~ScopedCpuThreads();
  ScopedCpuThreads(const ScopedCpuThreads &) = delete;
  ScopedCpuThreads &operator=(const ScopedCpuThreads &) = delete;

private:
  int previous_;
};

/// Calls job(p) for every p in [0, parts) at once and returns when all
/// are done. On OpenMP's threads where dlc was built with OpenMP: the team
/// oneDNN's kernels run on, so that the two never compete for the cores
/// (two thread pools spinning on two cores stall each other for a time
/// slice, milliseconds); else on threads started for the call.
void runParts(int parts, const std::function<void(int)> &job);
/// Whether runParts uses OpenMP's threads.
bool partsOnOpenMp();

/// The OpenMP runtime dlc loads is LLVM's (libomp, under the name
/// libgomp.so.1 from /usr/lib/llvm-22/lib): its waiting threads spin for
/// KMP_BLOCKTIME (200 ms) after a parallel region before they sleep.
/// Sleeping at once (OMP_WAIT_POLICY=passive, stops 17-19) cost a wake-up
/// at every region, a hundred a step of small launches: tiny_transformer
/// ran at 8,863 samples/s on 2 quiet cores against 36,790 spinning, and
/// small_convnet 2,939 against 3,869 (docs/CpuBackend.md has the table,
/// beside other load too). So dlc keeps the runtime's default, and only
/// makes OpenMP's default team DLC_CPU_THREADS threads (OMP_NUM_THREADS),
/// so that a run on fewer threads than cores spins no idle thread.
/// libomp reads its settings once, as it loads, so a program calls this
/// first thing in main: when DLC_CPU_THREADS is set and OMP_NUM_THREADS is
/// not, it sets it and executes itself again with the same arguments.
/// Without OpenMP, or where that fails, it returns.
void pinOpenMpThreads(char **argv);

/// Calls body(i) for every i in [begin, end), split into contiguous chunks
/// over cpuThreadCount() threads. Work below `grain` iterations runs inline.
template <typename Body>
void parallelFor(int64_t begin, int64_t end, Body body, int64_t grain = 1) {
  int64_t count = end - begin;
  int threads = cpuThreadCount();
  if (count <= 0)
    return;
  if (threads <= 1 || count <= grain) {
    for (int64_t i = begin; i < end; ++i)
      body(i);
    return;
  }
  int64_t chunks = std::min<int64_t>(threads, (count + grain - 1) / grain);
  int64_t per = (count + chunks - 1) / chunks;
  runParts(static_cast<int>(chunks), [&](int c) {
    for (int64_t i = begin + c * per; i < std::min(end, begin + (c + 1) * per); ++i)
      body(i);
  });
}

/// Threads that stay between calls, for work cut into many short jobs (the
/// fast mode's generated launches, a few microseconds each), where starting
/// threads per call would cost more than the work: OpenMP's team where dlc
/// has OpenMP (runParts), else workers of its own that spin briefly, then
/// sleep. One caller at a time.
class ThreadPool {
public:
  /// `threads` in all, the caller's included.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int threads() const { return threads_; }
  /// Calls job(p) for every p in [0, parts) (parts <= threads()), part 0 on
  /// the calling thread, part p on worker p; returns when all are done.
  void run(int parts, const std::function<void(int)> &job);

private:
  void work(int index);

  int threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  /// A run's number (high bits) and its parts (low 16 bits).
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int)> *job_ = nullptr;
};

} // namespace dlc::rt

#endif // DLC_RUNTIME_PARALLEL_H
