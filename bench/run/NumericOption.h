//===- NumericOption.h - checked numeric command-line values ----*- C++ -*-===//
//
// dlc-bench and dlc-run read every numeric option through these, so a value
// that does not parse, overflows, is NaN or lies outside the option's range
// is refused in one line naming the option, never clamped or taken as
// "not given".
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_RUN_NUMERICOPTION_H
#define DLC_BENCH_RUN_NUMERICOPTION_H

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace dlc::bench {

/// The range an integer option accepts; `list` words the message for a
/// comma-separated list ("positive integers").
struct IntegerRange {
  int64_t min = 0;
  int64_t max = std::numeric_limits<int64_t>::max();
  bool list = false;
};

/// `text` as one whole decimal integer in `range`; otherwise nullopt, with
/// `error` set to e.g. "--steps expects an integer >= 1, got '0'".
std::optional<int64_t> parseIntegerOption(const std::string &option,
                                          const std::string &text,
                                          IntegerRange range, std::string &error);

/// The range a real option accepts: finite, above `min` (or equal to it when
/// `minInclusive`), at most `max`.
struct RealRange {
  double min = 0;
  bool minInclusive = false;
  double max = std::numeric_limits<double>::max();
};

/// `text` as one whole finite number in `range`; otherwise nullopt, with
/// `error` set to e.g. "--peak-tflops must be > 0, got '-1'".
std::optional<double> parseRealOption(const std::string &option,
                                      const std::string &text, RealRange range,
                                      std::string &error);

} // namespace dlc::bench

#endif // DLC_BENCH_RUN_NUMERICOPTION_H
