//===- CompileReport.cpp - compiled configurations side by side -----------===//
//
// `dlc-bench MODEL --compile-only --fusion none,paddle,xla --precision
// fp32,amp` answers what each strategy does to the step before anything is
// timed: one row per configuration, kernels by kind and bytes per step,
// with their ratio to the first configuration of the same precision and
// batch (the baseline the strategies are compared against).
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include <algorithm>

#include <iomanip>
#include <sstream>

namespace dlc::bench {

namespace {
std::string fixedText(double value, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << value;
  return os.str();
}
int64_t kindCount(const Result &r, const char *kind) {
  auto it = r.kernelsByKind.find(kind);
  return it == r.kernelsByKind.end() ? 0 : it->second;
}
std::string groupsText(const Result &r) {
  std::string text;
  for (auto &[kind, count] : r.fusedGroups)
    text += (text.empty() ? "" : " ") + kind + ":" + std::to_string(count);
  return text.empty() ? "-" : text;
}
} // namespace

void writeCompileSweep(std::ostream &os, const std::vector<Result> &results,
                       Format format) {
  std::vector<std::string> header = {
      "model", "precision", "fusion", "batch", "kernels", "generated", "library",
      "hand-written", "GB/step", "kernels vs base", "bytes vs base", "arena GB",
      "compile ms", "fused groups"};
  // --backend cuda: what the CUDA backend would launch, groups it splits
  // included (LaunchPaths.h).
  bool device = !results.empty() && !results.front().launchesByPath.empty();
  if (device)
    header.insert(header.end() - 1, {"device launches", "split/host", "device GB/step"});
  // --gpus above 1: the rank count, and the step's all-reduces and bytes.
  bool ranks = std::any_of(results.begin(), results.end(),
                           [](const Result &r) { return r.gpus > 1; });
  if (ranks) {
    header.insert(header.begin() + 4, "gpus");
    header.insert(header.end() - 1, "all-reduces (MB)");
  }
  std::vector<std::vector<std::string>> rows;
  for (const Result &r : results) {
    const Result *base = &r;
    for (const Result &b : results)
      if (b.precision == r.precision && b.batch == r.batch && b.model == r.model) {
        base = &b;
        break;
      }
    rows.push_back(
        {r.model, r.precision, r.fusion, std::to_string(r.batch),
         std::to_string(r.kernelsPerStep), std::to_string(kindCount(r, "generated")),
         std::to_string(kindCount(r, "library")), std::to_string(kindCount(r, "hand-written")),
         fixedText(r.memoryBytesPerStep / 1e9, 3),
         fixedText(double(r.kernelsPerStep) / std::max<int64_t>(base->kernelsPerStep, 1), 2) + "x",
         fixedText(double(r.memoryBytesPerStep) / std::max<int64_t>(base->memoryBytesPerStep, 1), 2) + "x",
         fixedText(r.peakArenaBytes / 1e9, 2), fixedText(r.compileMs, 1), groupsText(r)});
    if (device) {
      int64_t launches = 0;
      for (auto &[path, count] : r.launchesByPath)
        launches += count;
      auto host = r.launchesByPath.find("host-fallback");
      rows.back().insert(rows.back().end() - 1,
                         {std::to_string(launches),
                          std::to_string(launches - r.kernelsPerStep) + "/" +
                              std::to_string(host == r.launchesByPath.end() ? 0 : host->second),
                          fixedText(r.deviceMemoryBytesPerStep / 1e9, 3)});
    }
    if (ranks) {
      rows.back().insert(rows.back().begin() + 4, std::to_string(r.gpus));
      rows.back().insert(rows.back().end() - 1,
                         std::to_string(r.allReducesPerStep) + " (" +
                             fixedText(r.allReduceBytesPerStep / 1e6, 1) + ")");
    }
  }
  if (format == Format::kCsv) {
    for (size_t i = 0; i < header.size(); ++i)
      os << (i ? "," : "") << header[i];
    os << "\n";
    for (const auto &row : rows) {
      for (size_t i = 0; i < row.size(); ++i)
        os << (i ? "," : "") << row[i];
      os << "\n";
    }
    return;
  }
  if (format == Format::kMarkdown) {
    os << "|";
    for (const std::string &h : header)
      os << " " << h << " |";
    os << "\n|";
    for (size_t i = 0; i < header.size(); ++i)
      os << " --- |";
    os << "\n";
    for (const auto &row : rows) {
      os << "|";
      for (const std::string &cell : row)
        os << " " << cell << " |";
      os << "\n";
    }
    return;
  }
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) {
    width[i] = header[i].size();
    for (const auto &row : rows)
      width[i] = std::max(width[i], row[i].size());
  }
  auto line = [&](const std::vector<std::string> &cells) {
    for (size_t i = 0; i < cells.size(); ++i)
      os << std::left << std::setw(static_cast<int>(width[i]) + 2) << cells[i];
    os << "\n";
  };
  line(header);
  for (const auto &row : rows)
    line(row);
  os << "compiled, not run: kernels per step by kind, bytes per step if each kernel "
        "reads its inputs and writes its outputs once; ratios against the first "
        "configuration of the same model, precision and batch\n";
  if (device)
    os << "device launches: what --backend cuda launches per step; split/host: launches "
          "added by splitting groups no single device kernel computes / launches left "
          "to the host (dlc-kernels --paths says why); device GB/step: bytes per step with "
          "those launches\n";
  if (!results.empty())
    os << provenanceLine(results.front().provenance) << "\n";
}

} // namespace dlc::bench
