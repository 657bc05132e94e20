//===- Parallel.cpp - how many host threads work splits over --------------===//

#include "dlc/runtime/Parallel.h"

#include <cstdlib>
#include <string>
#include <unistd.h>

#ifndef DLC_OPENMP
#define DLC_OPENMP 0
#endif
#if DLC_OPENMP
#include <omp.h>
#endif

namespace dlc::rt {

namespace {
/// ScopedCpuThreads' count, 0 where none is alive.
std::atomic<int> threadOverride{0};
} // namespace

ScopedCpuThreads::ScopedCpuThreads(int threads)
    : previous_(threadOverride.exchange(std::max(threads, 1))) {}

ScopedCpuThreads::~ScopedCpuThreads() { threadOverride.store(previous_); }

int cpuThreadCount() {
  if (int chosen = threadOverride.load(std::memory_order_relaxed))
    return chosen;
  static const int count = [] {
    if (const char *env = std::getenv("DLC_CPU_THREADS")) {
      int n = std::atoi(env);
      if (n >= 1)
        return n;
    }
    unsigned hw = std::thread::hardware_concurrency();
    return hw ? static_cast<int>(hw) : 1;
  }();
  return count;
}

bool partsOnOpenMp() { return DLC_OPENMP != 0; }

void pinOpenMpThreads(char **argv) {
  const char *threads = std::getenv("DLC_CPU_THREADS");
  if (!partsOnOpenMp() || !threads || std::getenv("OMP_NUM_THREADS"))
    return;
  if (setenv("OMP_NUM_THREADS", std::to_string(cpuThreadCount()).c_str(), 1) != 0)
    return;
  execv("/proc/self/exe", argv);
  // Still here: OpenMP's default team stays the machine's cores.
}

void runParts(int parts, const std::function<void(int)> &job) {
  if (parts <= 1) {
    if (parts == 1)
      job(0);
    return;
  }
#if DLC_OPENMP
  // OpenMP may give fewer threads than asked (a nested region, a limit):
  // every part still runs, on the threads there are.
#pragma omp parallel num_threads(parts)
  for (int p = omp_get_thread_num(); p < parts; p += omp_get_num_threads())
    job(p);
#else
  std::vector<std::thread> threads;
  for (int p = 1; p < parts; ++p)
    threads.emplace_back([&job, p] { job(p); });
  job(0);
  for (std::thread &t : threads)
    t.join();
#endif
}

namespace {
/// Polls of a waiting thread before it sleeps: some tens of microseconds,
/// about the gap between two generated launches of a step.
constexpr int kSpins = 1000;

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}
} // namespace

ThreadPool::ThreadPool(int threads) : threads_(std::max(threads, 1)) {
  if (partsOnOpenMp())
    return;
  for (int i = 1; i < threads_; ++i)
    workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    generation_.fetch_add(uint64_t(1) << 16, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::work(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t now = generation_.load(std::memory_order_acquire);
    for (int i = 0; now == seen && i < kSpins; ++i) {
      relax();
      now = generation_.load(std::memory_order_acquire);
    }
    if (now == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      now = generation_.load(std::memory_order_acquire);
    }
    seen = now;
    if (stop_)
      return;
    // The parts travel in the word itself: a worker that wakes late reads
    // the parts of the run it saw, never a later run's.
    if (index >= static_cast<int>(now & 0xffff))
      continue;
    (*job_)(index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::run(int parts, const std::function<void(int)> &job) {
  parts = std::min(parts, threads());
  if (partsOnOpenMp())
    return runParts(parts, job);
  if (parts <= 1) {
    if (parts == 1)
      job(0);
    return;
  }
  job_ = &job;
  pending_.store(parts - 1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t next = ((generation_.load(std::memory_order_relaxed) >> 16) + 1) << 16;
    generation_.store(next | static_cast<uint64_t>(parts), std::memory_order_release);
  }
  wake_.notify_all();
  job(0);
  for (int i = 0; pending_.load(std::memory_order_acquire) != 0 && i < kSpins; ++i)
    relax();
  if (pending_.load(std::memory_order_acquire) != 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
  }
}

} // namespace dlc::rt
