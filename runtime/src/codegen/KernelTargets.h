//===- KernelTargets.h - what the CUDA and host targets write differently -===//
//
// The generator (KernelCodegen.cpp) decides a launch's kernel form, its
// dataflow and its expressions once, for both targets; a target writes
// how the kernel's items are shared out, what a block's threads do
// together (their loops, shared arrays, barriers and reductions) and what
// it includes. The forms hold no CUDA text of their own: what names a
// thread or a block is written here.
//
//   CUDA   (CudaTarget.cpp)  grid-stride loops over blocks and threads,
//                            compiled by NVRTC;
//   host   (HostTarget.cpp)  two more parameters (dlc_part, dlc_parts), each
//                            loop over items covering part dlc_part's
//                            contiguous share (kernels/HostParts.h), compiled
//                            by the system compiler (cpu/HostKernels.h).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CODEGEN_KERNELTARGETS_H
#define DLC_RUNTIME_CODEGEN_KERNELTARGETS_H

#include "dlc/runtime/codegen/KernelCodegen.h"

#include <string>

namespace dlc::rt::codegen {

class TargetWriter {
public:
  virtual ~TargetWriter() = default;
  /// Parameters every kernel takes after its own ("" or ", int a, ...").
  virtual std::string extraParams() const = 0;
  /// The head of a loop of `var` over `count` independent items (rows,
  /// tiles, outputs), one block's each: on CUDA a grid-stride loop over
  /// blocks, on the host the part's share.
  virtual std::string itemLoop(const std::string &var, const std::string &count) const = 0;
  /// The same over items in tiles of the block's threads along x (a column
  /// reduction's outputs), `var` a tile's first item.
  virtual std::string tileLoop(const std::string &var, const std::string &count) const = 0;

  /// What a block's threads do together: a loop of `type var` over
  /// [0, bound) shared by the block's threads along `axis` ('x' or 'y');
  /// this thread's index along `axis`; the block's threads along `axis`.
  virtual std::string threadLoop(const std::string &type, const std::string &var, char axis,
                                 const std::string &bound) const = 0;
  virtual std::string threadIndex(char axis) const = 0;
  virtual std::string blockThreads(char axis) const = 0;
  /// The declaration of an array the block's threads share: `dims` as
  /// "[32][33]".
  virtual std::string sharedArray(const std::string &type, const std::string &name,
                                  const std::string &dims) const = 0;
  /// How many blocks (parts) arrive at a launch's counter
  /// (dlc_last_arrival): the grid's blocks, or the host's parts.
  virtual std::string arrivals() const = 0;
  /// The statement that waits for every thread of the block.
  virtual std::string barrier() const = 0;
  /// The statement that combines `acc` over the block's `threads` threads
  /// (a sum, or with `max` a maximum that propagates NaN) through
  /// `scratch` (32 slots): into thread 0's `acc`, or with `everyThread`
  /// into every thread's (a row's statistics, which every thread reads).
  virtual std::string blockReduce(const std::string &acc, int threads, bool max,
                                  const std::string &scratch, bool everyThread) const = 0;
  /// A kernel's text up to its name: extern "C", and with `threadsBound`
  /// > 0 the most threads a block launches with.
  virtual std::string kernelHead(int threadsBound) const = 0;

  /// Whether the loop form packs its accesses into 16-byte vectors by hand
  /// (vectorLoop and tailLoop) rather than running one loop over elements
  /// (elementLoop) that the compiler vectorizes at the machine's own width.
  /// A GPU thread wants the wide loads; GCC vectorizes the packed form only
  /// 4 floats wide, and not at all once the body calls a function: the
  /// element loop ran tanh-GELU 3x faster on an AVX-512 core.
  virtual bool packsVectors() const = 0;
  /// The packed loop form's two loops, over n / v vectors of v elements
  /// (`q`) and over the tail that fills no vector (`i`), with their comments.
  virtual std::string vectorLoop(const std::string &v) const = 0;
  virtual std::string tailLoop(const std::string &v) const = 0;
  /// The unpacked loop form's loop over the n elements (`i`).
  virtual std::string elementLoop() const = 0;
  /// The unpacked loop form as a loop over n / inner rows (`o`) around one
  /// over the innermost dimension (`ic`), defining i; the caller closes the
  /// inner loop. Only targets that do not pack vectors are asked.
  virtual std::string rowLoops(const std::string &inner) const = 0;
  /// What a kernel's text starts with when it computes on f16 / bf16
  /// values: the half types' headers, and DLC_F16 / DLC_BF16 for the
  /// prelude.
  virtual std::string halfIncludes(bool f16, bool bf16) const = 0;
  /// What the horizontal cast kernel starts with: it handles half values
  /// as their bits (kernels/FloatToHalf.cuh), which needs no header but
  /// NVRTC's.
  virtual std::string castTableIncludes() const = 0;
  /// What a kernel's text holds between the prelude and its signature.
  virtual std::string afterPrelude() const = 0;
  /// The optimizer table kernel after its table and its updates
  /// (TableForms.cpp: DlcSegment, dlc_adamw_range, ...): the loop over the
  /// segments that calls them on the elements this thread or part takes.
  virtual std::string optimizerKernel() const = 0;
  /// The horizontal cast kernel after its element types (DlcF32, DlcF16,
  /// DlcBF16: storage, widen, narrow), its table (DlcCastSegment, whose
  /// [begin, end) numbers a segment's 16-byte vectors among all segments')
  /// and DLC_CAST_DISPATCH (a segment's pair of types to a template's
  /// instance): the loop that casts them, each target its own. A GPU thread takes a
  /// vector at a time, found by bisection; a core takes whole runs of a
  /// segment, one plain loop each, for the compiler to vectorize (a vector
  /// at a time with a search and a switch per vector streamed BERT-base's
  /// 110M parameters at 8 GB/s).
  virtual std::string castTableKernel() const = 0;
  /// Whether a row kernel keeps values it needs in several passes (the row
  /// op's operands, softmax's exponentials) in a per-row array rather than
  /// recomputing them: a core has the cache for a row, a GPU's block would
  /// spill.
  virtual bool keepsRowValues() const = 0;
  /// Whether a column reduction (reduced dimensions outermost: a bias
  /// gradient) reads its input row after row into a tile of accumulators,
  /// as a core's cache and vector units want, rather than a lane per output
  /// as a GPU's coalesced loads want.
  virtual bool sumsColumnsByRows() const = 0;
  /// The type a reduction form's sums accumulate in, for what one thread
  /// adds on its own: a GPU thread adds a few elements before the block's
  /// tree combines the threads' partials (float); a host part's block is one
  /// thread that adds a whole row in order, whose error in float grows with
  /// the row (a squeeze-excite's pooled 32x32 positions: efficientnet_b2
  /// missed PyTorch's step by 1.3x its bound, issue #37), so it sums in
  /// double, as the row form does. Maxima stay float (exact in any type).
  virtual const char *sumType() const = 0;
};

const TargetWriter &cudaTarget();
const TargetWriter &hostTarget();
inline const TargetWriter &targetWriter(KernelTarget target) {
  return target == KernelTarget::kHost ? hostTarget() : cudaTarget();
}

} // namespace dlc::rt::codegen

#endif // DLC_RUNTIME_CODEGEN_KERNELTARGETS_H
