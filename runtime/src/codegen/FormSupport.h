//===- FormSupport.h - what the kernel forms share --------------*- C++ -*-===//
//
// Private to the generator (runtime/src/codegen/): the launch's dataflow,
// the text helpers and the kernel's frame (parameters, name, header) that
// every form uses, and each form's entry point. A form is one file
// (LoopForm.cpp, TransposeForm.cpp, ReductionForm.cpp, RowForm.cpp,
// TableForms.cpp); KernelCodegen.cpp picks one per launch (generate), the
// emitter (Emitter.h) writes the values, the target (KernelTargets.h)
// writes what CUDA and the host write differently.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CODEGEN_FORMSUPPORT_H
#define DLC_RUNTIME_CODEGEN_FORMSUPPORT_H

#include "dlc/runtime/codegen/KernelCodegen.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dlc::rt::codegen {

class Emitter;

using Shape = std::vector<int64_t>;

/// Threads per block of loop and optimizer kernels, and the most of a
/// reduction's: 8 warps keep enough loads in flight per SM without
/// limiting occupancy by registers.
constexpr int kBlockSize = 256;
/// Bytes of one vector access: the widest global load (ld.global.v4.b32).
constexpr int kVectorBytes = 16;

std::string shapeText(const Shape &s);
std::string typeText(const PlanBuffer &b);
/// A double constant as CUDA source, exactly.
std::string doubleLiteral(double v);
/// A float constant as CUDA source that rounds to the same float.
std::string floatLiteral(double v);
/// The C type of a float buffer's elements; null for other types.
const char *cType(DType t);
/// The ops the row form computes: statistics over the last axis, then an
/// element-wise pass over the same row that uses them.
bool isRowOp(const PlanKernel &k);

//===----------------------------------------------------------------------===//
// The launch's dataflow
//===----------------------------------------------------------------------===//

/// What the generator needs to know of the whole plan.
struct PlanIndex {
  std::vector<size_t> launchOf; // kernel -> launch
  /// Each kernel's inputs with views resolved: a reshape is a buffer no
  /// kernel writes, sharing the bytes of the value it reshapes, which is
  /// the last kernel output written at its offset before the reader.
  ResolvedInputs inputs;
};

PlanIndex indexPlan(const Plan &plan, const std::vector<Launch> &launches);

struct Dataflow {
  std::map<int32_t, size_t> producer; // buffer -> plan kernel index
  std::vector<int32_t> inputs;        // read from memory, first-read order
  std::vector<int32_t> exported;      // written to memory, production order
  std::map<int32_t, int32_t> views;   // a view read in the launch -> its value
};

/// Which values leave the launch: the same rule as PlanSummary's byte count
/// (read by another launch, or not a temporary), with reads through views.
Dataflow dataflowOf(const Plan &plan, const Launch &launch, const PlanIndex &index);

bool overlaps(const PlanBuffer &a, const PlanBuffer &b);

//===----------------------------------------------------------------------===//
// The kernel's frame
//===----------------------------------------------------------------------===//

/// The header's list of the launch's ops with their operand types.
std::string opsSummary(const Plan &plan, const Launch &launch);
/// The kernel's parameter list, inputs and outputs in the emitter's order;
/// __restrict__ only when no written buffer shares bytes with another;
/// with `scratch`, the scratch memory's pointer after the step counter's
/// (GeneratedKernel::scratchBytes).
std::string paramList(const Emitter &e, const Dataflow &flow, bool restrict,
                      KernelTarget target, bool scratch = false);
/// The first line of a kernel whose dropouts read the step counter.
std::string stepLine(const Emitter &e);
/// Outputs that share arena bytes with an input (the memory planner gives
/// each kernel of a group its own lifetime, so a later op's result may
/// reuse an earlier op's input) are safe only where each thread reads an
/// element before writing the same element.
std::string aliasHazard(const Plan &plan, const Dataflow &flow, bool identityOnly,
                        bool &anyOverlap);
/// The complete source of `g` from its signature and body: the includes
/// the emitter asked for, the prelude, the target's parts, the header, and
/// the name (the form, the ops and a hash of the rest). Returns the name.
std::string finish(GeneratedKernel &g, const Plan &plan, const Launch &launch,
                   const Emitter &e, const std::string &signatureAndBody,
                   const std::string &form, KernelTarget target,
                   const std::string &opsHeader = "");

//===----------------------------------------------------------------------===//
// The forms (one file each)
//===----------------------------------------------------------------------===//

/// LoopForm.cpp: element-wise, broadcast and data-movement chains.
StatusOr<GeneratedKernel> generateLoop(const Plan &plan, const Launch &launch,
                                       const Dataflow &flow, KernelTarget target);
/// TransposeForm.cpp: a lone batched transpose in shared-memory tiles;
/// nullopt when the launch is not one (the loop form takes it).
std::optional<StatusOr<GeneratedKernel>> generateTranspose(const Plan &plan,
                                                           const Launch &launch,
                                                           const Dataflow &flow,
                                                           KernelTarget target);
/// ReductionForm.cpp: a loop body feeding reductions over the same
/// dimensions, then an element-wise epilogue.
StatusOr<GeneratedKernel> generateReduction(const Plan &plan, const Launch &launch,
                                            const Dataflow &flow,
                                            const std::vector<size_t> &reductions,
                                            KernelTarget target);
/// RowForm.cpp: producers, one row op (isRowOp), its consumers.
StatusOr<GeneratedKernel> generateRow(const Plan &plan, const Launch &launch,
                                      const Dataflow &flow, size_t rowKernel,
                                      KernelTarget target);
/// TableForms.cpp: a horizontal group of optimizer updates (with the
/// casts that widen their gradients).
StatusOr<GeneratedKernel> generateOptimizer(const Plan &plan, const Launch &launch,
                                            KernelTarget target);
/// TableForms.cpp: why the launch's casts are not a horizontal group (one
/// reads another's result, or one is not a float-to-float cast); "" when
/// they are.
std::string horizontalCastRefusal(const Plan &plan, const Launch &launch,
                                  const PlanIndex &index);
/// TableForms.cpp: a horizontal group of independent casts.
StatusOr<GeneratedKernel> generateHorizontalCast(const Plan &plan, const Launch &launch,
                                                 const Dataflow &flow, KernelTarget target);

//===----------------------------------------------------------------------===//
// The table kernels' ABI (TablePacking.cpp)
//===----------------------------------------------------------------------===//

/// Type codes of the table kernels: 0 f32, 1 f16, 2 bf16; -1 otherwise.
int32_t tableDtype(DType t);
/// A cast's 16-byte vectors (of its narrower type), as both targets'
/// kernels (castTableKernel) number them.
int64_t castVectors(const CastSegment &seg);

} // namespace dlc::rt::codegen

#endif // DLC_RUNTIME_CODEGEN_FORMSUPPORT_H
