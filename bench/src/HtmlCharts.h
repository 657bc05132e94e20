//===- HtmlCharts.h - the HTML report's charts ------------------*- C++ -*-===//

#ifndef DLC_BENCH_HTMLCHARTS_H
#define DLC_BENCH_HTMLCHARTS_H

#include "HtmlModel.h"

#include <ostream>

namespace dlc::bench::html {

/// Samples/s per configuration, a chart per model, with the repeats' range.
void writeThroughput(std::ostream &os, Page &page);
/// Speed-up = samples/s on N GPUs / samples/s on 1 GPU at the same per-GPU
/// batch (DESIGN.md); efficiency = speed-up / N. Or why there is no chart.
void writeScaling(std::ostream &os, Page &page);
/// Kernel launches per step by kind, and bytes moved per step, per model.
void writeKernelsAndBytes(std::ostream &os, Page &page);

} // namespace dlc::bench::html

#endif // DLC_BENCH_HTMLCHARTS_H
