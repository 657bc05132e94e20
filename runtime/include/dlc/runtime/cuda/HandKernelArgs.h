//===- HandKernelArgs.h - the hand-written kernels' parameters --*- C++ -*-===//
//
// Declared once for both sides: the host includes this file (HandKernels.h)
// and fills the fields; CMake embeds its bytes in every hand-written kernel
// source, which NVRTC and the host simulator compile. So it is plain C++
// that NVRTC takes without standard headers, and every field is 8 bytes
// (pointers, long long, double; t[] is 40 bytes of int): the sizes asserted
// below leave no room for padding, so they pin every offset, and each side's
// compiler checks them.
//
// Every kernel is (const DlcHandArgs a, const long long *step): its op's
// buffers in p[] at the slots named below (t[] their element types), its
// family's attributes in one member of the union.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_HANDKERNELARGS_H
#define DLC_RUNTIME_CUDA_HANDKERNELARGS_H

/// Element types of a buffer (DlcHandArgs::t, DlcHandOperand::t).
enum { DLC_T_F32 = 0, DLC_T_F16 = 1, DLC_T_BF16 = 2, DLC_T_I32 = 3, DLC_T_I64 = 4 };

/// p[] slots, and words of attributes. The launcher owns the last word: a
/// kernel launched in phases (HandKernel::phases) reads its phase there.
enum { DLC_HAND_POINTERS = 10, DLC_HAND_WORDS = 24, DLC_HAND_PHASE_WORD = 23 };

// A "scratch" slot holds HandKernel::scratch; "or null" marks an optional
// operand.

// softmax and softmax_backward: outer * inner lines of n elements, each
// element inner apart.
enum { DLC_SOFTMAX_X, DLC_SOFTMAX_MASK /* or null */, DLC_SOFTMAX_Y };
enum { DLC_SOFTMAX_BACKWARD_DY, DLC_SOFTMAX_BACKWARD_Y, DLC_SOFTMAX_BACKWARD_DX };
enum { DLC_SOFTMAX_MAX_RANK = 6 };
struct DlcSoftmaxArgs {
  long long outer, n, inner;
  long long causal;        // key k of query q is masked when k > q + keys - queries
  long long queries, keys; // x's last two dimensions, when causal
  long long hasMask;
  long long rank;          // x's rank and shape, when masked
  long long shape[DLC_SOFTMAX_MAX_RANK];
  long long maskStrides[DLC_SOFTMAX_MAX_RANK]; // along each of x's dimensions; 0: broadcast
  long long axis;
  double scale;            // of the logits (forward), of the gradient (backward)
};

// layer_norm and layer_norm_backward over the last dimension.
enum { DLC_LAYER_NORM_X, DLC_LAYER_NORM_GAMMA, DLC_LAYER_NORM_BETA, DLC_LAYER_NORM_Y };
enum {
  DLC_LAYER_NORM_BACKWARD_DY,
  DLC_LAYER_NORM_BACKWARD_X,
  DLC_LAYER_NORM_BACKWARD_GAMMA,
  DLC_LAYER_NORM_BACKWARD_DX,
  DLC_LAYER_NORM_BACKWARD_DGAMMA,
  DLC_LAYER_NORM_BACKWARD_DBETA,
  DLC_LAYER_NORM_BACKWARD_SCRATCH
};
struct DlcLayerNormArgs {
  long long rows, d;
  double epsilon;
};

// softmax_cross_entropy and its backward: classes along the class axis,
// with outer and inner positions around it.
enum {
  DLC_CROSS_ENTROPY_LOGITS,
  DLC_CROSS_ENTROPY_LABELS,
  DLC_CROSS_ENTROPY_LOSS,
  DLC_CROSS_ENTROPY_SCRATCH
};
enum {
  DLC_CROSS_ENTROPY_BACKWARD_DLOSS,
  DLC_CROSS_ENTROPY_BACKWARD_LOGITS,
  DLC_CROSS_ENTROPY_BACKWARD_LABELS,
  DLC_CROSS_ENTROPY_BACKWARD_DLOGITS
};
struct DlcCrossEntropyArgs {
  long long outer, classes, inner;
  long long ignoreIndex;
  // Elements from one position's classes to the next: `classes`, or a
  // padded row's stride (RowStride.h; inner is then 1), for the logits and
  // for the backward's gradient.
  long long ld, ldGrad;
};

