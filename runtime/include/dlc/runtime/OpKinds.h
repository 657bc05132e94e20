//===- OpKinds.h - what an op computes, and how a group was fused -*- C++ -*-===//
//
// The one vocabulary of op classes and fusion kinds, shared across the plan
// boundary. The train dialect attaches an OpClass to every op in ODS
// (Train_OpClass in TrainBase.td); fusion passes name their groups with a
// FusionKind; the lowering to the plan writes both into each PlanKernel.
// Fusion legality, layout, the plan summary, code generation and launch
// routing decide by these enums, never by lists of op names.
//
// Header-only and free of MLIR: the runtime and the compiler both include it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_OPKINDS_H
#define DLC_RUNTIME_OPKINDS_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace dlc::rt {

enum class OpClass : uint8_t {
  /// A kernel of its own: pooling, resizing, embeddings, losses, loss
  /// scaling, constants.
  kOpaque,
  /// result[i] from operands[i] alone (broadcast operands aside): activations,
  /// their gradients, arithmetic, scale, cast.
  kElementwise,
  /// Element-wise with a counter-based random mask of the element's index:
  /// dropout. It does not commute with a transpose.
  kRandom,
  /// Copies elements to other positions: broadcast_to, transpose, slice,
  /// slice_backward, concat. The values themselves are exact.
  kDataMovement,
  /// Sums, means or maxima over axes.
  kReduction,
  /// Statistics along the last axis, then an element-wise map over it:
  /// softmax, layer norm and their gradients.
  kRowNormalization,
  /// Per-channel statistics over the batch: batch norm and its gradient.
  kBatchNormalization,
  /// Convolutions and GEMMs, forward and backward.
  kContraction,
  /// Parameter updates: SGD with momentum, AdamW.
  kOptimizer,
  /// Communication between data-parallel ranks: all_reduce.
  kCollective,
};

/// How the ops of a fused group came together: the pattern that formed it.
enum class FusionKind : uint8_t {
  kNone, // not in a fused group
  kElewiseAct,
  kBnAct,
  kBnAddAct,
  kBnActGrad,
  kBnAddActGrad,
  kGemmBiasAct,
  kConvBiasAct,
  kGemmDactBgrad,
  kLoop,
  kInput,
  kOptimizerHorizontal,
  kCastHorizontal,
  /// A contraction with element-wise consumers in its kernel: XLA's kOutput
  /// fusion, TVM's out-element-wise-fusable groups, Inductor's epilogues
  /// fused into a GEMM or convolution template.
  kOutput,
};

namespace detail {
inline constexpr std::string_view kOpClassNames[] = {
    "opaque",    "elementwise",        "random",       "data_movement",
    "reduction", "row_normalization", "batch_normalization", "contraction",
    "optimizer", "collective"};
inline constexpr std::string_view kFusionKindNames[] = {
    "",         "elewise_act",   "bn_act",         "bn_add_act",
    "bn_act_grad", "bn_add_act_grad", "gemm_bias_act", "conv_bias_act",
    "gemm_dact_bgrad", "loop",    "input",          "optimizer_horizontal",
    "cast_horizontal", "output"};
static_assert(std::size(kOpClassNames) == static_cast<size_t>(OpClass::kCollective) + 1);
static_assert(std::size(kFusionKindNames) ==
              static_cast<size_t>(FusionKind::kOutput) + 1);
} // namespace detail

/// The name ODS and the plan file use, e.g. "elementwise".
constexpr std::string_view opClassName(OpClass c) {
  return detail::kOpClassNames[static_cast<size_t>(c)];
}
/// The name the IR spells the kind with (`train.fused "bn_act"`); empty for
/// kNone.
constexpr std::string_view fusionKindName(FusionKind k) {
  return detail::kFusionKindNames[static_cast<size_t>(k)];
}

constexpr std::optional<OpClass> parseOpClass(std::string_view name) {
  for (size_t i = 0; i < std::size(detail::kOpClassNames); ++i)
    if (detail::kOpClassNames[i] == name)
      return static_cast<OpClass>(i);
  return std::nullopt;
}
/// kNone is not parsed: a group always has a kind.
constexpr std::optional<FusionKind> parseFusionKind(std::string_view name) {
  for (size_t i = 1; i < std::size(detail::kFusionKindNames); ++i)
    if (detail::kFusionKindNames[i] == name)
      return static_cast<FusionKind>(i);
  return std::nullopt;
}

/// Where the CUDA backend runs an op of this class when it stands alone:
/// "library" (cuDNN, cuBLASLt), "generated" (the kernel generator),
/// "collective" (NCCL) or "hand-written".
constexpr const char *implementationOf(OpClass c) {
  switch (c) {
  case OpClass::kContraction:
  case OpClass::kBatchNormalization:
    return "library";
  case OpClass::kElementwise:
  case OpClass::kDataMovement:
  case OpClass::kReduction:
    return "generated";
  case OpClass::kCollective:
    return "collective";
  case OpClass::kOpaque:
  case OpClass::kRandom:
  case OpClass::kRowNormalization:
  case OpClass::kOptimizer:
    return "hand-written";
  }
  return "hand-written";
}

/// Whether an op of this class runs as a library call (implementationOf's
/// "library": a cuDNN or cuBLASLt call). A fused group holds at most one:
/// its other ops run around it as generated code.
constexpr bool isLibraryCall(OpClass c) {
  return std::string_view(implementationOf(c)) == "library";
}

/// Whether the generator's index-at-a-time emitter computes the op: the
/// classes of XLA's loop fusion.
constexpr bool isElemental(OpClass c) {
  return c == OpClass::kElementwise || c == OpClass::kRandom || c == OpClass::kDataMovement;
}

/// The batch-norm groups cuDNN's fused batch norm (+ add) + relu computes.
constexpr bool isFusedBatchNorm(FusionKind k) {
  return k == FusionKind::kBnAct || k == FusionKind::kBnAddAct || k == FusionKind::kBnActGrad ||
         k == FusionKind::kBnAddActGrad;
}

} // namespace dlc::rt

#endif // DLC_RUNTIME_OPKINDS_H
