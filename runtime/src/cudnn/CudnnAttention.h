//===- CudnnAttention.h - train.attention on cuDNN's SDPA graph -*- C++ -*-===//
//
// train.attention and train.attention_backward through the cuDNN frontend's
// graph API: `sdpa` (training: it returns O and the softmax statistics) and
// `sdpa_backward` (q, k, v, o, dO, stats -> dq, dk, dv), FlashAttention-2's
// algorithm on sm80 and later. One graph per kernel, built when the
// executor is created (validate, build, the heuristics' plans, support
// check, plan build); a graph cuDNN does not support is a refusal, and the
// launch goes on to the flash kernels (LaunchPaths.h, fallbacksOf).
//
// The statistics are the scaled, masked scores' natural-log log-sum-exp per
// query row, f32 [b, h, Sq, 1]: exactly train.attention's lse [B..., Sq], so
// a forward on cuDNN and a gradient on the flash kernels (or the reverse)
// read one another's. sdpaShapeOf (CudnnCapabilities.h) says which kernels
// the graph takes: f16 / bf16, no dropout.
//
// The frontend is header-only; runtime/CMakeLists.txt fetches its headers
// (PyPI's nvidia-cudnn-frontend wheel) at configure time. Built without
// them, every plan() is a refusal that says so.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_CUDNN_CUDNNATTENTION_H
#define DLC_RUNTIME_SRC_CUDNN_CUDNNATTENTION_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/cudnn/CudnnCapabilities.h"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <memory>
#include <string>

namespace dlc::rt::cudnn {

/// The graphs one executor built, by shape (everything in SdpaShape but
/// the buffers), refusals included: GPT-2's twelve layers build one forward
/// and one backward graph. It lives as long as the executor's cuDNN handle.
class SdpaCache {
public:
  SdpaCache();
  ~SdpaCache();

private:
  friend class Sdpa;
  struct Entries;
  std::unique_ptr<Entries> entries_;
};

class Sdpa {
public:
  /// The graph for `shape` (sdpaShapeOf of one of the plan's kernels),
  /// built once per shape in `cache`. When cuDNN does not support it,
  /// `*sdpa` stays null and `refusal` says why; a failing call that is not
  /// a refusal is an error.
  static Status plan(cudnnHandle_t handle, SdpaCache &cache, const Plan &plan,
                     const SdpaShape &shape,
                     const std::string &where, std::unique_ptr<Sdpa> &sdpa,
                     std::string &refusal);
  ~Sdpa();

  size_t workspaceBytes() const;
  /// Enqueues the graph on `stream`, over the buffers at their arena
  /// offsets.
  Status run(cudnnHandle_t handle, unsigned char *arena, void *workspace, size_t workspaceBytes,
             cudaStream_t stream) const;

private:
  struct Graph;
  Sdpa() = default;
  std::unique_ptr<Graph> graph_;
};

} // namespace dlc::rt::cudnn

#endif // DLC_RUNTIME_SRC_CUDNN_CUDNNATTENTION_H
