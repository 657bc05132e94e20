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
  std::string model, backend, precision, fusion, revision;
  std::optional<int64_t> batch;
  int64_t gpus = 1;
  std::optional<double> sps, spsMin, spsMax, kernels, bytes;
  /// The median's confidence interval; absent in reports from before it.
  std::optional<double> ciLow, ciHigh, ciLevel;
  std::vector<std::pair<std::string, double>> kernelsByKind;
  /// Each repeat's samples/s: what a speed-up's interval is drawn from.
  std::vector<double> repeatSps;
  /// --profile: milliseconds per step by launch kind, summed over launches.
  std::vector<std::pair<std::string, double>> msByKind;
  /// --loss-every: (step, loss) of the first repeat; warm-up steps first.
  std::vector<std::pair<int64_t, double>> losses;
  std::optional<int64_t> warmup;
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
  /// The index of a value already seen; values.size() for one never seen.
  size_t index(const std::string &v) const {
    return std::find(values.begin(), values.end(), v) - values.begin();
  }
  std::vector<std::string> values;
};

/// What tells a model's configurations apart besides precision, batch and
/// fusion: GPUs, backend and report only where they differ. Reports of one
/// backend are told apart by dlc's revision where theirs differ, by the
/// report's name only where nothing else does.
struct Distinct {
  bool gpus = false, backend = false, source = false, revision = false;
  explicit Distinct(const std::vector<const Entry *> &es);
  /// "batch 16 · 2 GPUs · torch-cuda": all but precision and fusion.
  std::string label(const Entry &e) const;
  /// The same after the precision: a grouped chart's heading.
  std::string heading(const Entry &e) const;
  /// Precision, fusion and the rest: a line's or a table row's name.
  std::string name(const Entry &e) const;
};

/// A chart's heading and the configurations under it.
struct Group {
  std::string title;
  std::vector<const Entry *> rows;
};

/// A model's configurations grouped by precision and batch (and what else
/// Distinct tells apart), the fusion strategies side by side within each
/// group in the page's order of strategies.
std::vector<Group> groupByConfiguration(const std::vector<const Entry *> &entries,
                                        const Distinct &distinct, const Order &fusions);

/// Every configuration on the page, and the orders (so the colours) of its
/// models, fusion strategies and kernel kinds.
struct Page {
  std::vector<Entry> entries;
  std::vector<std::string> sources;
  Order models, fusions, kinds, precisions;
  /// The entries of `model`, in the page's order.
  std::vector<const Entry *> of(const std::string &model) const;
};

} // namespace dlc::bench::html

#endif // DLC_BENCH_HTMLMODEL_H
