//===- HtmlSvg.cpp - the HTML report's drawing ----------------------------===//

#include "HtmlSvg.h"
#include "Html.h"

#include "llvm/Support/Base64.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <iterator>
#include <sstream>

namespace dlc::bench::html {

namespace {
/// Okabe & Ito (2008), "Color Universal Design": told apart under every
/// common colour-vision deficiency. Yellow last: faint on white.
const char *const kStrategies[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                   "#56B4E9", "#CC79A7", "#000000", "#F0E442"};
/// Paul Tol's "muted" scheme: colour-blind safe, none of it Okabe-Ito's.
const char *const kKinds[kKindColors] = {"#332288", "#DDCC77", "#117733", "#CC6677", "#88CCEE",
                              "#882255", "#44AA99", "#999933", "#AA4499"};
const char *const kDashes[] = {"", "7 4", "2 3", "9 3 2 3"};
} // namespace

const char *strategyColor(size_t i) { return kStrategies[i % std::size(kStrategies)]; }
const char *kindColor(size_t i) { return kKinds[i % std::size(kKinds)]; }
const char *const kOtherColor = "#BBBBBB";
const char *precisionDash(size_t i) { return kDashes[i % std::size(kDashes)]; }

const char *const kSvgStyle =
    "svg.chart{font:12px system-ui,-apple-system,\"Segoe UI\",Roboto,\"DejaVu Sans\","
    "sans-serif}svg text{fill:#333}svg text.tick,svg text.note{fill:#666;font-size:11px}"
    "svg text.group{font-weight:600}svg text.axis{fill:#555}"
    "svg line.grid{stroke:#e4e4e4}svg line.axisline{stroke:#999}"
    "svg line.reference{stroke:#555;stroke-dasharray:4 3}"
    "svg path.whisker{stroke:#222;stroke-width:1.2;fill:none}"
    "svg path.ideal{stroke:#999;stroke-dasharray:4 3;fill:none}"
    "svg path.series{stroke-width:2;fill:none;stroke-linecap:round;stroke-linejoin:round}";

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

void Legend::add(const std::string &label, const std::string &fill, const std::string &dash) {
  Item item{label, fill, dash};
  if (std::find(items.begin(), items.end(), item) == items.end())
    items.push_back(item);
}

double drawLegend(std::ostream &os, const Legend &legend, double left, double width) {
  constexpr double lineHeight = 16, charWidth = 7; // 12px text
  double x = left, y = kTop - 10;
  auto place = [&](double w) {
    if (x > left && x + w > width) {
      x = left;
      y += lineHeight;
    }
  };
  for (const Legend::Item &item : legend.items) {
    place((legend.lines ? 38 : 28) + charWidth * item.label.size());
    if (legend.lines) // long enough to show a dash pattern
      os << "<path class=\"series\" d=\"M" << x << " " << y - 4 << "h22\" stroke=\""
         << item.fill << "\"" << (item.dash.empty() ? "" : " stroke-dasharray=\"" + item.dash + "\"")
         << "/>";
    else
      os << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"12\" height=\"12\" fill=\""
         << item.fill << "\"/>";
    double swatch = legend.lines ? 26 : 16;
    os << "<text x=\"" << x + swatch << "\" y=\"" << y << "\">" << escape(item.label)
       << "</text>";
    x += swatch + 12 + charWidth * item.label.size();
  }
  if (!legend.note.empty()) {
    place(charWidth * 0.9 * legend.note.size());
    os << "<text class=\"note\" x=\"" << x << "\" y=\"" << y << "\">" << escape(legend.note)
       << "</text>";
  }
  return y - (kTop - 10);
}

void drawBarChart(std::ostream &os, const std::string &chart, const std::string &title,
                  const std::vector<Group> &groups,
                  double max, const std::string &axis, double unit, const Legend &legend,
                  const std::function<void(const Entry &, double, double)> &row,
                  double reference) {
  size_t rows = 0;
  for (const Group &g : groups)
    rows += g.rows.size();
  // The legend goes first, its height known only once drawn.
  std::ostringstream body;
  double legendExtra = drawLegend(body, legend, kPlotLeft, kWidth - 8);
  double plotTop = kTop + legendExtra;
  double height = plotTop + groups.size() * kGroupHeight + rows * kRowHeight + kBottom;
  if (max <= 0)
    max = 1;
  double step = tickStep(max / unit, 5) * unit;
  double top = std::ceil(max / step - 1e-9) * step;
  double scale = (kPlotRight - kPlotLeft) / top;
  os << "<svg class=\"chart\" data-chart=\"" << chart << "\" width=\"" << kWidth
     << "\" height=\"" << height << "\" viewBox=\"0 0 " << kWidth << " " << height
     << "\" role=\"img\" aria-label=\"" << escape(title) << "\">" << body.str();
  double plotBottom = height - kBottom;
  for (double t = 0; t <= top * (1 + 1e-9); t += step) {
    double x = kPlotLeft + t * scale;
    os << "<line class=\"grid\" x1=\"" << x << "\" y1=\"" << plotTop << "\" x2=\"" << x
       << "\" y2=\"" << plotBottom << "\"/><text class=\"tick\" x=\"" << x << "\" y=\""
       << plotBottom + 14 << "\" text-anchor=\"middle\">" << tickLabel(t / unit)
       << "</text>";
  }
  os << "<text class=\"axis\" x=\"" << (kPlotLeft + kPlotRight) / 2 << "\" y=\""
     << height - 8 << "\" text-anchor=\"middle\">" << escape(axis) << "</text>";
  // Behind the bars and their values, which may end on it.
  if (reference > 0)
    os << "<line class=\"reference\" x1=\"" << kPlotLeft + reference * scale << "\" y1=\""
       << plotTop << "\" x2=\"" << kPlotLeft + reference * scale << "\" y2=\"" << plotBottom
       << "\"/>";
  double y = plotTop;
  for (const Group &g : groups) {
    os << "<text class=\"group\" x=\"8\" y=\"" << y + 17 << "\">" << escape(g.title)
       << "</text>";
    y += kGroupHeight;
    for (const Entry *e : g.rows) {
      // A group's bars are its strategies; a label too long for its margin
      // is cut, its <title> shows it whole.
      std::string label = e->fusion, shown;
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
  os << "<line class=\"axisline\" x1=\"" << kPlotLeft << "\" y1=\"" << plotTop << "\" x2=\""
     << kPlotLeft << "\" y2=\"" << plotBottom << "\"/></svg>\n";
}

void Csv::add(const std::vector<std::string> &row) {
  for (size_t i = 0; i < row.size(); ++i) {
    const std::string &cell = row[i];
    text_ += i ? "," : "";
    if (cell.find_first_of(",\"\r\n") == std::string::npos) {
      text_ += cell;
      continue;
    }
    text_ += '"';
    for (char c : cell)
      text_ += c == '"' ? std::string("\"\"") : std::string(1, c);
    text_ += '"';
  }
  text_ += "\r\n";
}

const std::vector<std::string> kConfigHeader = {"config", "model",  "backend", "precision",
                                                "fusion", "batch", "gpus",    "report"};

std::vector<std::string> configCells(const Entry &e) {
  return {e.id,
          e.model,
          e.backend,
          e.precision,
          e.fusion,
          e.batch ? std::to_string(*e.batch) : "",
          std::to_string(e.gpus),
          e.source};
}

void writeFigure(std::ostream &os, const std::string &captionHtml, const std::string &svg,
                 const std::string &stem, const Csv &csv) {
  // A file of its own needs the SVG namespace and the charts' style.
  std::string file = svg;
  if (size_t open = file.find("<svg "); open != std::string::npos) {
    file.insert(open + 5, "xmlns=\"http://www.w3.org/2000/svg\" ");
    file.insert(file.find('>', open) + 1, std::string("<style>") + kSvgStyle + "</style>");
  }
  std::string name;
  for (char c : stem)
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
  os << "<figure><figcaption>" << captionHtml << "</figcaption>\n"
     << svg << "<p class=\"downloads\">Download: <a class=\"download-svg\" download=\""
     << name << ".svg\" href=\"data:image/svg+xml;base64," << llvm::encodeBase64(file)
     << "\">chart (SVG)</a> · <a class=\"download-csv\" download=\"" << name
     << ".csv\" href=\"data:text/csv;charset=utf-8;base64," << llvm::encodeBase64(csv.text())
     << "\">data (CSV)</a></p></figure>\n";
}

void whisker(std::ostream &os, double x0, double x1, double y) {
  double mid = y + kBarHeight / 2;
  os << "<path class=\"whisker\" d=\"M" << x0 << " " << mid << "H" << x1 << "M" << x0
     << " " << y + 3 << "V" << y + kBarHeight - 3 << "M" << x1 << " " << y + 3 << "V"
     << y + kBarHeight - 3 << "\"/>";
}

void valueText(std::ostream &os, double x, double y, const std::string &text) {
  os << "<text class=\"value\" x=\"" << x + 6 << "\" y=\"" << y + kBarHeight - 3 << "\">"
     << escape(text) << "</text>";
}

} // namespace dlc::bench::html
