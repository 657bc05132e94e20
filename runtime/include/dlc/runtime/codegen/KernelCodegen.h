//===- KernelCodegen.h - kernels for a plan's generated launches -*- C++ -*-===//
//
// Every launch the plan summary calls "generated" (a fused group, or a
// single element-wise / broadcast / data-movement / reduction op outside
// groups) becomes one kernel source, for one of two targets: CUDA C++,
// compiled later by NVRTC (the CUDA backend), or host C++, compiled by the
// system compiler (the CPU backend, cpu/HostKernels.h). This layer sits
// below both backends and needs neither a GPU nor a compiler.
// The generator reads the plan only (no MLIR) and decides from a launch's
// ops, never from its fusion kind, what kernel to write:
//
//   loop       element-wise and broadcast chains, casts, transposes, slices
//              and concatenations, computed in registers at each output
//              index (index math for broadcasting), 16-byte vector loads and
//              stores for operands read at the output index, a scalar tail,
//              a grid-stride loop;
//   reduction  a loop body feeding sum_to_shape / reduce_sum / reduce_mean /
//              reduce_max / global_avg_pool, one block per output row, warp
//              shuffles and shared memory, then an element-wise epilogue;
//   row        element-wise producers feeding one softmax, layer_norm,
//              softmax_backward or layer_norm_backward over the last axis,
//              and element-wise
//              consumers of its result (XLA's input fusion): one block per
//              row, each pass over the row recomputing the producers at
//              the element's index, the row's statistics (max and sum,
//              mean and variance, or dot) in double through block-wide
//              reductions as the CPU reference, the last pass applying
//              the consumers and storing everything the launch exports;
//              layer_norm_backward's column sums (gamma's and beta's
//              gradients) as a reduction epilogue in the same launch: the
//              rows in fixed chunks, each chunk's partial sums in scratch
//              memory, summed in chunk order by the block that arrives
//              last (deterministic, whatever the grid or the threads);
//   optimizer  a horizontal group of sgd_update / adamw_update: one kernel
//              walking a table of (param, grad, state, n) segments;
//   horizontal_cast
//              a horizontal group of independent casts of different shapes
//              (mixed precision's weight casts, FuseParameterCasts): one
//              kernel walking a table of (in, out, n, types) segments, each
//              cut into 16-byte vectors, one grid-stride loop over all of
//              them.
//
// The loop, reduction and row kernels take pointers to their buffers, and,
// when a dropout is among their ops, the device step counter last (the
// keep mask hashes it, as the hand-written dropout's).
//
// The optimizer and horizontal_cast kernels share one signature,
// (const table *, int segments, const long long *step): the launcher packs their
// table with packSegmentTable once and uploads it.
//
// The host target (KernelTarget::kHost) writes the same kernels as plain
// C++ for the CPU backend (cpu/HostKernels.h): each takes two more
// parameters, (int dlc_part, int dlc_parts), and computes the contiguous
// share of the launch's items (vectors, rows, tiles, elements) that part
// `dlc_part` of `dlc_parts` owns, where the device's grid-stride loops
// would interleave them across blocks (and threads would then share cache
// lines). Block-level loops stay, with one thread per block.
//
// Launches whose ops the generator does not cover (library ops such as
// batch_norm inside paddle's bn_act group, hand-written ops other than the
// row form's, two row ops in one launch) stay on the library path, and
// `isGeneratable` says why.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CODEGEN_KERNELCODEGEN_H
#define DLC_RUNTIME_CODEGEN_KERNELCODEGEN_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/PlanLaunches.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dlc::rt::codegen {

/// The plan's launches with every group of several kernels that `refusal`
/// refuses (a non-empty reason) split into
/// runs of consecutive element-wise / reduction kernels, split further
/// where the generator refuses a run against the split launches, and the
/// other kernels alone. `splitReason[i]`: "split from its group (reason)"
/// for a part of a split group, "" otherwise. The CUDA backend splits the
/// groups no device kernel computes (LaunchPaths.h), the CPU backend those
/// the generator refuses (cpu/HostKernels.h).
std::vector<Launch> splitGroups(const Plan &plan,
                                const std::function<std::string(const Launch &)> &refusal,
                                std::vector<std::string> &splitReason);
/// The same over `original`, the plan's launches as a backend sees them
/// (planLaunches, some groups' FusionKind recognised again: LaunchPaths.h).
std::vector<Launch> splitGroups(const Plan &plan, std::vector<Launch> original,
                                const std::function<std::string(const Launch &)> &refusal,
                                std::vector<std::string> &splitReason);

/// What a launch of a split group runs as on its target.
enum class PartPath {
  kGenerated, // one generated kernel
  kCall,      // one library or hand-written call of a single op
  kOther,     // anything else (the CUDA backend's host fallback)
};

/// Marks, among splitGroups' result, the groups that run as one call and at
/// most one generated kernel: a library call that cannot take the whole
/// group (cuBLASLt's GEMM with an exact GELU after it, cuDNN's batch norm
/// with its producers before it, a hand-written layer_norm_backward with
/// its producers) plus one kernel for the rest. Such a group is not split:
/// `pair[i]` is set for its launches and their reason becomes "call +
/// kernel (...)" instead of "split from its group (...)". `path(i)` says
/// how launch i runs.
void markCallPlusKernel(const std::vector<Launch> &launches,
                        const std::function<PartPath(size_t)> &path,
                        std::vector<std::string> &splitReason, std::vector<bool> &pair);

/// Whether the generator covers a launch; `reason` says why not.
struct GenerateDecision {
  bool ok = false;
  std::string reason;
};
GenerateDecision isGeneratable(const Plan &plan, const Launch &launch);

