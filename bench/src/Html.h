//===- Html.h - dlc-bench's self-contained HTML report ----------*- C++ -*-===//
//
// One page, no script and no network: inline CSS and SVG charts drawn here
// from the JSON reports (dlc-bench's and the peers', schema "dlc-bench/1"),
// so every number on the page is a number of the JSON. Each configuration's
// figures are also in data-* attributes and a table for tests to read, and
// each chart downloads as SVG and its numbers as CSV (data: URIs).
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

/// Writes the page: the configurations' table, throughput with the fusion
/// strategies side by side per precision and batch, speed-up over `none`,
/// scaling over GPUs, --profile's time by kernel kind, --loss-every's
/// trajectories, kernels and bytes per step, and every figure; a section
/// only where some configuration has its figures.
void writeHtml(std::ostream &os, const std::vector<ReportSource> &sources);

/// --format html of a run: its JSON report, read back and drawn. Returns
/// false with `error` set if the JSON cannot be read.
bool writeHtmlFromJson(std::ostream &os, const std::string &jsonText,
                       const std::string &label, std::string &error);

/// `dlc-bench report A.json [B.json ...] [-o report.html]`: merges the
/// reports into one page. Returns the exit code.
int runReport(const std::vector<std::string> &args, std::ostream &errors);

namespace html {

/// Text and attribute values, escaped.
std::string escape(llvm::StringRef s);
/// The shortest text that reads back as the same double.
std::string exact(double v);
/// A JSON number exactly as the JSON holds it: integers as integers.
std::string exactNumber(const llvm::json::Value &v);

/// One configuration's column of the figures table.
struct FiguresColumn {
  std::string id;          ///< data-config: "c<i>"
  std::string headingHtml; ///< what the column heading shows
  const llvm::json::Object *result;
};

/// Every leaf of every configuration's JSON (nested objects as a.b, arrays
/// as a[i]): a row per field, schema fields first, a cell per column with
/// data-config and data-field.
void writeFiguresTable(std::ostream &os, const std::vector<FiguresColumn> &columns);

} // namespace html

} // namespace dlc::bench

#endif // DLC_BENCH_HTML_H
