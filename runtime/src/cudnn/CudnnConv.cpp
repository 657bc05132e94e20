//===- CudnnConv.cpp - 2-D convolutions through cuDNN ---------------------===//
//
// Uses cuDNN's descriptor API (cudnnConvolutionForward and friends), which
// cuDNN 9 marks deprecated in favour of the graph API but still ships and
// supports; it is the shortest correct path to every convolution a plan
// holds. The graph API is the way to cuDNN's fused batch norm later.
//
//===----------------------------------------------------------------------===//

#include "CudnnConv.h"

#include "dlc/runtime/cudnn/CudnnCapabilities.h"

#include <vector>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace dlc::rt::cudnn {

Status cudnnCheck(cudnnStatus_t status, const char *call, const std::string &where) {
  if (status == CUDNN_STATUS_SUCCESS)
    return Status::ok();
  StatusCode code = status == CUDNN_STATUS_ALLOC_FAILED ? StatusCode::kResourceExhausted
                                                        : StatusCode::kInternal;
  return Status(code, std::string(call) + ": " + cudnnGetErrorString(status) + " in " + where);
}

namespace {

bool toCudnnType(DType dtype, cudnnDataType_t &type) {
  switch (dtype) {
  case DType::kF32: type = CUDNN_DATA_FLOAT; return true;
  case DType::kF16: type = CUDNN_DATA_HALF; return true;
  case DType::kBF16: type = CUDNN_DATA_BFLOAT16; return true;
  default: return false;
  }
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t d : shape)
    text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

/// The first algorithm of cuDNN's heuristic list that runs with this math
/// mode within the workspace limit, with its math type and workspace (algo -1: none).
/// The workspace depends on the math type: each entry's is set on the
/// descriptor (`setMath`) before its size is asked for, as it will run.
template <typename Perf, typename MathFn, typename SizeFn>
ChosenAlgorithm chooseAlgorithm(const Perf *perf, int returned, bool fmaOnly,
                                MathFn setMath, SizeFn workspaceOf, size_t &workspace) {
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS)
      continue;
    if (fmaOnly && (perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
                    perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
      continue;
    size_t bytes = 0;
    if (setMath(perf[i].mathType) != CUDNN_STATUS_SUCCESS ||
        workspaceOf(static_cast<int>(perf[i].algo), bytes) != CUDNN_STATUS_SUCCESS ||
        bytes > kMaxConvWorkspaceBytes)
      continue;
    workspace = bytes;
    return {static_cast<int>(perf[i].algo), perf[i].mathType};
  }
  return {};
}

} // namespace

