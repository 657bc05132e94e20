//===- HostThreads.h - many-thread host runs of CUDA kernel sources -*- C++ -*-===//
//
// The part of the tests' host simulator that kernel sources see: the
// thread and block indices (blocks of one or two dimensions), a block-wide
// barrier behind __syncthreads(), and dlc_sim_grid, which runs each
// block's threads at once as std::threads
// and the blocks one after another (__shared__ arrays are then statics), so
// block reductions, strided loops and multi-block splits run as on a GPU,
// in another interleaving. HandKernelsTest and CodegenTest prepend their
// own definitions.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_UNITTEST_RUNTIME_HOSTTHREADS_H
#define DLC_TEST_UNITTEST_RUNTIME_HOSTTHREADS_H

namespace dlc_test {

inline const char *const kHostThreadLayer = R"src(#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
struct dlc_dim3 { unsigned x, y, z; };
inline thread_local dlc_dim3 threadIdx, blockIdx;
inline dlc_dim3 blockDim, gridDim;
struct DlcBarrier {
  std::mutex m;
  std::condition_variable cv;
  unsigned count = 0, waiting = 0;
  unsigned long generation = 0;
  void wait() {
    std::unique_lock<std::mutex> lock(m);
    unsigned long g = generation;
    if (++waiting == count) {
      waiting = 0;
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return g != generation; });
    }
  }
};
inline DlcBarrier dlc_barrier;
#define __syncthreads() dlc_barrier.wait()
/// Runs body(context) as every thread of a grid x (block, blockY) launch:
/// a block's threads at once, the blocks one after another.
inline void dlc_sim_grid(void (*body)(void *), void *context, unsigned grid, unsigned block,
                         unsigned blockY = 1) {
  gridDim = {grid, 1, 1};
  blockDim = {block, blockY, 1};
  dlc_barrier.count = block * blockY;
  for (unsigned b = 0; b < grid; ++b) {
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block * blockY; ++t)
      threads.emplace_back([=] {
        blockIdx = {b, 0, 0};
        threadIdx = {t % block, t / block, 0};
        body(context);
      });
    for (std::thread &thread : threads)
      thread.join();
  }
}
)src";

} // namespace dlc_test

#endif // DLC_TEST_UNITTEST_RUNTIME_HOSTTHREADS_H
