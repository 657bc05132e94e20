//===- OpRules.h - what each op's kernel may be given, checked at load -*- C++ -*-===//
//
// One validation rule per OpId, beside the op's other facts (Ops.h): the
// operands and results a kernel of the op reads and writes, their element
// types, and every attribute the backends read, against the buffers'
// shapes: axes within rank, permutations, windows and strides positive and
// consistent with the shapes, rates in [0, 1), epsilon positive, groups
// dividing channels. validatePlan runs the rule of every kernel, so a plan
// that loads gives each backend a kernel it can run without reading or
// writing outside its buffers; a refused one gets one line naming the
// kernel, the op, the attribute and the values:
//
//   kernel #3 (softmax_cross_entropy): class_axis 4 is outside its operand's rank 2
//
// An op added to ODS needs its rule in OpRules.cpp (docs/AddingAnOp.md);
// OpRulesTest fails for an OpId that has none. Indices and labels are data,
// not plan facts: the kernels check those when they read them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_OPRULES_H
#define DLC_RUNTIME_OPRULES_H

#include "dlc/runtime/Ops.h"
#include "dlc/runtime/Status.h"

#include <cstdint>
#include <string_view>

namespace dlc::rt {

struct Plan;
struct PlanKernel;

/// Checks kernel `k` of `plan` against its op's rule; the kernel's buffer
/// indices must already be in range (validatePlan checks them first).
/// kInvalidArgument, "kernel #K (op): what is wrong, with the values".
Status checkKernelRule(const Plan &plan, size_t k);

/// Whether `id` has a rule. Every op of the dialect has one (OpRulesTest);
/// train.constant's refuses every kernel, constants being buffers.
bool hasKernelRule(OpId id);

/// The validated facts the backends read instead of re-deriving them.
/// An axis attribute (negative counts from the end) as an index in
/// [0, rank): a plan that validated has it in range.
int64_t kernelAxis(const PlanKernel &kernel, std::string_view name, int64_t fallback,
                   int64_t rank);

} // namespace dlc::rt

#endif // DLC_RUNTIME_OPRULES_H
