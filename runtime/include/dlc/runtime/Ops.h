//===- Ops.h - the train ops a plan names, as an enum -----------*- C++ -*-===//
//
// The op of a plan kernel as the runtime sees it: OpId, one enumerator per
// train op with an op class, generated at build time from the dialect's ODS
// (dlc/runtime/OpList.inc, written by GenOpList.py beside TrainOps.td). An op
// added to ODS gets its enumerator at the next build, nothing to write by
// hand; an op renamed or removed there stops compiling every comparison
// with it. Numbering follows the sorted mnemonics, and a plan file records
// opTableFingerprint() so that a runtime built for another op set refuses
// it instead of running the wrong op (Plan.cpp).
//
// Header-only and free of MLIR, as OpKinds.h.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_OPS_H
#define DLC_RUNTIME_OPS_H

#include "dlc/runtime/OpKinds.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace dlc::rt {

/// A train op, e.g. OpId::kConv2dBackwardFilter for train.conv2d_backward_filter.
enum class OpId : uint16_t {
#define DLC_OP(Enumerator, mnemonic, Class) k##Enumerator,
#include "dlc/runtime/OpList.inc"
};

namespace detail {
inline constexpr std::string_view kOpNames[] = {
#define DLC_OP(Enumerator, mnemonic, Class) mnemonic,
#include "dlc/runtime/OpList.inc"
};
inline constexpr OpClass kOpClasses[] = {
#define DLC_OP(Enumerator, mnemonic, Class) OpClass::k##Class,
#include "dlc/runtime/OpList.inc"
};
} // namespace detail

/// How many ops OpId has; every OpId is below it.
inline constexpr size_t kNumOps = std::size(detail::kOpNames);

/// The op's mnemonic without the dialect, as plans and reports spell it
/// ("conv2d_backward_filter"); empty for a value that is no op.
constexpr std::string_view opName(OpId id) {
  size_t i = static_cast<size_t>(id);
  return i < kNumOps ? detail::kOpNames[i] : std::string_view();
}

/// The OpId of a mnemonic ("relu"), or nullopt for a name that is no op.
constexpr std::optional<OpId> parseOpId(std::string_view name) {
  for (size_t i = 0; i < kNumOps; ++i)
    if (detail::kOpNames[i] == name)
      return static_cast<OpId>(i);
  return std::nullopt;
}

/// The class ODS gives the op (Train_OpClass). A plan kernel carries its
/// own (PlanKernel::opClass); this is for code that builds kernels.
constexpr OpClass opClassOf(OpId id) { return detail::kOpClasses[static_cast<size_t>(id)]; }

/// FNV-1a over the mnemonics in OpId order, each ended by '\n': two builds
/// agree on what every OpId means exactly when their fingerprints agree.
constexpr uint64_t opTableFingerprint() {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (std::string_view name : detail::kOpNames) {
    for (char c : name)
      hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    hash = (hash ^ static_cast<unsigned char>('\n')) * 0x100000001b3ull;
  }
  return hash;
}

} // namespace dlc::rt

#endif // DLC_RUNTIME_OPS_H
