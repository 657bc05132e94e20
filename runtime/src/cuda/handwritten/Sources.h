//===- Sources.h - the hand-written kernels' CUDA C++ texts -----*- C++ -*-===//
//
// Each family's text is kept in runtime/src/cuda/kernels/<Family>.cuh and
// embedded byte for byte at build time (dlc_embed_text); with the common
// header and the prelude before it, it is a complete translation unit for
// NVRTC: one extern "C" __global__ kernel per op, all taking
// (const DlcHandArgs a, const long long *step): the step counter lives on
// the device (CudaExecutor.h). Compiled without
// __CUDACC__ the same text is plain C++ running one block of one thread,
// which HandKernelsTest uses to check every kernel against the CPU
// reference on the host.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_HANDWRITTEN_SOURCES_H
#define DLC_RUNTIME_CUDA_HANDWRITTEN_SOURCES_H

#include <string>

namespace dlc::rt::cuda::handwritten {

/// Type headers (under NVRTC), the prelude, DlcHandArgs, the half
/// conversions and the typed loads, stores and double block reductions
/// every family uses.
std::string commonHeader();

const char *softmaxBody();   // softmax, softmax_backward
const char *normBody();      // layer_norm, layer_norm_backward
const char *lossBody();      // softmax_cross_entropy(_backward)
const char *embeddingBody(); // embedding, embedding_backward
const char *dropoutBody();   // dropout
const char *poolBody();      // max / avg pool2d and their backward
const char *optimizerBody(); // sgd_update, adamw_update (one parameter),
                             // loss_scale_status, update_loss_scale
const char *batchNormBody(); // batch_norm, batch_norm_backward (training)
const char *resizeBody();    // resize_bilinear, resize_bilinear_backward
const char *attentionBody(); // attention, attention_backward (flash)

} // namespace dlc::rt::cuda::handwritten

#endif // DLC_RUNTIME_CUDA_HANDWRITTEN_SOURCES_H
