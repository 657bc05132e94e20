//===- Compare.h - dlc-bench compare ----------------------------*- C++ -*-===//

#ifndef DLC_BENCH_COMPARE_H
#define DLC_BENCH_COMPARE_H

#include <ostream>
#include <string>

namespace dlc::bench {

/// `dlc-bench compare BEFORE.json AFTER.json`: for every configuration in
/// both reports (model, backend, precision, fusion, gpus, batch), the change
/// in median samples/s, called FASTER or SLOWER only where the bootstrap
/// interval of the ratio of medians excludes 1 ("no significant difference"
/// otherwise; reports without repeats: their intervals, else their min-max
/// ranges, must not overlap). Returns the exit code.
int runCompare(const std::string &before, const std::string &after,
               std::ostream &os, std::ostream &errors);

} // namespace dlc::bench

#endif // DLC_BENCH_COMPARE_H
