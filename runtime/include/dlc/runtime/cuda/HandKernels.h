//===- HandKernels.h - hand-written CUDA kernels for single ops -*- C++ -*-===//
//
// The ops the kernel generator does not write and no vendor library covers
// (softmax, layer norm, cross-entropy, embeddings, dropout, pooling, batch
// norm, bilinear resize, single optimizer updates, the dynamic loss scale,
// attention) have hand-written CUDA C++ kernels, one text per op family in
// runtime/src/cuda/kernels/*.cuh, embedded at build time for NVRTC (their
// host side under runtime/src/cuda/handwritten/). planHandKernel()
// decides, for one plan kernel, which kernel runs it and with what
// parameters, or refuses with a reason (the executor then falls back to
// the host). Every kernel takes (DlcHandArgs a, const long long *step), the
// step counter in device memory; HandKernelArgs.h declares DlcHandArgs for
// both sides. An op with more operands than its ten pointers gets an
// operand table (HandKernel::table); one whose blocks combine partial
// results gets scratch memory (HandKernel::scratchSlot).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_HANDKERNELS_H
#define DLC_RUNTIME_CUDA_HANDKERNELS_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/cuda/HandKernelArgs.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace dlc::rt::cuda {

/// The kernels' one parameter block, as the kernel sources declare it.
using HandKernelArgs = ::DlcHandArgs;
static_assert(std::is_trivially_copyable_v<HandKernelArgs>, "passed by value to a kernel");
static_assert(offsetof(HandKernelArgs, i) == 8 * HandKernelArgs::kPointers +
                                              4 * HandKernelArgs::kPointers,
              "the words follow the pointers and their types");
/// One entry of an operand table.
using HandOperand = ::DlcHandOperand;
static_assert(std::is_trivially_copyable_v<HandOperand>, "copied to the device as bytes");

/// One plan kernel as a hand-written launch.
struct HandKernel {
  std::string family;  // "softmax": the source it is in (handKernelSource)
  std::string name;    // "dlc_hw_softmax": its extern "C" entry point
  /// Buffer ids for HandKernelArgs::p, by slot (HandKernelArgs.h names
  /// each op's); -1 for an absent optional operand (its pointer stays null).
  std::vector<int32_t> buffers;
  HandKernelArgs args;  // t and the family's attributes filled in; p left to the caller
  /// Operands beyond p's ten slots (loss_scale_status reads every
  /// parameter gradient). When tableSlot >= 0 the caller copies `table`
  /// into memory the kernel can read (device memory on a GPU), with each
  /// entry's p set to buffer tableBuffers[k], and stores the copy's address
  /// in args.p[tableSlot] (whose `buffers` entry is -1).
  int tableSlot = -1;
  std::vector<int32_t> tableBuffers;
  std::vector<HandOperand> table; // n and t filled in
  /// Device memory the blocks combine their partial results in (a
  /// cross-entropy's sum over positions, a layer norm's gamma gradient).
  /// When scratchSlot >= 0 the caller provides scratchBytes of memory,
  /// zeroed before the first launch, at args.p[scratchSlot] (whose
  /// `buffers` entry is -1); the kernel leaves its arrival counters (at the
  /// scratch's start: one for most kernels, one per row group for
  /// embedding_backward) zeroed when it returns.
  int scratchSlot = -1;
  int64_t scratchBytes = 0;
  /// Launches in a row, each seeing its index in args.i[kPhaseSlot]: a
  /// kernel whose blocks need every block's earlier result (a channel's
  /// statistics split over blocks) runs in phases.
  int phases = 1;
  static constexpr int kPhaseSlot = DLC_HAND_PHASE_WORD;
  /// The kernel draws dropout masks: it reads the dropout counter (the
  /// step plus the rank's offset, Collective.h) where others read the step.
  bool readsDropoutCounter = false;
  int blockSize = 256;  // blockDim.x, a power of two
  /// Blocks the kernel can use; the launcher may cap it (grid-stride loops
  /// cover the rest), never raise it.
  int64_t blocks = 1;
};

/// The kernel for `kernel` of `plan`, or kInvalidArgument saying why there
/// is none (op not covered, a shape or element type it does not handle).
/// `plan` has passed validatePlan: the attributes its op's rule checks
/// (OpRules.h: axes within rank, rates, labels per position) are read as
/// facts, not checked again.
StatusOr<HandKernel> planHandKernel(const Plan &plan, const PlanKernel &kernel);

/// The families, and each one's complete source (prelude included).
const std::vector<std::string> &handKernelFamilies();
std::string handKernelSource(const std::string &family);
/// The ops planHandKernel can take.
const std::vector<std::string> &handKernelOps();

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_HANDKERNELS_H