Status Conv::plan(cudnnHandle_t handle, const Plan &plan, const PlanKernel &kernel,
                  bool allowTf32, const std::string &where, AlgorithmCache &cache,
                  std::unique_ptr<Conv> &conv, std::string &refusal) {
  conv.reset();
  std::unique_ptr<Conv> c(new Conv());
  c->where_ = where;
  // Which buffer is which: conv2d (x, w[, bias]) -> y;
  // conv2d_backward_data (dy, w) -> dx; conv2d_backward_filter (dy, x) -> dw.
  int32_t x, w, y;
  if (kernel.id == OpId::kConv2d && kernel.inputs.size() >= 2 && kernel.outputs.size() == 1) {
    c->kind_ = Kind::kForward;
    x = kernel.inputs[0], w = kernel.inputs[1], y = kernel.outputs[0];
  } else if (kernel.id == OpId::kConv2dBackwardData && kernel.inputs.size() == 2 &&
             kernel.outputs.size() == 1) {
    c->kind_ = Kind::kBackwardData;
    y = kernel.inputs[0], w = kernel.inputs[1], x = kernel.outputs[0];
  } else if (kernel.id == OpId::kConv2dBackwardFilter && kernel.inputs.size() == 2 &&
             kernel.outputs.size() == 1) {
    c->kind_ = Kind::kBackwardFilter;
    y = kernel.inputs[0], x = kernel.inputs[1], w = kernel.outputs[0];
  } else {
    refusal = kernel.op + " with " + std::to_string(kernel.inputs.size()) + " operands and " +
              std::to_string(kernel.outputs.size()) + " results";
    return Status::ok();
  }
  const PlanBuffer &X = plan.buffers[x], &W = plan.buffers[w], &Y = plan.buffers[y];
  const PlanBuffer *bias = c->kind_ == Kind::kForward && kernel.inputs.size() > 2
                               ? &plan.buffers[kernel.inputs[2]]
                               : nullptr;
  cudnnDataType_t type;
  if (!toCudnnType(X.dtype, type) || W.dtype != X.dtype || Y.dtype != X.dtype ||
      (bias && bias->dtype != X.dtype)) {
    refusal = std::string("operands of mixed or unsupported types (") + dtypeName(X.dtype) +
              ", " + dtypeName(W.dtype) + ", " + dtypeName(Y.dtype) + ")";
    return Status::ok();
  }
  if (std::string why = convRefusal(plan, kernel); !why.empty()) {
    refusal = why;
    return Status::ok();
  }
  std::vector<int64_t> stride = kernel.intsAttr("stride", {1, 1}),
                       pad = kernel.intsAttr("padding", {0, 0}),
                       dilation = kernel.intsAttr("dilation", {1, 1});
  int64_t groups = kernel.intAttr("groups", 1);
  if (stride.size() != 2 || pad.size() != 2 || dilation.size() != 2) {
    refusal = "stride, padding or dilation not of two values";
    return Status::ok();
  }

  // cuDNN's 4-d descriptors take (n, c, h, w) whatever the format; an
  // NHWC buffer's shape is [n, h, w, c] and an OHWI filter's [k, r, s, c].
  const std::string layout = kernelLayout(kernel);
  const bool nhwc = layout == "NHWC";
  const cudnnTensorFormat_t format = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  auto dim = [nhwc](const PlanBuffer &b, int nchwIndex) {
    static const int fromNhwc[4] = {0, 3, 1, 2};
    return static_cast<int>(b.shape[nhwc ? fromNhwc[nchwIndex] : nchwIndex]);
  };
  DLC_CUDNN(cudnnCreateTensorDescriptor(&c->x_), where);
  DLC_CUDNN(cudnnSetTensor4dDescriptor(c->x_, format, type, dim(X, 0), dim(X, 1), dim(X, 2),
                                       dim(X, 3)),
            where);
  DLC_CUDNN(cudnnCreateTensorDescriptor(&c->y_), where);
  DLC_CUDNN(cudnnSetTensor4dDescriptor(c->y_, format, type, dim(Y, 0), dim(Y, 1), dim(Y, 2),
                                       dim(Y, 3)),
            where);
  DLC_CUDNN(cudnnCreateFilterDescriptor(&c->w_), where);
  DLC_CUDNN(cudnnSetFilter4dDescriptor(c->w_, type, format, dim(W, 0), dim(W, 1), dim(W, 2),
                                       dim(W, 3)),
            where);
  if (bias) {
    DLC_CUDNN(cudnnCreateTensorDescriptor(&c->bias_), where);
    DLC_CUDNN(cudnnSetTensor4dDescriptor(c->bias_, CUDNN_TENSOR_NCHW, type, 1,
                                         static_cast<int>(bias->numElements()), 1, 1),
              where);
    c->biasOffset_ = bias->offset;
  }
  DLC_CUDNN(cudnnCreateConvolutionDescriptor(&c->conv_), where);
  // Half types compute in fp32 (cuDNN's "pseudo half" configuration).
  DLC_CUDNN(cudnnSetConvolution2dDescriptor(
                c->conv_, static_cast<int>(pad[0]), static_cast<int>(pad[1]),
                static_cast<int>(stride[0]), static_cast<int>(stride[1]),
                static_cast<int>(dilation[0]), static_cast<int>(dilation[1]),
                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            where);
  DLC_CUDNN(cudnnSetConvolutionGroupCount(c->conv_, static_cast<int>(groups)), where);
  // fp32 without TF32: FMA kernels only (cuDNN's default math would let
  // Ampere and later GPUs round operands to TF32).
  bool fmaOnly = type == CUDNN_DATA_FLOAT && !allowTf32;
  cudnnMathType_t math = fmaOnly ? CUDNN_FMA_MATH
                         : type == CUDNN_DATA_FLOAT ? CUDNN_DEFAULT_MATH
                                                    : CUDNN_TENSOR_OP_MATH;
  DLC_CUDNN(cudnnSetConvolutionMathType(c->conv_, math), where);
  c->xOffset_ = X.offset;
  c->wOffset_ = W.offset;
  c->yOffset_ = Y.offset;

  // One choice per op, shapes, geometry and type.
  std::string key = kernel.op + " " + shapeText(X.shape) + " " + shapeText(W.shape) + " " +
                    shapeText(Y.shape) + " s" + shapeText(stride) + " p" + shapeText(pad) +
                    " d" + shapeText(dilation) + " g" + std::to_string(groups) + " " +
                    dtypeName(X.dtype) + " " + layout + (fmaOnly ? " fma" : "");
  auto cached = cache.find(key);
  // The math type an algorithm runs under; fp32 without TF32 keeps FMA
  // math whatever the heuristic's entry says.
  auto setMath = [&](cudnnMathType_t entry) {
    return cudnnSetConvolutionMathType(c->conv_, fmaOnly ? CUDNN_FMA_MATH : entry);
  };
  ChosenAlgorithm algo;
  size_t workspace = 0;
  int returned = 0;
  switch (c->kind_) {
  case Kind::kForward: {
    auto size = [&](int a, size_t &bytes) {
      return cudnnGetConvolutionForwardWorkspaceSize(
          handle, c->x_, c->w_, c->conv_, c->y_, static_cast<cudnnConvolutionFwdAlgo_t>(a),
          &bytes);
    };
    if (cached != cache.end()) {
      algo = cached->second;
      DLC_CUDNN(setMath(algo.math), where);
      DLC_CUDNN(size(algo.algo, workspace), where);
      break;
    }
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    DLC_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(handle, c->x_, c->w_, c->conv_, c->y_,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                     &returned, perf),
              where);
    algo = chooseAlgorithm(perf, returned, fmaOnly, setMath, size, workspace);
    break;
  }
  case Kind::kBackwardData: {
    auto size = [&](int a, size_t &bytes) {
      return cudnnGetConvolutionBackwardDataWorkspaceSize(
          handle, c->w_, c->y_, c->conv_, c->x_,
          static_cast<cudnnConvolutionBwdDataAlgo_t>(a), &bytes);
    };
    if (cached != cache.end()) {
      algo = cached->second;
      DLC_CUDNN(setMath(algo.math), where);
      DLC_CUDNN(size(algo.algo, workspace), where);
      break;
    }
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    DLC_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                  handle, c->w_, c->y_, c->conv_, c->x_,
                  CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf),
              where);
    algo = chooseAlgorithm(perf, returned, fmaOnly, setMath, size, workspace);
    break;
  }
  case Kind::kBackwardFilter: {
    auto size = [&](int a, size_t &bytes) {
      return cudnnGetConvolutionBackwardFilterWorkspaceSize(
          handle, c->x_, c->y_, c->conv_, c->w_,
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(a), &bytes);
    };
    if (cached != cache.end()) {
      algo = cached->second;
      DLC_CUDNN(setMath(algo.math), where);
      DLC_CUDNN(size(algo.algo, workspace), where);
      break;
    }
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    DLC_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                  handle, c->x_, c->y_, c->conv_, c->w_,
                  CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perf),
              where);
    algo = chooseAlgorithm(perf, returned, fmaOnly, setMath, size, workspace);
    break;
  }
  }
  if (algo.algo < 0) {
    refusal = "cuDNN offers no algorithm " + std::string(fmaOnly ? "without TF32 " : "") +
              "within " + std::to_string(kMaxConvWorkspaceBytes >> 20) +
              " MiB of workspace (" + std::to_string(returned) + " considered)";
    return Status::ok();
  }
  cache[key] = algo;
  c->algo_ = algo.algo;
  DLC_CUDNN(setMath(algo.math), where);
  c->workspace_ = workspace;
  conv = std::move(c);
  return Status::ok();
}

