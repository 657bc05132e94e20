//===- Compare.h - dlc-bench compare ----------------------------*- C++ -*-===//

#ifndef DLC_BENCH_COMPARE_H
#define DLC_BENCH_COMPARE_H

#include <ostream>
#include <string>

namespace dlc::bench {

/// `dlc-bench compare BEFORE.json AFTER.json`: for every configuration in
/// both reports (model, backend, precision, fusion, gpus, batch), the change
/// in median samples/s, flagged only where the two runs' ranges of repeats
/// (min to max) do not overlap. Returns the exit code.
int runCompare(const std::string &before, const std::string &after,
               std::ostream &os, std::ostream &errors);

} // namespace dlc::bench

#endif // DLC_BENCH_COMPARE_H
