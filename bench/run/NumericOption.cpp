//===- NumericOption.cpp - checked numeric command-line values ------------===//

#include "NumericOption.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace dlc::bench {

namespace {

std::string integerExpectation(const IntegerRange &range) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (range.list && range.min == 1 && range.max == kMax)
    return "positive integers";
  std::string what = range.list ? "integers" : "an integer";
  if (range.max == kMax)
    return what + " >= " + std::to_string(range.min);
  return what + " in [" + std::to_string(range.min) + ", " +
         std::to_string(range.max) + "]";
}

std::string formatReal(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

} // namespace

std::optional<int64_t> parseIntegerOption(const std::string &option,
                                          const std::string &text,
                                          IntegerRange range, std::string &error) {
  int64_t value = 0;
  const char *first = text.data(), *last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc() || end != last || value < range.min ||
      value > range.max) {
    // from_chars reports a number past int64 as out of range, not clamped.
    error = option + " expects " + integerExpectation(range) + ", got '" + text + "'" +
            (ec == std::errc::result_out_of_range ? " (past 64 bits)" : "");
    return std::nullopt;
  }
  return value;
}

std::optional<double> parseRealOption(const std::string &option,
                                      const std::string &text, RealRange range,
                                      std::string &error) {
  char *end = nullptr;
  errno = 0;
  double value = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  bool parsed = !text.empty() && end && *end == '\0' && errno != ERANGE &&
                std::isfinite(value);
  bool inRange = parsed && (range.minInclusive ? value >= range.min : value > range.min) &&
                 value <= range.max;
  if (inRange)
    return value;
  error = option + " must be " + (parsed ? "" : "a finite number ") +
          (range.minInclusive ? ">= " : "> ") + formatReal(range.min);
  if (range.max != std::numeric_limits<double>::max())
    error += " and <= " + formatReal(range.max);
  error += ", got '" + text + "'";
  return std::nullopt;
}

} // namespace dlc::bench
