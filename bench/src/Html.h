//===- Html.h - dlc-bench's self-contained HTML report ----------*- C++ -*-===//
//
// One page, no script and no network: inline CSS and SVG charts drawn here
// from the JSON reports (dlc-bench's and the peers', schema "dlc-bench/1"),
// so every number on the page is a number of the JSON. Each configuration's
// figures are also in data-* attributes and a table for tests to read.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_HTML_H
#define DLC_BENCH_HTML_H

#include "llvm/Support/JSON.h"

#include <ostream>
#include <string>
#include <vector>

namespace dlc::bench {

/// The results of one report file, and what the page calls it.
struct ReportSource {
  std::string label;
  std::vector<llvm::json::Object> results;
};

/// Writes the page: throughput per configuration grouped by precision and
/// fusion, speed-up and scaling efficiency against GPU count (or why that
/// chart is absent), kernels and bytes per step, and every figure.
void writeHtml(std::ostream &os, const std::vector<ReportSource> &sources);

/// --format html of a run: its JSON report, read back and drawn. Returns
/// false with `error` set if the JSON cannot be read.
bool writeHtmlFromJson(std::ostream &os, const std::string &jsonText,
                       const std::string &label, std::string &error);

/// `dlc-bench report A.json [B.json ...] [-o report.html]`: merges the
/// reports into one page. Returns the exit code.
int runReport(const std::vector<std::string> &args, std::ostream &errors);

} // namespace dlc::bench

#endif // DLC_BENCH_HTML_H
