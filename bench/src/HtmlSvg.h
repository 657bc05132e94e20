//===- HtmlSvg.h - the HTML report's drawing --------------------*- C++ -*-===//
//
// Inline SVG, built as text: the charts' geometry and colours, numbers as
// a reader sees them, the legend and the horizontal bar chart every
// per-model chart is drawn with.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_HTMLSVG_H
#define DLC_BENCH_HTMLSVG_H

#include "HtmlModel.h"

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace dlc::bench::html {

// Chart geometry, in SVG user units (pixels at 100% zoom).
constexpr double kWidth = 960;       // fits a laptop window with margins
constexpr double kLabelRight = 292;  // configuration labels end here
constexpr double kPlotLeft = 300;    // bars start here
constexpr double kPlotRight = 870;   // and end here: room for a value label
constexpr size_t kLabelChars = 44;   // what fits left of kLabelRight at 12px
constexpr double kTop = 34;          // the legend's line
constexpr double kRowHeight = 22;    // one configuration
constexpr double kBarHeight = 14;
constexpr double kGroupHeight = 24;  // a "precision · fusion" heading
constexpr double kBottom = 44;       // tick labels and the axis title

/// The i-th colour of the palette, cycling.
const char *color(size_t i);

/// What a reader sees: about four significant digits.
std::string shortNumber(double v);
/// A tick label: as shortNumber, without trailing zeros.
std::string tickLabel(double v);
/// Bytes in the decimal unit that suits `scale` (the largest value shown).
std::pair<double, std::string> byteUnit(double scale);
/// A round step for about `ticks` ticks up to `max`.
double tickStep(double max, int ticks);

struct Legend {
  std::vector<std::pair<std::string, std::string>> items; // label, colour
  std::string note;
};

void drawLegend(std::ostream &os, const Legend &legend);

/// A horizontal bar chart, one row per configuration under its group's
/// heading; `row` draws a configuration's bar given its top and the scale.
void drawBarChart(std::ostream &os, const std::string &chart, const std::string &title,
                  const std::vector<Group> &groups, const Distinct &distinct,
                  double max, const std::string &axis, double unit, const Legend &legend,
                  const std::function<void(const Entry &, double, double)> &row);

/// The value text right of a bar, and the note for a figure the JSON lacks.
void valueText(std::ostream &os, double x, double y, const std::string &text);

} // namespace dlc::bench::html

#endif // DLC_BENCH_HTMLSVG_H
