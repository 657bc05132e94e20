//===- HtmlSvg.cpp - the HTML report's drawing ----------------------------===//

#include "HtmlSvg.h"
#include "Html.h"

#include <cmath>
#include <iomanip>
#include <iterator>
#include <sstream>

namespace dlc::bench::html {

namespace {
/// Tableau 10: distinguishable, and readable in grey-scale print.
const char *const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                "#9c755f", "#bab0ac"};
} // namespace

const char *color(size_t i) { return kPalette[i % std::size(kPalette)]; }

std::string shortNumber(double v) {
  std::ostringstream os;
  double a = std::fabs(v);
  if (a < 1e9 && v == std::round(v))
    os << std::fixed << std::setprecision(0) << v; // counts, round ticks
  else if (a < 1 || a >= 1e9)
    os << std::setprecision(3) << v; // 0.00116, not 0.001
  else
    os << std::fixed
       << std::setprecision(a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : 3) << v;
  return os.str();
}

std::string tickLabel(double v) {
  std::string s = shortNumber(v);
  if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.')
      s.pop_back();
  }
  return s;
}

std::pair<double, std::string> byteUnit(double scale) {
  if (scale >= 1e9) return {1e9, "GB"};
  if (scale >= 1e6) return {1e6, "MB"};
  if (scale >= 1e3) return {1e3, "kB"};
  return {1, "B"};
}

double tickStep(double max, int ticks) {
  double raw = max / ticks;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw)
      return m * magnitude;
  return 10 * magnitude;
}

void drawLegend(std::ostream &os, const Legend &legend) {
  double x = kPlotLeft;
  for (auto &[label, fill] : legend.items) {
    os << "<rect x=\"" << x << "\" y=\"" << kTop - 20 << "\" width=\"12\" height=\"12\" fill=\""
       << fill << "\"/><text x=\"" << x + 16 << "\" y=\"" << kTop - 10 << "\">"
       << escape(label) << "</text>";
    x += 28 + 7.0 * label.size();
  }
  if (!legend.note.empty())
    os << "<text class=\"note\" x=\"" << x << "\" y=\"" << kTop - 10 << "\">"
       << escape(legend.note) << "</text>";
}

void drawBarChart(std::ostream &os, const std::string &chart, const std::string &title,
                  const std::vector<Group> &groups, const Distinct &distinct,
                  double max, const std::string &axis, double unit, const Legend &legend,
                  const std::function<void(const Entry &, double, double)> &row) {
  size_t rows = 0;
  for (const Group &g : groups)
    rows += g.rows.size();
  double height = kTop + groups.size() * kGroupHeight + rows * kRowHeight + kBottom;
  if (max <= 0)
    max = 1;
  double step = tickStep(max / unit, 5) * unit;
  double top = std::ceil(max / step - 1e-9) * step;
  double scale = (kPlotRight - kPlotLeft) / top;
  os << "<svg class=\"chart\" data-chart=\"" << chart << "\" width=\"" << kWidth
     << "\" height=\"" << height << "\" viewBox=\"0 0 " << kWidth << " " << height
     << "\" role=\"img\" aria-label=\"" << escape(title) << "\">";
  drawLegend(os, legend);
  double plotBottom = height - kBottom;
  for (double t = 0; t <= top * (1 + 1e-9); t += step) {
    double x = kPlotLeft + t * scale;
    os << "<line class=\"grid\" x1=\"" << x << "\" y1=\"" << kTop << "\" x2=\"" << x
       << "\" y2=\"" << plotBottom << "\"/><text class=\"tick\" x=\"" << x << "\" y=\""
       << plotBottom + 14 << "\" text-anchor=\"middle\">" << tickLabel(t / unit)
       << "</text>";
  }
  os << "<text class=\"axis\" x=\"" << (kPlotLeft + kPlotRight) / 2 << "\" y=\""
     << height - 8 << "\" text-anchor=\"middle\">" << escape(axis) << "</text>";
  double y = kTop;
  for (const Group &g : groups) {
    os << "<text class=\"group\" x=\"8\" y=\"" << y + 17 << "\">" << escape(g.title)
       << "</text>";
    y += kGroupHeight;
    for (const Entry *e : g.rows) {
      // A label too long for its margin is cut; its <title> shows it whole.
      std::string label = distinct.label(*e), shown;
      size_t chars = 0;
      for (char c : label)
        if ((c & 0xC0) != 0x80 && ++chars > kLabelChars - 1)
          break;
        else
          shown += c;
      if (shown.size() < label.size())
        shown += "…";
      os << "<text class=\"label\" x=\"" << kLabelRight << "\" y=\"" << y + 15
         << "\" text-anchor=\"end\"><title>" << escape(label) << "</title>"
         << escape(shown) << "</text>";
      row(*e, y + (kRowHeight - kBarHeight) / 2, scale);
      y += kRowHeight;
    }
  }
  os << "<line class=\"axisline\" x1=\"" << kPlotLeft << "\" y1=\"" << kTop << "\" x2=\""
     << kPlotLeft << "\" y2=\"" << plotBottom << "\"/></svg>\n";
}

void valueText(std::ostream &os, double x, double y, const std::string &text) {
  os << "<text class=\"value\" x=\"" << x + 6 << "\" y=\"" << y + kBarHeight - 3 << "\">"
     << escape(text) << "</text>";
}

} // namespace dlc::bench::html