/// kTranspose: a lone batched transpose (NCHW <-> NHWC) in shared-memory
/// tiles of kTransposeTile x kTransposeTile elements, kTransposeRows rows of
/// threads per block.
/// What a kernel's source is written for (see the header comment).
enum class KernelTarget { kCuda, kHost };

enum class KernelForm { kLoop, kReduction, kRow, kOptimizer, kHorizontalCast, kTranspose };
constexpr int64_t kTransposeTile = 32, kTransposeRows = 8;
const char *kernelFormName(KernelForm form);
/// The forms whose kernel takes (const table *, int segments, long long
/// step), the table packed by packSegmentTable.
bool walksSegmentTable(KernelForm form);

/// A segment of the optimizer kernel's table: buffer ids (-1 when the op
/// has no such operand) and the op's hyper-parameters. The launcher turns
/// ids into device pointers and uploads the table (DlcSegment in the
/// source).
struct OptimizerSegment {
  bool adamw = false;
  int32_t param = -1, grad = -1, state1 = -1, state2 = -1;
  int32_t newParam = -1, newState1 = -1, newState2 = -1;
  /// Mixed precision: the loss scale's {gradient multiplier, skip flag}.
  int32_t lossScaleStatus = -1;
  /// The gradient's type: 0 f32, 1 f16, 2 bf16 (a half-precision gradient
  /// the kernel widens itself, where the group fused its cast).
  int32_t gradDtype = 0;
  int64_t elements = 0;
  double lr = 0, momentum = 0, weightDecay = 0, beta1 = 0, beta2 = 0,
         epsilon = 0;
  bool nesterov = false;
};

/// A segment of the horizontal cast kernel's table: one cast, `input` to
/// `output` (buffer ids), both f32, f16 or bf16 (DlcCastSegment in the
/// source).
struct CastSegment {
  int32_t input = -1, output = -1;
  DType from = DType::kF32, to = DType::kF32;
  int64_t elements = 0;
};

struct GeneratedKernel {
  /// Stable: the form, the ops and a hash of the source's body, so two
  /// launches with the same computation share one name and one cubin.
  std::string name;
  std::string source; // a complete translation unit for NVRTC (or the host)
  KernelTarget target = KernelTarget::kCuda;
  KernelForm form = KernelForm::kLoop;
  size_t launch = 0;           // Launch::index
  std::vector<size_t> kernels; // the plan kernels it computes
  /// Loop, reduction and row kernels: the kernel's pointer parameters, in
  /// order, as buffer ids (inputs first, then outputs).
  std::vector<int32_t> args;
  /// Loop, reduction and row kernels: a last parameter after `args`, the
  /// step counter in device memory (const long long *), which dropout reads.
  bool readsStep = false;
  /// Row kernels with column sums (layer_norm_backward's gamma and beta
  /// gradients): bytes of scratch memory, zeroed before the first launch,
  /// passed as one more parameter (unsigned char *) after the step
  /// counter's. Its first word counts the blocks that have arrived (back
  /// at zero when the launch ends), the per-item partial sums follow at
  /// byte 16.
  int64_t scratchBytes = 0;
  int blockSize = 256;  // blockDim.x
  int blockSizeY = 1;   // blockDim.y: > 1 for tiled column reductions
  /// Threads the kernel can use (loop), blocks (reduction: one per output
  /// row, or per tile of 32 outputs; row: one per row; transpose: one per
  /// tile), elements over all segments
  /// (optimizer) or vectors over all segments (horizontal cast); the
  /// launcher caps the grid to what fills the GPU, the grid-stride loops do
  /// the rest.
  int64_t work = 0;
  /// Optimizer kernels: the table; the parameters are
  /// (const DlcSegment *table, int segments, const long long *step), the
  /// step counter in device memory.
  std::vector<OptimizerSegment> segments;
  /// Horizontal cast kernels: the table; the parameters are
  /// (const DlcCastSegment *table, int segments, const long long *step).
  std::vector<CastSegment> castSegments;
  /// The rows of the table the kernel walks (0 for loops and reductions).
  size_t tableSegments() const { return segments.size() + castSegments.size(); }
};

/// One launch's kernel; kInvalidArgument naming the launch when
/// isGeneratable refuses it.
StatusOr<GeneratedKernel> generateKernel(const Plan &plan, const Launch &launch);
/// The same, `launch` being one of `launches` (a plan's launches with some
/// groups split, LaunchPaths.h): which values leave the launch is decided
/// against those launches.
StatusOr<GeneratedKernel> generateKernel(const Plan &plan, const Launch &launch,
                                         const std::vector<Launch> &launches,
                                         KernelTarget target = KernelTarget::kCuda);

/// Every generated launch of a plan: kernels for those the generator
/// covers, and the rest with the reason they take the library path.
struct PlanKernels {
  std::vector<GeneratedKernel> kernels;
  std::vector<std::pair<Launch, std::string>> refused;
};
PlanKernels generatePlanKernels(const Plan &plan,
                                KernelTarget target = KernelTarget::kCuda);

/// The optimizer kernel's table as the device reads it (struct DlcSegment
/// in the source: 112 bytes per segment), with each buffer id turned into a
/// device address by `address`.
std::string packOptimizerTable(const std::vector<OptimizerSegment> &segments,
                               const std::function<uint64_t(int32_t)> &address);
/// The horizontal cast kernel's table (struct DlcCastSegment: 48 bytes per
/// segment).
std::string packCastTable(const std::vector<CastSegment> &segments,
                          const std::function<uint64_t(int32_t)> &address);
/// The table of a kernel whose form walksSegmentTable, whichever it is.
std::string packSegmentTable(const GeneratedKernel &kernel,
                             const std::function<uint64_t(int32_t)> &address);

} // namespace dlc::rt::codegen

#endif // DLC_RUNTIME_CODEGEN_KERNELCODEGEN_H
