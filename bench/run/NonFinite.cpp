//===- NonFinite.cpp - a run whose loss is NaN or infinite ----------------===//

#include "NonFinite.h"

#include <cmath>
#include <sstream>

namespace dlc::bench {

bool lossFinite(const Result &result) {
  for (const RepeatResult &r : result.repeatResults)
    if (!std::isfinite(r.lossFirst) || !std::isfinite(r.lossLast))
      return false;
  return true;
}

std::string nonFiniteLossWarning(const Result &result) {
  for (size_t i = 0; i < result.repeatResults.size(); ++i) {
    const RepeatResult &r = result.repeatResults[i];
    if (std::isfinite(r.lossFirst) && std::isfinite(r.lossLast))
      continue;
    std::ostringstream out;
    out << result.model << " " << result.precision << " " << result.fusion << ", batch "
        << result.batch << ": the loss is not finite in repeat " << i << " (first "
        << r.lossFirst << ", last " << r.lossLast
        << "); give --allow-nonfinite to accept it";
    return out.str();
  }
  return "";
}

} // namespace dlc::bench
