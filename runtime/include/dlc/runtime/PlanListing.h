//===- PlanListing.h - a plan as text a person reads ------------*- C++ -*-===//
//
// The plan file is binary (Plan.h); this is its listing, for --debug-dir
// and for anyone asking what a compiled step holds: every buffer with its
// role, type, shape and place in the arena, then every kernel in launch
// order with its op class, fused group, operands and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_PLANLISTING_H
#define DLC_RUNTIME_PLANLISTING_H

#include "dlc/runtime/Plan.h"

#include <ostream>

namespace dlc::rt {

/// Writes the listing of `plan` to `os`. Constants' bytes are left out (the
/// listing gives their size); every other field of the plan is there.
void printPlanListing(std::ostream &os, const Plan &plan);

} // namespace dlc::rt

#endif // DLC_RUNTIME_PLANLISTING_H
