//===- NonFinite.h - a run whose loss is NaN or infinite --------*- C++ -*-===//
//
// A NaN or infinite loss is a failed run, not a number to report: dlc-bench
// and dlc-run warn, mark the report and exit non-zero unless told to allow
// it. Only the losses count: a step that AMP's loss scaling skipped after a
// gradient overflow still has a finite loss and is not a failure.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_RUN_NONFINITE_H
#define DLC_BENCH_RUN_NONFINITE_H

#include "Report.h"

#include <string>

namespace dlc::bench {

/// Whether every loss the run recorded (each repeat's first and last) is
/// finite; true when nothing ran.
bool lossFinite(const Result &result);

/// One line for stderr when a loss is not finite, naming the configuration,
/// the repeat and the values; "" when every loss is finite.
std::string nonFiniteLossWarning(const Result &result);

} // namespace dlc::bench

#endif // DLC_BENCH_RUN_NONFINITE_H
