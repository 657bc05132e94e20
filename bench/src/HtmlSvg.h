//===- HtmlSvg.h - the HTML report's drawing --------------------*- C++ -*-===//
//
// Inline SVG, built as text: the charts' geometry and colours, numbers as
// a reader sees them, the legend, the horizontal bar chart every per-model
// chart is drawn with, and the figure around a chart with its downloads.
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
constexpr double kLabelRight = 142;  // a bar's label (its strategy) ends here
constexpr double kPlotLeft = 150;    // bars start here
constexpr double kPlotRight = 860;   // and end here: room for a value label
constexpr size_t kLabelChars = 20;   // what fits left of kLabelRight at 12px
constexpr double kTop = 34;          // the legend's line
constexpr double kRowHeight = 18;    // one configuration: a group's bars touch
constexpr double kBarHeight = 15;
constexpr double kGroupHeight = 24;  // a "precision · fusion" heading
constexpr double kBottom = 44;       // tick labels and the axis title

/// One palette per meaning, so that a colour means one thing on the page;
/// both are safe for the common colour-vision deficiencies.
/// The i-th fusion strategy's colour (Okabe & Ito), cycling.
const char *strategyColor(size_t i);
/// The i-th kernel kind's colour (Paul Tol's "muted"), cycling.
const char *kindColor(size_t i);
/// How many kinds have a colour of their own.
constexpr size_t kKindColors = 9;
/// The grey of kinds beyond the palette, drawn together as "other".
extern const char *const kOtherColor;
/// The i-th precision's stroke-dasharray in line charts ("" solid): lines
/// are told apart by strategy in colour and by precision in pattern.
const char *precisionDash(size_t i);

/// The CSS of the charts: in the page's style, and in each downloaded SVG
/// so that it draws alike on its own.
extern const char *const kSvgStyle;

/// What a reader sees: about four significant digits.
std::string shortNumber(double v);
/// A tick label: as shortNumber, without trailing zeros.
std::string tickLabel(double v);
/// Bytes in the decimal unit that suits `scale` (the largest value shown).
std::pair<double, std::string> byteUnit(double scale);
/// A round step for about `ticks` ticks up to `max`.
double tickStep(double max, int ticks);

struct Legend {
  struct Item {
    std::string label, fill;
    std::string dash; // a line chart's stroke-dasharray; "" solid
    bool operator==(const Item &o) const {
      return label == o.label && fill == o.fill && dash == o.dash;
    }
  };
  std::vector<Item> items;
  std::string note;
  bool lines = false; // swatches are lines (a line chart's series)
  /// Adds an item unless there already.
  void add(const std::string &label, const std::string &fill, const std::string &dash = "");
};

/// The legend along the chart's top, wrapped to `width`; returns the
/// height it takes beyond its first line.
double drawLegend(std::ostream &os, const Legend &legend, double left, double width);

/// A horizontal bar chart, one row per configuration under its group's
/// heading; `row` draws a configuration's bar given its top and the scale.
void drawBarChart(std::ostream &os, const std::string &chart, const std::string &title,
                  const std::vector<Group> &groups,
                  double max, const std::string &axis, double unit, const Legend &legend,
                  const std::function<void(const Entry &, double, double)> &row,
                  double reference = 0);

/// A table of numbers as CSV (RFC 4180: cells with a comma, quote or line
/// break quoted).
class Csv {
public:
  explicit Csv(std::vector<std::string> header) { add(std::move(header)); }
  void add(const std::vector<std::string> &row);
  const std::string &text() const { return text_; }

private:
  std::string text_;
};

/// The cells that say which configuration a CSV row is of.
std::vector<std::string> configCells(const Entry &e);
extern const std::vector<std::string> kConfigHeader;

/// A figure: its caption, the chart's SVG inline, and links that download
/// the chart as `stem`.svg and its numbers as `stem`.csv (data: URIs, so
/// the page still fetches nothing).
void writeFigure(std::ostream &os, const std::string &captionHtml, const std::string &svg,
                 const std::string &stem, const Csv &csv);

/// The whiskers of an interval from x0 to x1 across the bar whose top is y.
void whisker(std::ostream &os, double x0, double x1, double y);

/// The value text right of a bar, and the note for a figure the JSON lacks.
void valueText(std::ostream &os, double x, double y, const std::string &text);

} // namespace dlc::bench::html

#endif // DLC_BENCH_HTMLSVG_H
