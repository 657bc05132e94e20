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
  std::vector<std::thread> pool;
  for (int64_t c = 1; c < chunks; ++c)
    pool.emplace_back([=, &body] {
      for (int64_t i = begin + c * per; i < std::min(end, begin + (c + 1) * per); ++i)
        body(i);
    });
  for (int64_t i = begin; i < std::min(end, begin + per); ++i)
    body(i);
  for (std::thread &t : pool)
    t.join();
}

/// Threads that stay between calls, for work cut into many short jobs (the
/// fast mode's generated launches, a few microseconds each), where starting
/// threads per call as parallelFor does would cost more than the work.
/// Waiting workers spin briefly, then sleep. One caller at a time.
class ThreadPool {
public:
  /// `threads` in all, the caller's included.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  /// Calls job(p) for every p in [0, parts) (parts <= threads()), part 0 on
  /// the calling thread, part p on worker p; returns when all are done.
  void run(int parts, const std::function<void(int)> &job);

private:
  void work(int index);

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