// embedding and embedding_backward: a [rows, d] table, n indices.
enum { DLC_EMBEDDING_TABLE, DLC_EMBEDDING_IDS, DLC_EMBEDDING_Y };
enum {
  DLC_EMBEDDING_BACKWARD_DY,
  DLC_EMBEDDING_BACKWARD_IDS,
  DLC_EMBEDDING_BACKWARD_DTABLE,
  DLC_EMBEDDING_BACKWARD_SCRATCH // when splits > 1
};
struct DlcEmbeddingArgs {
  long long rows, d, n;
  long long splits; // the backward's index ranges per row group
};

enum { DLC_DROPOUT_X, DLC_DROPOUT_Y };
struct DlcDropoutArgs {
  long long n;
  long long seed;
  double rate;
};

// max_pool2d, avg_pool2d and their backward: an [n, c, h, w] input (stored
// NCHW, or NHWC with nhwc), an [n, c, outH, outW] output.
enum { DLC_POOL_X, DLC_POOL_Y };
enum { DLC_MAX_POOL_BACKWARD_DY, DLC_MAX_POOL_BACKWARD_X, DLC_MAX_POOL_BACKWARD_DX };
enum { DLC_AVG_POOL_BACKWARD_DY, DLC_AVG_POOL_BACKWARD_DX };
struct DlcPoolArgs {
  long long n, c, h, w;
  long long kernelH, kernelW, strideH, strideW, padH, padW;
  long long countIncludePad;
  long long outH, outW;
  long long nhwc;
};

// The optimizer family: single updates and the dynamic loss scale. The
// loss-scale status ({gradient multiplier, skip flag}) is optional.
enum {
  DLC_SGD_PARAM,
  DLC_SGD_GRAD,
  DLC_SGD_MOMENTUM,
  DLC_SGD_STATUS, // or null
  DLC_SGD_NEW_PARAM,
  DLC_SGD_NEW_MOMENTUM
};
struct DlcSgdArgs {
  long long n;
  long long hasStatus, nesterov;
  double lr, momentum, weightDecay;
};
enum {
  DLC_ADAMW_PARAM,
  DLC_ADAMW_GRAD,
  DLC_ADAMW_M,
  DLC_ADAMW_V,
  DLC_ADAMW_STATUS, // or null
  DLC_ADAMW_NEW_PARAM,
  DLC_ADAMW_NEW_M,
  DLC_ADAMW_NEW_V
};
struct DlcAdamwArgs {
  long long n;
  long long hasStatus;
  double lr, beta1, beta2, epsilon, weightDecay;
};
enum {
  DLC_LOSS_SCALE_STATUS_SCALE,
  DLC_LOSS_SCALE_STATUS_STATUS, // 2 elements
  DLC_LOSS_SCALE_STATUS_GRADS,  // the gradients' operand table (HandKernel::table)
  DLC_LOSS_SCALE_STATUS_SCRATCH
};
struct DlcLossScaleStatusArgs {
  long long grads; // the table's entries
};
enum {
  DLC_UPDATE_LOSS_SCALE_SCALE,
  DLC_UPDATE_LOSS_SCALE_GOOD_STEPS,
  DLC_UPDATE_LOSS_SCALE_STATUS,
  DLC_UPDATE_LOSS_SCALE_NEW_SCALE,
  DLC_UPDATE_LOSS_SCALE_NEW_GOOD_STEPS
};
struct DlcUpdateLossScaleArgs {
  long long growthInterval;
  double backoffFactor, growthFactor;
};

