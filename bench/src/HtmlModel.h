//===- HtmlModel.h - the HTML report's configurations -----------*- C++ -*-===//
//
// What the page draws, read from the reports' JSON alone: one Entry per
// configuration, and the orders and groups every chart shares.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_HTMLMODEL_H
#define DLC_BENCH_HTMLMODEL_H

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dlc::bench::html {

/// One configuration of the merged reports, with what the charts draw.
struct Entry {
  std::string id; // "c<position>", the key tests match the JSON with
  std::string source;
  const llvm::json::Object *r = nullptr;
  std::string model, backend, precision, fusion;
  std::optional<int64_t> batch;
  int64_t gpus = 1;
  std::optional<double> sps, spsMin, spsMax, kernels, bytes;
  /// The median's confidence interval; absent in reports from before it.
  std::optional<double> ciLow, ciHigh, ciLevel;
  std::vector<std::pair<std::string, double>> kernelsByKind;
};

/// The configuration `r` of report `source`, the index-th of the page.
Entry makeEntry(const llvm::json::Object &r, const std::string &source, size_t index);

/// Values in first-appearance order, each with its index (its colour).
class Order {
public:
  size_t operator()(const std::string &v) {
    auto it = std::find(values.begin(), values.end(), v);
    if (it != values.end())
      return it - values.begin();
    values.push_back(v);
    return values.size() - 1;
  }
  std::vector<std::string> values;
};

/// What tells a model's configurations apart besides precision and fusion:
/// the batch always, the rest only where they differ.
struct Distinct {
  bool gpus = false, backend = false, source = false;
  explicit Distinct(const std::vector<const Entry *> &es);
  std::string label(const Entry &e) const;
};

/// A chart's heading and the configurations under it.
struct Group {
  std::string title;
  std::vector<const Entry *> rows;
};

/// A model's configurations grouped by precision, then fusion strategy.
std::vector<Group> groupByPrecisionFusion(const std::vector<const Entry *> &entries);

/// Every configuration on the page, and the orders (so the colours) of its
/// models, fusion strategies and kernel kinds.
struct Page {
  std::vector<Entry> entries;
  std::vector<std::string> sources;
  Order models, fusions, kinds;
};

} // namespace dlc::bench::html

#endif // DLC_BENCH_HTMLMODEL_H
