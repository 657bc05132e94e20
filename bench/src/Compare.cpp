//===- Compare.cpp - dlc-bench compare ------------------------------------===//
//
// Machines here are shared and noisy: a change is only called one when the
// spreads of the repeats of the two runs do not overlap.
//
//===----------------------------------------------------------------------===//

#include "Compare.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <iomanip>
#include <map>
#include <sstream>
#include <vector>

namespace dlc::bench {

namespace {

struct Measured {
  double median = 0, min = 0, max = 0;
};

/// Configuration key -> samples/s, from a single report or a sweep.
bool load(const std::string &path, std::map<std::string, Measured> &out,
          std::vector<std::string> &order, std::ostream &errors) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    errors << "dlc-bench compare: error: cannot read " << path << "\n";
    return false;
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed) {
    errors << "dlc-bench compare: error: " << path << " is not JSON: "
           << llvm::toString(parsed.takeError()) << "\n";
    return false;
  }
  std::vector<const llvm::json::Object *> results;
  const llvm::json::Object *top = parsed->getAsObject();
  if (top && top->getArray("results")) {
    for (const llvm::json::Value &v : *top->getArray("results"))
      if (const llvm::json::Object *o = v.getAsObject())
        results.push_back(o);
  } else if (top) {
    results.push_back(top);
  }
  for (const llvm::json::Object *r : results) {
    const llvm::json::Object *sps = r->getObject("samples_per_sec");
    if (!sps || !sps->getNumber("median")) {
      errors << "dlc-bench compare: error: " << path
             << " has a result without samples_per_sec (a --compile-only report?)\n";
      return false;
    }
    std::ostringstream key;
    key << r->getString("model").value_or("?").str() << " "
        << r->getString("backend").value_or("?").str() << " "
        << r->getString("precision").value_or("?").str() << " "
        << r->getString("fusion").value_or("?").str() << " gpus "
        << r->getInteger("gpus").value_or(1) << " batch "
        << r->getInteger("batch").value_or(0);
    Measured m{*sps->getNumber("median"), sps->getNumber("min").value_or(0),
               sps->getNumber("max").value_or(0)};
    if (!out.count(key.str()))
      order.push_back(key.str());
    out[key.str()] = m;
  }
  return true;
}

} // namespace

int runCompare(const std::string &before, const std::string &after,
               std::ostream &os, std::ostream &errors) {
  std::map<std::string, Measured> a, b;
  std::vector<std::string> order, orderB;
  if (!load(before, a, order, errors) || !load(after, b, orderB, errors))
    return 1;
  size_t width = 13;
  for (const std::string &key : order)
    width = std::max(width, key.size());
  os << std::left << std::setw(width + 2) << "configuration" << std::right
     << std::setw(12) << "before" << std::setw(12) << "after" << std::setw(10)
     << "change" << "  verdict\n";
  int compared = 0;
  for (const std::string &key : order) {
    auto it = b.find(key);
    if (it == b.end())
      continue;
    const Measured &x = a[key], &y = it->second;
    double change = 100.0 * (y.median / x.median - 1.0);
    bool apart = y.min > x.max || y.max < x.min;
    os << std::left << std::setw(width + 2) << key << std::right << std::fixed
       << std::setprecision(1) << std::setw(12) << x.median << std::setw(12)
       << y.median << std::setw(9) << std::showpos << change << "%"
       << std::noshowpos << "  "
       << (apart ? (change > 0 ? "FASTER" : "SLOWER")
                 : "within the spread of the repeats")
       << "\n";
    ++compared;
  }
  for (const std::string &key : orderB)
    if (!a.count(key))
      os << std::left << std::setw(width + 2) << key << "  only in " << after << "\n";
  if (!compared) {
    errors << "dlc-bench compare: error: the reports share no configuration\n";
    return 1;
  }
  return 0;
}

} // namespace dlc::bench
