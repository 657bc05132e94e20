//===- Compare.cpp - dlc-bench compare ------------------------------------===//
//
// Machines here are shared and noisy: a change is only called one when the
// bootstrap confidence interval of the ratio of the two medians, drawn from
// both runs' repeats, excludes 1 (Stats.h). Reports without repeats fall
// back to their intervals (apart or not), then to the repeats' min-max.
//
//===----------------------------------------------------------------------===//

#include "Compare.h"
#include "Json.h"
#include "Stats.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

namespace dlc::bench {

namespace {

struct Measured {
  double median = 0, min = 0, max = 0;
  /// What was run (model, precision, gpus, batch) and by what (backend and
  /// fusion): reports of two frameworks pair on the first.
  std::string workload, runner;
  /// Each repeat's samples/s (repeat_results), and the median's interval.
  std::vector<double> repeats;
  std::optional<double> ciLow, ciHigh, ciLevel;
  /// --profile's milliseconds per step by launch kind, and the launches.
  std::map<std::string, std::pair<double, int64_t>> profile;
};

/// The two runs' profiles side by side, by launch kind (the fusion kind or
/// the op), slowest before first: where a change in step time went.
void compareProfiles(std::ostream &os, const std::string &key, const Measured &x,
                     const Measured &y) {
  std::map<std::string, std::pair<double, double>> kinds;
  for (auto &[kind, entry] : x.profile)
    kinds[kind].first = entry.first;
  for (auto &[kind, entry] : y.profile)
    kinds[kind].second = entry.first;
  std::vector<std::pair<std::string, std::pair<double, double>>> rows(kinds.begin(),
                                                                      kinds.end());
  std::stable_sort(rows.begin(), rows.end(), [](auto &a, auto &b) {
    return std::max(a.second.first, a.second.second) >
           std::max(b.second.first, b.second.second);
  });
  size_t width = 20;
  for (auto &row : rows)
    width = std::max(width, row.first.size());
  os << "\nprofile of " << key << " by launch kind (ms/step, launches):\n";
  auto count = [](const Measured &m, const std::string &kind) {
    auto it = m.profile.find(kind);
    return it == m.profile.end() ? int64_t(0) : it->second.second;
  };
  double before = 0, after = 0;
  for (auto &[kind, ms] : rows) {
    before += ms.first;
    after += ms.second;
    os << "  " << std::left << std::setw(width + 2) << kind << std::right << std::fixed
       << std::setprecision(3) << std::setw(10) << ms.first << " (" << count(x, kind)
       << ")" << std::setw(10) << ms.second << " (" << count(y, kind) << ")"
       << std::setw(10) << std::showpos << ms.second - ms.first << std::noshowpos << "\n";
  }
  os << "  " << std::left << std::setw(width + 2) << "total" << std::right << std::setw(10)
     << before << std::setw(14) << after << std::setw(14) << std::showpos << after - before
     << std::noshowpos << "\n";
}

/// What produced a report's results: their dlc revisions and hosts
/// (Provenance.h), each set in first-appearance order.
struct Origin {
  std::vector<std::string> revisions, hosts;
};

void note(std::vector<std::string> &values, const std::string &value) {
  if (!value.empty() && !llvm::is_contained(values, value))
    values.push_back(value);
}

std::string joined(const std::vector<std::string> &values) {
  std::string text;
  for (const std::string &v : values)
    text += (text.empty() ? "" : ", ") + v;
  return text;
}

/// Configuration key -> samples/s, from a single report or a sweep.
bool load(const std::string &path, std::map<std::string, Measured> &out,
          std::vector<std::string> &order, Origin &origin, std::ostream &errors) {
  std::vector<llvm::json::Object> results;
  std::string error;
  if (!readReport(path, results, error)) {
    errors << "dlc-bench compare: error: " << error << "\n";
    return false;
  }
  for (const llvm::json::Object &r : results) {
    const llvm::json::Object *sps = r.getObject("samples_per_sec");
    if (!sps || !sps->getNumber("median")) {
      errors << "dlc-bench compare: error: " << path
             << " has a result without samples_per_sec (a --compile-only report?)\n";
      return false;
    }
    std::string key = configurationKey(r);
    auto text = [&](llvm::StringRef k) { return r.getString(k).value_or("?").str(); };
    Measured m{*sps->getNumber("median"), sps->getNumber("min").value_or(0),
               sps->getNumber("max").value_or(0),
               text("model") + " " + text("precision") + " gpus " +
                   std::to_string(r.getInteger("gpus").value_or(1)) + " batch " +
                   std::to_string(r.getInteger("batch").value_or(0)),
               text("backend") + " " + text("fusion")};
    if (const llvm::json::Object *ci = r.getObject("samples_per_sec_ci")) {
      m.ciLow = ci->getNumber("low");
      m.ciHigh = ci->getNumber("high");
      m.ciLevel = ci->getNumber("level");
    }
    if (const llvm::json::Array *repeats = r.getArray("repeat_results"))
      for (const llvm::json::Value &repeat : *repeats)
        if (const llvm::json::Object *o = repeat.getAsObject())
          if (std::optional<double> v = o->getNumber("samples_per_sec"))
            m.repeats.push_back(*v);
    if (const llvm::json::Array *profile = r.getArray("profile"))
      for (const llvm::json::Value &launch : *profile)
        if (const llvm::json::Object *o = launch.getAsObject()) {
          auto &entry = m.profile[o->getString("kind").value_or("?").str()];
          entry.first += o->getNumber("ms_per_step").value_or(0);
          ++entry.second;
        }
    if (!out.count(key))
      order.push_back(key);
    out[key] = m;
    note(origin.revisions, r.getString("dlc_revision").value_or("").str());
    note(origin.hosts, reportHost(r));
  }
  return true;
}

} // namespace

int runCompare(const std::string &before, const std::string &after,
               std::ostream &os, std::ostream &errors) {
  std::map<std::string, Measured> a, b;
  std::vector<std::string> order, orderB;
  Origin originA, originB;
  if (!load(before, a, order, originA, errors) || !load(after, b, orderB, originB, errors))
    return 1;
  // A change measured across machines is the machines' as much as the
  // code's: say so. Revisions are what a before/after usually differs by.
  if (!originA.hosts.empty() && !originB.hosts.empty() && originA.hosts != originB.hosts)
    os << "note: the runs are from different hosts (before: " << joined(originA.hosts)
       << "; after: " << joined(originB.hosts) << "): the change includes the machine\n";
  if (!originA.revisions.empty() && !originB.revisions.empty() &&
      originA.revisions != originB.revisions)
    os << "dlc revisions: " << joined(originA.revisions) << " -> " << joined(originB.revisions)
       << "\n";
  // Two frameworks' reports (dlc and a peer) share no configuration: pair
  // every result of one with every result of the other that ran the same
  // workload, named "workload: before-runner -> after-runner".
  bool shared = llvm::any_of(order, [&](const std::string &k) { return b.count(k) > 0; });
  if (!shared) {
    std::map<std::string, Measured> pairedA, pairedB;
    std::vector<std::string> pairedOrder;
    for (const std::string &ka : order)
      for (const std::string &kb : orderB)
        if (a[ka].workload == b[kb].workload) {
          std::string key = a[ka].workload + ": " + a[ka].runner + " -> " + b[kb].runner;
          pairedA[key] = a[ka];
          pairedB[key] = b[kb];
          pairedOrder.push_back(key);
        }
    if (!pairedOrder.empty()) {
      a = std::move(pairedA);
      b = std::move(pairedB);
      order = std::move(pairedOrder);
      orderB.clear();
      os << "(no configuration in both reports: results of the same model, "
            "precision, gpus and batch are paired)\n";
    }
  }
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
    // The strongest evidence both reports hold: their repeats, their
    // intervals, or (older reports) the range of their repeats.
    std::string verdict, interval;
    if (!x.repeats.empty() && !y.repeats.empty()) {
      double level = x.ciLevel.value_or(y.ciLevel.value_or(kConfidenceLevel));
      Interval ratio = bootstrapRatio(x.repeats, y.repeats, level);
      Verdict v = verdictOf(ratio);
      verdict = v == Verdict::kFaster   ? "FASTER"
                : v == Verdict::kSlower ? "SLOWER"
                                        : verdictName(v);
      std::ostringstream text;
      text << std::fixed << std::setprecision(1) << std::showpos << " (" << levelName(level)
           << " CI of the change " << 100 * (ratio.low - 1) << "% to "
           << 100 * (ratio.high - 1) << "%)";
      interval = text.str();
    } else if (x.ciLow && x.ciHigh && y.ciLow && y.ciHigh) {
      bool apart = *y.ciLow > *x.ciHigh || *y.ciHigh < *x.ciLow;
      verdict = apart ? (change > 0 ? "FASTER" : "SLOWER") : "no significant difference";
      interval = " (confidence intervals " + std::string(apart ? "apart" : "overlap") + ")";
    } else {
      bool apart = y.min > x.max || y.max < x.min;
      verdict = apart ? (change > 0 ? "FASTER" : "SLOWER") : "within the spread of the repeats";
    }
    os << std::left << std::setw(width + 2) << key << std::right << std::fixed
       << std::setprecision(1) << std::setw(12) << x.median << std::setw(12)
       << y.median << std::setw(9) << std::showpos << change << "%"
       << std::noshowpos << "  " << verdict << interval << "\n";
    ++compared;
  }
  for (const std::string &key : orderB)
    if (!a.count(key))
      os << std::left << std::setw(width + 2) << key << "  only in " << after << "\n";
  for (const std::string &key : order)
    if (auto it = b.find(key); it != b.end() && !a[key].profile.empty() &&
                               !it->second.profile.empty())
      compareProfiles(os, key, a[key], it->second);
  if (!compared) {
    errors << "dlc-bench compare: error: the reports share no configuration, "
              "and no result of one ran the same model, precision, gpus and batch "
              "as a result of the other\n";
    return 1;
  }
  return 0;
}

} // namespace dlc::bench
