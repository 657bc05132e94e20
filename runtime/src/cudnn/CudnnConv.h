//===- CudnnConv.h - 2-D convolutions through cuDNN -------------*- C++ -*-===//
//
// The thin wrapper of cuDNN: one Conv per plan kernel (conv2d, its data and
// filter gradients), over NCHW / KCRS buffers as the plan lays them out,
// its descriptors and algorithm chosen once when the executor is created
// (cudnnGet*Algorithm_v7, the first algorithm that fits the workspace
// limit; one choice per distinct shape) and run every step.
//
// Precision: fp32 convolutions use CUDNN_FMA_MATH (no TF32) unless the
// caller allows TF32; f16 / bf16 ones accumulate in fp32 on tensor cores.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_CUDNN_CUDNNCONV_H
#define DLC_RUNTIME_SRC_CUDNN_CUDNNCONV_H

#include "dlc/runtime/Plan.h"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <string>

namespace dlc::rt::cudnn {

/// ok, or "<call>: <CUDNN_STATUS_...> in <where>".
Status cudnnCheck(cudnnStatus_t status, const char *call, const std::string &where);

/// Returns cudnnCheck's status from the enclosing function when it fails.
#define DLC_CUDNN(call, where)                                                 \
  do {                                                                         \
    if (::dlc::rt::Status s_ = ::dlc::rt::cudnn::cudnnCheck((call), #call, where); \
        !s_.isOk())                                                            \
      return s_;                                                               \
  } while (0)

/// The most workspace one convolution algorithm may ask for.
constexpr size_t kMaxConvWorkspaceBytes = size_t(1) << 30;

/// An algorithm chosen, with the math type cuDNN offered it under (set on
/// the descriptor, as cuDNN's v7 heuristics expect).
struct ChosenAlgorithm {
  int algo = -1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};
/// Algorithms already chosen, by kernel op and shapes.
using AlgorithmCache = std::map<std::string, ChosenAlgorithm>;

class Conv {
public:
  /// A convolution for `kernel`; when cuDNN cannot take it (element types,
  /// no algorithm within the workspace limit), `*conv` stays null and
  /// `refusal` says why. A failing cuDNN call is an error.
  static Status plan(cudnnHandle_t handle, const Plan &plan, const PlanKernel &kernel,
                     bool allowTf32, const std::string &where, AlgorithmCache &cache,
                     std::unique_ptr<Conv> &conv, std::string &refusal);
  ~Conv();

  Status run(cudnnHandle_t handle, unsigned char *arena, void *workspace,
             size_t workspaceBytes) const;
  size_t workspaceBytes() const { return workspace_; }

private:
  Conv() = default;
  enum class Kind { kForward, kBackwardData, kBackwardFilter };
  Kind kind_ = Kind::kForward;
  std::string where_;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, bias_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  int algo_ = 0;
  size_t workspace_ = 0;
  /// Arena offsets of the image x (or dx), the filter w (or dw), the
  /// output y (or dy) and the bias (-1: none).
  int64_t xOffset_ = 0, wOffset_ = 0, yOffset_ = 0, biasOffset_ = -1;
};

} // namespace dlc::rt::cudnn

#endif // DLC_RUNTIME_SRC_CUDNN_CUDNNCONV_H