// batch_norm (training) and batch_norm_backward: [n, channels, spatial] as
// stored (NHWC: [n, spatial, channels]), each channel split over blocks.
// The running statistics may share storage with their new values.
enum {
  DLC_BATCH_NORM_X,
  DLC_BATCH_NORM_SCALE,
  DLC_BATCH_NORM_BIAS,
  DLC_BATCH_NORM_RUNNING_MEAN,
  DLC_BATCH_NORM_RUNNING_VAR,
  DLC_BATCH_NORM_Y,
  DLC_BATCH_NORM_NEW_RUNNING_MEAN,
  DLC_BATCH_NORM_NEW_RUNNING_VAR,
  DLC_BATCH_NORM_SCRATCH
};
enum {
  DLC_BATCH_NORM_BACKWARD_DY,
  DLC_BATCH_NORM_BACKWARD_X,
  DLC_BATCH_NORM_BACKWARD_SCALE,
  DLC_BATCH_NORM_BACKWARD_DX,
  DLC_BATCH_NORM_BACKWARD_DSCALE,
  DLC_BATCH_NORM_BACKWARD_DBIAS,
  DLC_BATCH_NORM_BACKWARD_SCRATCH
};
struct DlcBatchNormArgs {
  long long n, channels, spatial; // spatial: the product of the dimensions after 1
  long long splits;
  long long nhwc;
  double epsilon, momentum;
};

// resize_bilinear and its backward: the forward's [n, c, inH, inW] input and
// [n, c, outH, outW] output (NCHW, or NHWC with nhwc).
enum { DLC_RESIZE_X, DLC_RESIZE_Y };
enum { DLC_RESIZE_BACKWARD_DY, DLC_RESIZE_BACKWARD_DX };
struct DlcResizeArgs {
  long long n, c, inH, inW, outH, outW;
  long long alignCorners;
  long long nhwc;
};

// attention and attention_backward (FlashAttention-2): q [batch, queries,
// d], k [batch, keys, d], v [batch, keys, dv], o [batch, queries, dv], lse
// [batch, queries] (f32), batch the flattened leading dimensions B...; an
// additive mask that broadcasts to [B..., queries, keys]. The backward runs
// in two phases: dk and dv per key tile, then dq per query tile.
enum {
  DLC_ATTENTION_Q,
  DLC_ATTENTION_K,
  DLC_ATTENTION_V,
  DLC_ATTENTION_MASK, // or null
  DLC_ATTENTION_O,
  DLC_ATTENTION_LSE
};
enum {
  DLC_ATTENTION_BACKWARD_Q,
  DLC_ATTENTION_BACKWARD_K,
  DLC_ATTENTION_BACKWARD_V,
  DLC_ATTENTION_BACKWARD_O,
  DLC_ATTENTION_BACKWARD_DO,
  DLC_ATTENTION_BACKWARD_LSE,
  DLC_ATTENTION_BACKWARD_MASK, // or null
  DLC_ATTENTION_BACKWARD_DQ,
  DLC_ATTENTION_BACKWARD_DK,
  DLC_ATTENTION_BACKWARD_DV
};
/// The kernels' shared-memory tiles (kernels/Attention.cuh): head
/// dimensions up to MAX_D; the forward's query and key tiles; the
/// backward's key tile, and its query tiles in the dk / dv phase and in the
/// dq phase. Sized so that each kernel's static shared memory stays under
/// the 48 KiB a kernel gets without opting in. The tensor-core kernels
/// (f16 / bf16 operands) take head dimensions that are multiples of 16 up
/// to TC_MAX_D: forward query tiles of TC_QUERY_TILE, key tiles of
/// TC_KEY_TILE, and the backward's dq phase query tiles of
/// TC_BACKWARD_QUERY_TILE.
enum {
  DLC_ATTENTION_MAX_D = 128,
  DLC_ATTENTION_TC_MAX_D = 64,
  DLC_ATTENTION_TC_QUERY_TILE = 64,
  DLC_ATTENTION_TC_KEY_TILE = 32,
  DLC_ATTENTION_TC_BACKWARD_QUERY_TILE = 32,
  DLC_ATTENTION_QUERY_TILE = 32,
  DLC_ATTENTION_KEY_TILE = 16,
  DLC_ATTENTION_BACKWARD_KEY_TILE = 16,
  DLC_ATTENTION_BACKWARD_KV_QUERY_TILE = 8,
  DLC_ATTENTION_BACKWARD_DQ_QUERY_TILE = 16,
  DLC_ATTENTION_THREADS = 128,
  DLC_ATTENTION_MAX_BATCH_RANK = 4
};
struct DlcAttentionArgs {
  long long batch, queries, keys, d, dv;
  long long causal; // key j of query i is masked when j > i + keys - queries
  long long hasMask;
  long long batchRank; // B...'s rank and shape, when masked
  long long batchShape[DLC_ATTENTION_MAX_BATCH_RANK];
  long long maskBatchStrides[DLC_ATTENTION_MAX_BATCH_RANK]; // 0: broadcast
  long long maskQueryStride, maskKeyStride;
  long long seed; // dropout's, drawn as train.dropout draws it
  double rate;    // dropout's; 0: none
  double scale;   // of q k^T
};