Conv::~Conv() {
  if (x_)
    cudnnDestroyTensorDescriptor(x_);
  if (y_)
    cudnnDestroyTensorDescriptor(y_);
  if (bias_)
    cudnnDestroyTensorDescriptor(bias_);
  if (w_)
    cudnnDestroyFilterDescriptor(w_);
  if (conv_)
    cudnnDestroyConvolutionDescriptor(conv_);
}

Status Conv::run(cudnnHandle_t handle, unsigned char *arena, void *workspace,
                 size_t workspaceBytes) const {
  // Scaling factors are float for every data type but double.
  const float one = 1.0f, zero = 0.0f;
  void *x = arena + xOffset_, *w = arena + wOffset_, *y = arena + yOffset_;
  switch (kind_) {
  case Kind::kForward:
    DLC_CUDNN(cudnnConvolutionForward(handle, &one, x_, x, w_, w, conv_,
                                      static_cast<cudnnConvolutionFwdAlgo_t>(algo_), workspace,
                                      workspaceBytes, &zero, y_, y),
              where_);
    if (bias_)
      DLC_CUDNN(cudnnAddTensor(handle, &one, bias_, arena + biasOffset_, &one, y_, y), where_);
    break;
  case Kind::kBackwardData:
    DLC_CUDNN(cudnnConvolutionBackwardData(handle, &one, w_, w, y_, y, conv_,
                                           static_cast<cudnnConvolutionBwdDataAlgo_t>(algo_),
                                           workspace, workspaceBytes, &zero, x_, x),
              where_);
    break;
  case Kind::kBackwardFilter:
    DLC_CUDNN(cudnnConvolutionBackwardFilter(
                  handle, &one, x_, x, y_, y, conv_,
                  static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo_), workspace,
                  workspaceBytes, &zero, w_, w),
              where_);
    break;
  }
  return Status::ok();
}

} // namespace dlc::rt::cudnn
