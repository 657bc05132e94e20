//===- HtmlCharts.h - the HTML report's charts ------------------*- C++ -*-===//
//
// Each writes its section only where some configuration has its figures,
// so that a compile-only page has no empty throughput chart. Each figure
// comes with its SVG and CSV downloads (HtmlSvg.h writeFigure).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_HTMLCHARTS_H
#define DLC_BENCH_HTMLCHARTS_H

#include "HtmlModel.h"

#include <optional>
#include <ostream>

namespace dlc::bench::html {

/// Samples/s per configuration, a chart per model, the strategies side by
/// side within each precision and batch, with the confidence intervals.
void writeThroughput(std::ostream &os, Page &page);
/// Kernel launches per step by kind, and bytes moved per step, per model.
void writeKernelsAndBytes(std::ostream &os, Page &page);
/// --profile's milliseconds per step by launch kind, per model.
void writeProfile(std::ostream &os, Page &page);

/// A configuration's speed-up over fusion `none` of the same model,
/// backend, precision, batch, GPUs and report: median over median, with the
/// bootstrap interval of the ratio and its verdict (Stats.h).
struct Speedup {
  double estimate = 0;
  std::optional<double> low, high; // absent without each side's repeats
  std::string verdict;             // faster, slower, no significant difference
};
/// `e`'s speed-up, or nothing where there is no `none` to compare with.
std::optional<Speedup> speedupOverNone(const Page &page, const Entry &e);
/// The speed-up over `none` per model, and their geometric mean over the
/// models of the page; or why there is none.
void writeSpeedups(std::ostream &os, Page &page);

/// Speed-up = samples/s on N GPUs / samples/s on 1 GPU at the same per-GPU
/// batch (DESIGN.md); efficiency = speed-up / N. Or why there is no chart.
void writeScaling(std::ostream &os, Page &page);
/// --loss-every's loss trajectory, a chart per model.
void writeLosses(std::ostream &os, Page &page);

} // namespace dlc::bench::html

#endif // DLC_BENCH_HTMLCHARTS_H