/// The one parameter block, passed by value.
struct DlcHandArgs {
  enum { kPointers = DLC_HAND_POINTERS };
  void *p[DLC_HAND_POINTERS] = {}; // null: an absent optional operand
  int t[DLC_HAND_POINTERS] = {};
  union {
    long long i[DLC_HAND_WORDS] = {}; // the same bytes as words: the phase's
    DlcSoftmaxArgs softmax;
    DlcLayerNormArgs layerNorm;
    DlcCrossEntropyArgs crossEntropy;
    DlcEmbeddingArgs embedding;
    DlcDropoutArgs dropout;
    DlcPoolArgs pool;
    DlcSgdArgs sgd;
    DlcAdamwArgs adamw;
    DlcLossScaleStatusArgs lossScaleStatus;
    DlcUpdateLossScaleArgs updateLossScale;
    DlcBatchNormArgs batchNorm;
    DlcResizeArgs resize;
    DlcAttentionArgs attention;
  };
};

/// One entry of an operand table, for a kernel with more operands than p[]
/// holds: the launcher lays the entries out in memory the kernel reads and
/// puts their address in one p slot (HandKernel::table).
struct DlcHandOperand {
  void *p = nullptr;
  long long n = 0; // elements
  int t = 0;       // DLC_T_*
  int unused = 0;
};

// The layout, checked wherever this text compiles. Each family's words end
// before the phase's.
static_assert(sizeof(DlcHandArgs) == 8 * DLC_HAND_POINTERS + 4 * DLC_HAND_POINTERS +
                                         8 * DLC_HAND_WORDS,
              "DlcHandArgs: pointers, types and words, no padding");
static_assert(sizeof(DlcHandOperand) == 24, "DlcHandOperand: no padding");
#define DLC_HAND_CHECK_WORDS(T, words)                                         \
  static_assert(sizeof(T) == 8 * (words) && (words) <= DLC_HAND_PHASE_WORD,    \
                #T ": 8-byte fields before the phase")
DLC_HAND_CHECK_WORDS(DlcSoftmaxArgs, 10 + 2 * DLC_SOFTMAX_MAX_RANK);
DLC_HAND_CHECK_WORDS(DlcLayerNormArgs, 3);
DLC_HAND_CHECK_WORDS(DlcCrossEntropyArgs, 6);
DLC_HAND_CHECK_WORDS(DlcEmbeddingArgs, 4);
DLC_HAND_CHECK_WORDS(DlcDropoutArgs, 3);
DLC_HAND_CHECK_WORDS(DlcPoolArgs, 14);
DLC_HAND_CHECK_WORDS(DlcSgdArgs, 6);
DLC_HAND_CHECK_WORDS(DlcAdamwArgs, 7);
DLC_HAND_CHECK_WORDS(DlcLossScaleStatusArgs, 1);
DLC_HAND_CHECK_WORDS(DlcUpdateLossScaleArgs, 3);
DLC_HAND_CHECK_WORDS(DlcBatchNormArgs, 7);
DLC_HAND_CHECK_WORDS(DlcResizeArgs, 8);
DLC_HAND_CHECK_WORDS(DlcAttentionArgs, 13 + 2 * DLC_ATTENTION_MAX_BATCH_RANK);
#undef DLC_HAND_CHECK_WORDS
static_assert((int)DLC_ADAMW_NEW_V < (int)DLC_HAND_POINTERS &&
                  (int)DLC_BATCH_NORM_SCRATCH < (int)DLC_HAND_POINTERS &&
                  (int)DLC_ATTENTION_BACKWARD_DV < (int)DLC_HAND_POINTERS,
              "the widest ops' slots fit p[]");

#endif // DLC_RUNTIME_CUDA_HANDKERNELARGS_H
