//===- Html.cpp - dlc-bench's self-contained HTML report ------------------===//
//
// The page is drawn from the JSON alone, never from the in-memory results,
// so a run's page and `dlc-bench report` of its JSON are the same page and
// a peer's report (whose fields may be null) draws the same way. Charts are
// inline SVG built here: no script, no fonts or styles fetched, nothing that
// needs a network. Groups are whatever precision and fusion strings the
// reports hold, in the order they first appear.
//
//===----------------------------------------------------------------------===//

#include "Html.h"
#include "Json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace dlc::bench {

namespace html {

std::string escape(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

/// A number exactly as the JSON holds it: integers as integers, others in
/// the shortest text that reads back as the same double.
std::string exact(double v) {
  char buffer[64];
  auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return std::string(buffer, end);
}
std::string exactNumber(const llvm::json::Value &v) {
  if (std::optional<int64_t> i = v.getAsInteger())
    return std::to_string(*i);
  if (std::optional<uint64_t> u = v.getAsUINT64())
    return std::to_string(*u);
  return exact(*v.getAsNumber());
}

} // namespace html

namespace {

namespace json = llvm::json;
using html::escape;
using html::exact;

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

/// Tableau 10: distinguishable, and readable in grey-scale print.
const char *const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                "#9c755f", "#bab0ac"};
const char *color(size_t i) { return kPalette[i % std::size(kPalette)]; }

/// What a reader sees: about four significant digits.
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

/// A tick label: as shortNumber, without trailing zeros.
std::string tickLabel(double v) {
  std::string s = shortNumber(v);
  if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.')
      s.pop_back();
  }
  return s;
}

/// Bytes in the decimal unit that suits `scale` (the largest value shown).
std::pair<double, std::string> byteUnit(double scale) {
  if (scale >= 1e9) return {1e9, "GB"};
  if (scale >= 1e6) return {1e6, "MB"};
  if (scale >= 1e3) return {1e3, "kB"};
  return {1, "B"};
}

/// One configuration of the merged reports, with what the charts draw.
struct Entry {
  std::string id; // "c<position>", the key tests match the JSON with
  std::string source;
  const json::Object *r = nullptr;
  std::string model, backend, precision, fusion;
  std::optional<int64_t> batch;
  int64_t gpus = 1;
  std::optional<double> sps, spsMin, spsMax, kernels, bytes;
  std::vector<std::pair<std::string, double>> kernelsByKind;
};

std::string field(const json::Object &r, llvm::StringRef key) {
  return r.getString(key).value_or("?").str();
}

Entry makeEntry(const json::Object &r, const std::string &source, size_t index) {
  Entry e;
  e.id = "c" + std::to_string(index);
  e.source = source;
  e.r = &r;
  e.model = field(r, "model");
  e.backend = field(r, "backend");
  e.precision = field(r, "precision");
  e.fusion = field(r, "fusion");
  e.batch = r.getInteger("batch");
  e.gpus = r.getInteger("gpus").value_or(1);
  if (const json::Object *sps = r.getObject("samples_per_sec")) {
    e.sps = sps->getNumber("median");
    e.spsMin = sps->getNumber("min");
    e.spsMax = sps->getNumber("max");
  }
  e.kernels = r.getNumber("kernels_per_step");
  e.bytes = r.getNumber("memory_bytes_per_step");
  if (const json::Object *kinds = r.getObject("kernels_by_kind"))
    for (const auto &[kind, count] : *kinds)
      if (std::optional<double> n = count.getAsNumber())
        e.kernelsByKind.push_back({kind.str(), *n});
  std::sort(e.kernelsByKind.begin(), e.kernelsByKind.end());
  return e;
}

/// Values in first-appearance order, each with its index (its colour).
class Order {
public:
  size_t operator()(const std::string &v) {
    auto it = std::find(values.begin(), values.end(), v);
    if (it != values.end())
      return it - values.begin();
    values.push_back(v);
    return values.size() - 1;
  }
  std::vector<std::string> values;
};

/// What tells a model's configurations apart besides precision and fusion:
/// the batch always, the rest only where they differ.
struct Distinct {
  bool gpus = false, backend = false, source = false;
  explicit Distinct(const std::vector<const Entry *> &es) {
    for (const Entry *e : es) {
      gpus |= e->gpus != es.front()->gpus;
      backend |= e->backend != es.front()->backend;
      // The report's name only where the backend does not tell them apart
      // (dlc's own reports of one backend, before and after a change).
      for (const Entry *f : es)
        source |= e->source != f->source && e->backend == f->backend;
    }
  }
  std::string label(const Entry &e) const {
    std::string s = "batch " + (e.batch ? std::to_string(*e.batch) : std::string("?"));
    if (gpus)
      s += " · " + std::to_string(e.gpus) + (e.gpus == 1 ? " GPU" : " GPUs");
    if (backend)
      s += " · " + e.backend;
    if (source)
      s += " · " + e.source;
    return s;
  }
};

struct Group {
  std::string title;
  std::vector<const Entry *> rows;
};

/// A model's configurations grouped by precision, then fusion strategy.
std::vector<Group> groupByPrecisionFusion(const std::vector<const Entry *> &entries) {
  Order precisions, fusions;
  std::map<std::pair<size_t, size_t>, Group> groups;
  for (const Entry *e : entries) {
    Group &g = groups[{precisions(e->precision), fusions(e->fusion)}];
    g.title = e->precision + " · " + e->fusion;
    g.rows.push_back(e);
  }
  // Within a group, the same batch and GPU count side by side (the reports'
  // order kept among them), so that a change or a peer sits next to dlc's.
  std::vector<Group> out;
  for (auto &[key, g] : groups) {
    std::stable_sort(g.rows.begin(), g.rows.end(), [](const Entry *a, const Entry *b) {
      return std::make_pair(a->batch.value_or(0), a->gpus) <
             std::make_pair(b->batch.value_or(0), b->gpus);
    });
    out.push_back(std::move(g));
  }
  return out;
}

/// A round step for about `ticks` ticks up to `max`.
double tickStep(double max, int ticks) {
  double raw = max / ticks;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw)
      return m * magnitude;
  return 10 * magnitude;
}

struct Legend {
  std::vector<std::pair<std::string, std::string>> items; // label, colour
  std::string note;
};

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

/// A horizontal bar chart, one row per configuration under its group's
/// heading; `row` draws a configuration's bar given its top and the scale.
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

/// The value text right of a bar, and the note for a figure the JSON lacks.
void valueText(std::ostream &os, double x, double y, const std::string &text) {
  os << "<text class=\"value\" x=\"" << x + 6 << "\" y=\"" << y + kBarHeight - 3 << "\">"
     << escape(text) << "</text>";
}

struct Page {
  std::vector<Entry> entries;
  std::vector<std::string> sources;
  Order models, fusions, kinds;
};

/// The fusion strategies of `es`, in the colours every chart gives them.
Legend fusionLegend(Page &page, const std::vector<const Entry *> &es) {
  Legend legend;
  for (const Entry *e : es) {
    std::pair<std::string, std::string> item{e->fusion, color(page.fusions(e->fusion))};
    if (std::find(legend.items.begin(), legend.items.end(), item) == legend.items.end())
      legend.items.push_back(item);
  }
  return legend;
}

void writeThroughput(std::ostream &os, Page &page) {
  os << "<section id=\"throughput\"><h2>Throughput</h2>\n"
        "<p>Median samples per second of each configuration over its repeats; the "
        "whiskers span the slowest and the fastest repeat.</p>\n";
  for (const std::string &model : page.models.values) {
    std::vector<const Entry *> es;
    double max = 0;
    for (const Entry &e : page.entries)
      if (e.model == model) {
        es.push_back(&e);
        max = std::max({max, e.sps.value_or(0), e.spsMax.value_or(0)});
      }
    Legend legend = fusionLegend(page, es);
    legend.note = "whiskers: min–max of the repeats";
    os << "<figure><figcaption>" << escape(model) << ": samples/s by precision and "
       << "fusion strategy</figcaption>\n";
    drawBarChart(os, "throughput", model + " samples/s", groupByPrecisionFusion(es),
                 Distinct(es), max, "samples/s (median of the repeats)", 1, legend,
                 [&](const Entry &e, double y, double scale) {
                   if (!e.sps) {
                     valueText(os, kPlotLeft, y, "no samples/s in the report");
                     return;
                   }
                   double w = *e.sps * scale;
                   os << "<rect class=\"bar\" data-config=\"" << e.id
                      << "\" data-samples-per-sec=\"" << exact(*e.sps) << "\"";
                   if (e.spsMin && e.spsMax)
                     os << " data-min=\"" << exact(*e.spsMin) << "\" data-max=\""
                        << exact(*e.spsMax) << "\"";
                   os << " x=\"" << kPlotLeft << "\" y=\"" << y << "\" width=\"" << w
                      << "\" height=\"" << kBarHeight << "\" fill=\""
                      << color(page.fusions(e.fusion)) << "\"><title>"
                      << escape(e.model + " " + e.precision + " " + e.fusion) << ": "
                      << shortNumber(*e.sps) << " samples/s</title></rect>";
                   double end = kPlotLeft + w;
                   if (e.spsMin && e.spsMax) {
                     double x0 = kPlotLeft + *e.spsMin * scale;
                     double x1 = kPlotLeft + *e.spsMax * scale, mid = y + kBarHeight / 2;
                     os << "<path class=\"whisker\" d=\"M" << x0 << " " << mid << "H" << x1
                        << "M" << x0 << " " << y + 2 << "V" << y + kBarHeight - 2 << "M"
                        << x1 << " " << y + 2 << "V" << y + kBarHeight - 2 << "\"/>";
                     end = std::max(end, x1);
                   }
                   valueText(os, end, y, shortNumber(*e.sps));
                 });
    os << "</figure>\n";
  }
  os << "</section>\n";
}

/// Speed-up = samples/s on N GPUs / samples/s on 1 GPU at the same per-GPU
/// batch (DESIGN.md); efficiency = speed-up / N.
void writeScaling(std::ostream &os, Page &page) {
  os << "<section id=\"scaling\"><h2>Speed-up and scaling efficiency</h2>\n";
  struct Series {
    std::string label;
    std::map<int64_t, const Entry *> byGpus;
  };
  std::vector<std::string> order;
  std::map<std::string, Series> series;
  std::set<int64_t> counts;
  size_t measured = 0;
  for (const Entry &e : page.entries) {
    if (!e.sps)
      continue;
    ++measured;
    counts.insert(e.gpus);
    std::string batch = e.batch ? std::to_string(*e.batch) : "?";
    std::string key = e.source + "\n" + e.model + "\n" + e.backend + "\n" + e.precision +
                      "\n" + e.fusion + "\n" + batch;
    if (!series.count(key))
      order.push_back(key);
    Series &s = series[key];
    s.label = e.model + " " + e.precision + " " + e.fusion + " batch " + batch +
              (page.sources.size() > 1 ? " (" + e.source + ")" : "");
    s.byGpus.insert({e.gpus, &e});
  }
  std::vector<const Series *> drawn;
  for (const std::string &key : order) {
    const Series &s = series[key];
    if (s.byGpus.size() > 1 && s.byGpus.count(1) && *s.byGpus.at(1)->sps > 0)
      drawn.push_back(&s);
  }
  if (drawn.empty()) {
    std::string why =
        measured == 0 ? "no configuration in the reports has samples/s."
        : counts.size() == 1
            ? "every configuration with samples/s ran on " + std::to_string(*counts.begin()) +
                  (*counts.begin() == 1 ? " GPU" : " GPUs") +
                  " (the field gpus); the chart needs one configuration measured "
                  "at several GPU counts, 1 included."
            : "no configuration (same model, backend, precision, fusion and per-GPU "
              "batch) was measured both on 1 GPU and on more.";
    os << "<p class=\"absent\" id=\"scaling-absent\">No speed-up chart: " << escape(why)
       << "</p>\n</section>\n";
    return;
  }
  int64_t maxGpus = 1;
  double maxSpeedup = 1, maxEfficiency = 1;
  for (const Series *s : drawn)
    for (auto &[n, e] : s->byGpus) {
      double speedup = *e->sps / *s->byGpus.at(1)->sps;
      maxGpus = std::max(maxGpus, n);
      maxSpeedup = std::max(maxSpeedup, speedup);
      maxEfficiency = std::max(maxEfficiency, speedup / n);
    }
  // Two panels side by side; GPU counts on a log2 axis (1, 2, 4, 8 ...).
  constexpr double panelWidth = 440, left = 56, right = 16, plotTop = 34,
                   plotHeight = 240, height = 330;
  std::set<int64_t> shown;
  for (const Series *s : drawn)
    for (auto &[n, e] : s->byGpus)
      shown.insert(n);
  auto xOf = [&](int64_t n) {
    double span = std::log2(double(maxGpus));
    return left + (span > 0 ? std::log2(double(n)) / span : 0) *
                      (panelWidth - left - right);
  };
  os << "<figure><figcaption>Speed-up over 1 GPU and scaling efficiency "
        "(speed-up / GPUs) at the same per-GPU batch; dashed: linear scaling"
        "</figcaption>\n<svg class=\"chart\" data-chart=\"scaling\" width=\""
     << 2 * panelWidth + 40 << "\" height=\"" << height << "\" viewBox=\"0 0 "
     << 2 * panelWidth + 40 << " " << height << "\" role=\"img\" aria-label=\"speed-up\">";
  for (int panel = 0; panel < 2; ++panel) {
    double ox = panel * (panelWidth + 40);
    double yMax = panel == 0 ? std::max<double>(maxGpus, maxSpeedup) * 1.05
                             : std::max(1.0, maxEfficiency) * 1.1;
    auto yOf = [&](double v) { return plotTop + plotHeight * (1 - v / yMax); };
    os << "<g transform=\"translate(" << ox << " 0)\"><text class=\"group\" x=\"" << left
       << "\" y=\"20\">" << (panel == 0 ? "speed-up" : "scaling efficiency") << "</text>";
    double step = tickStep(yMax, 5);
    for (double t = 0; t <= yMax; t += step)
      os << "<line class=\"grid\" x1=\"" << left << "\" y1=\"" << yOf(t) << "\" x2=\""
         << panelWidth - right << "\" y2=\"" << yOf(t) << "\"/><text class=\"tick\" x=\""
         << left - 6 << "\" y=\"" << yOf(t) + 4 << "\" text-anchor=\"end\">"
         << tickLabel(t) << "</text>";
    for (int64_t n : shown)
      os << "<text class=\"tick\" x=\"" << xOf(n) << "\" y=\"" << plotTop + plotHeight + 16
         << "\" text-anchor=\"middle\">" << n << "</text>";
    os << "<text class=\"axis\" x=\"" << (left + panelWidth - right) / 2 << "\" y=\""
       << plotTop + plotHeight + 36 << "\" text-anchor=\"middle\">GPUs</text>";
    os << "<path class=\"ideal\" d=\"M" << xOf(1) << " " << yOf(1);
    for (int64_t n : shown)
      os << "L" << xOf(n) << " " << yOf(panel == 0 ? double(n) : 1.0);
    os << "\"/>";
    for (size_t i = 0; i < drawn.size(); ++i) {
      const Series &s = *drawn[i];
      double base = *s.byGpus.at(1)->sps;
      std::string line;
      for (auto &[n, e] : s.byGpus) {
        double speedup = *e->sps / base;
        double v = panel == 0 ? speedup : speedup / n;
        line += (line.empty() ? "M" : "L") + exact(xOf(n)) + " " + exact(yOf(v));
      }
      os << "<path class=\"series\" stroke=\"" << color(i) << "\" d=\"" << line << "\"/>";
      for (auto &[n, e] : s.byGpus) {
        double speedup = *e->sps / base;
        os << "<circle class=\"point\" data-config=\"" << e->id << "\" data-gpus=\"" << n
           << "\" data-samples-per-sec=\"" << exact(*e->sps) << "\" data-speedup=\""
           << exact(speedup) << "\" data-efficiency=\"" << exact(speedup / n)
           << "\" cx=\"" << xOf(n) << "\" cy=\"" << yOf(panel == 0 ? speedup : speedup / n)
           << "\" r=\"4\" fill=\"" << color(i) << "\"><title>" << escape(s.label) << ", "
           << n << " GPUs: " << shortNumber(speedup) << "x, efficiency "
           << shortNumber(speedup / n) << "</title></circle>";
      }
    }
    os << "</g>";
  }
  os << "</svg>\n<div class=\"legend\">";
  for (size_t i = 0; i < drawn.size(); ++i)
    os << "<span><i style=\"background:" << color(i) << "\"></i>" << escape(drawn[i]->label)
       << "</span>";
  os << "</div></figure>\n<table class=\"numbers\" id=\"scaling-table\"><tr><th>series</th>"
        "<th>GPUs</th><th>samples/s</th><th>speed-up</th><th>efficiency</th></tr>\n";
  for (const Series *s : drawn)
    for (auto &[n, e] : s->byGpus) {
      double speedup = *e->sps / *s->byGpus.at(1)->sps;
      std::ostringstream ratio;
      ratio << std::fixed << std::setprecision(2) << speedup << "x</td><td>"
            << std::setprecision(1) << 100 * speedup / n << "%";
      os << "<tr><td>" << escape(s->label) << "</td><td>" << n << "</td><td>"
         << shortNumber(*e->sps) << "</td><td>" << ratio.str() << "</td></tr>\n";
    }
  os << "</table>\n</section>\n";
}

void writeKernelsAndBytes(std::ostream &os, Page &page) {
  os << "<section id=\"kernels\"><h2>Kernels and bytes per step</h2>\n"
        "<p>Kernel launches per step by implementation kind (a fused group is one "
        "launch), and the bytes a step moves if each kernel reads its inputs and "
        "writes its outputs once. The reports carry bytes and time per "
        "configuration only, not per kernel kind.</p>\n";
  for (const std::string &model : page.models.values) {
    std::vector<const Entry *> es;
    double maxKernels = 0, maxBytes = 0;
    for (const Entry &e : page.entries)
      if (e.model == model) {
        es.push_back(&e);
        maxKernels = std::max(maxKernels, e.kernels.value_or(0));
        maxBytes = std::max(maxBytes, e.bytes.value_or(0));
      }
    Legend kinds;
    for (const Entry *e : es)
      for (auto &[kind, count] : e->kernelsByKind) {
        std::pair<std::string, std::string> item{kind, color(page.kinds(kind))};
        if (std::find(kinds.items.begin(), kinds.items.end(), item) == kinds.items.end())
          kinds.items.push_back(item);
      }
    std::vector<Group> groups = groupByPrecisionFusion(es);
    Distinct distinct(es);
    os << "<figure><figcaption>" << escape(model)
       << ": kernel launches per step, by kind</figcaption>\n";
    drawBarChart(os, "kernels", model + " kernels per step", groups, distinct, maxKernels,
                 "kernels per step", 1, kinds, [&](const Entry &e, double y, double scale) {
                   if (!e.kernels) {
                     valueText(os, kPlotLeft, y, "no kernel count in the report");
                     return;
                   }
                   os << "<g class=\"bar\" data-config=\"" << e.id << "\" data-kernels=\""
                      << exact(*e.kernels) << "\"><title>" << shortNumber(*e.kernels)
                      << " kernels per step</title>";
                   double x = kPlotLeft;
                   if (e.kernelsByKind.empty())
                     os << "<rect class=\"seg\" x=\"" << x << "\" y=\"" << y
                        << "\" width=\"" << *e.kernels * scale << "\" height=\""
                        << kBarHeight << "\" fill=\"" << color(page.kinds("?")) << "\"/>";
                   for (auto &[kind, count] : e.kernelsByKind) {
                     os << "<rect class=\"seg\" data-kind=\"" << escape(kind)
                        << "\" data-count=\"" << exact(count) << "\" x=\"" << x << "\" y=\""
                        << y << "\" width=\"" << count * scale << "\" height=\"" << kBarHeight
                        << "\" fill=\"" << color(page.kinds(kind)) << "\"/>";
                     x += count * scale;
                   }
                   os << "</g>";
                   valueText(os, std::max(x, kPlotLeft + *e.kernels * scale), y,
                             shortNumber(*e.kernels));
                 });
    os << "</figure>\n";
    auto [unit, unitName] = byteUnit(maxBytes);
    os << "<figure><figcaption>" << escape(model)
       << ": bytes moved per step</figcaption>\n";
    drawBarChart(os, "bytes", model + " bytes per step", groups, distinct, maxBytes,
                 unitName + " per step", unit, fusionLegend(page, es),
                 [&](const Entry &e, double y, double scale) {
                   if (!e.bytes) {
                     valueText(os, kPlotLeft, y, "no byte count in the report");
                     return;
                   }
                   os << "<rect class=\"bar\" data-config=\"" << e.id << "\" data-bytes=\""
                      << exact(*e.bytes) << "\" x=\"" << kPlotLeft << "\" y=\"" << y
                      << "\" width=\"" << *e.bytes * scale << "\" height=\"" << kBarHeight
                      << "\" fill=\"" << color(page.fusions(e.fusion)) << "\"/>";
                   valueText(os, kPlotLeft + *e.bytes * scale, y,
                             shortNumber(*e.bytes / unit) + " " + unitName);
                 });
    os << "</figure>\n";
  }
  os << "</section>\n";
}

void writeSummary(std::ostream &os, const Page &page) {
  os << "<section id=\"summary\"><h2>Configurations</h2>\n<div class=\"scroll\"><table class=\"numbers\" "
        "id=\"summary-table\"><tr><th>model</th><th>backend</th><th>precision</th>"
        "<th>fusion</th><th>GPUs</th><th>batch</th><th>samples/s</th><th>min</th>"
        "<th>max</th><th>step ms</th><th>kernels</th><th>bytes/step</th>"
        "<th>TFLOP/s</th><th>MFU</th><th>peak TFLOP/s</th>";
  if (page.sources.size() > 1)
    os << "<th>report</th>";
  os << "</tr>\n";
  for (const Entry &e : page.entries) {
    auto num = [&](std::optional<double> v) {
      return v ? shortNumber(*v) : std::string("–");
    };
    const json::Object *ms = e.r->getObject("step_ms");
    std::optional<double> mfu = e.r->getNumber("mfu"), peak = e.r->getNumber("peak_tflops");
    std::string peakText = peak ? exact(*peak) : "–";
    if (std::optional<llvm::StringRef> name = e.r->getString("peak_name"))
      peakText = name->str() + " " + peakText;
    auto [unit, unitName] = byteUnit(e.bytes.value_or(0));
    os << "<tr><td class=\"t\">" << escape(e.model) << "</td><td class=\"t\">"
       << escape(e.backend) << "</td><td class=\"t\">" << escape(e.precision)
       << "</td><td class=\"t\">" << escape(e.fusion) << "</td><td>" << e.gpus
       << "</td><td>" << (e.batch ? std::to_string(*e.batch) : "–") << "</td><td>"
       << num(e.sps) << "</td><td>" << num(e.spsMin) << "</td><td>" << num(e.spsMax)
       << "</td><td>" << num(ms ? ms->getNumber("median") : std::nullopt) << "</td><td>"
       << num(e.kernels) << "</td><td>"
       << (e.bytes ? shortNumber(*e.bytes / unit) + " " + unitName : "–") << "</td><td>"
       << num(e.r->getNumber("achieved_tflops")) << "</td><td>"
       << (mfu ? shortNumber(100 * *mfu) + "%" : "–") << "</td><td class=\"t w\">"
       << escape(peakText) << "</td>";
    if (page.sources.size() > 1)
      os << "<td class=\"t\">" << escape(e.source) << "</td>";
    os << "</tr>\n";
  }
  os << "</table></div>\n</section>\n";
}

void writeFigures(std::ostream &os, const Page &page) {
  std::vector<html::FiguresColumn> columns;
  for (const Entry &e : page.entries)
    columns.push_back(
        {e.id,
         escape(e.model) + "<br>" + escape(e.precision) + " · " + escape(e.fusion) +
             "<br>batch " + (e.batch ? std::to_string(*e.batch) : "?") + " · " +
             std::to_string(e.gpus) + " GPU" +
             (page.sources.size() > 1 ? "<br>" + escape(e.source) : ""),
         e.r});
  os << "<section id=\"figures\"><h2>Every figure of the reports</h2>\n";
  html::writeFiguresTable(os, columns);
  os << "</section>\n";
}

const char *const kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 color:#222;margin:24px auto;max-width:1100px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;
 border-bottom:1px solid #ddd;padding-bottom:3px}
p.meta,figcaption,p.absent{color:#555}figure{margin:12px 0}
figcaption{font-weight:600;margin-bottom:4px}
p.absent{background:#f6f6f6;border-left:3px solid #bbb;padding:8px 12px}
svg.chart{display:block;max-width:100%;height:auto;font-size:12px}
svg text{fill:#333}svg text.tick,svg text.note{fill:#666;font-size:11px}
svg text.group{font-weight:600}svg text.axis{fill:#555}
svg line.grid{stroke:#e4e4e4}svg line.axisline{stroke:#999}
svg path.whisker{stroke:#222;stroke-width:1.2;fill:none}
svg path.ideal{stroke:#999;stroke-dasharray:4 3;fill:none}
svg path.series{stroke-width:2;fill:none}
.legend span{margin-right:16px;white-space:nowrap}
.legend i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px}
table.numbers{border-collapse:collapse;font-size:12px;margin:8px 0}
table.numbers th,table.numbers td{border:1px solid #ddd;padding:3px 7px;text-align:right;
 white-space:nowrap}
table.numbers th{background:#f4f4f4;text-align:left;font-weight:600}
table.numbers td.null{color:#999}table.numbers td.t{text-align:left}
table.numbers td.w{white-space:normal;min-width:90px}div.scroll{overflow-x:auto}
)";

} // namespace

void writeHtml(std::ostream &os, const std::vector<ReportSource> &sources) {
  Page page;
  for (const ReportSource &s : sources) {
    page.sources.push_back(s.label);
    for (const json::Object &r : s.results)
      page.entries.push_back(makeEntry(r, s.label, page.entries.size()));
  }
  for (const Entry &e : page.entries) {
    page.models(e.model);
    page.fusions(e.fusion);
  }
  std::string models;
  for (const std::string &m : page.models.values)
    models += (models.empty() ? "" : ", ") + m;
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<title>dlc-bench report: "
     << escape(models) << "</title><style>" << kStyle << "</style></head>\n<body>\n"
     << "<h1>dlc-bench report: " << escape(models) << "</h1>\n<p class=\"meta\">"
     << page.entries.size() << (page.entries.size() == 1 ? " configuration" : " configurations")
     << " from ";
  for (size_t i = 0; i < sources.size(); ++i)
    os << (i ? ", " : "") << escape(sources[i].label);
  // The methodology each result states: warm-up, timed steps, repeats.
  std::set<std::string> methods;
  for (const Entry &e : page.entries) {
    std::optional<int64_t> w = e.r->getInteger("warmup_steps"),
                           t = e.r->getInteger("timed_steps"),
                           n = e.r->getInteger("repeats");
    if (w && t && n)
      methods.insert("median of " + std::to_string(*n) + " repeats of " +
                     std::to_string(*t) + " timed steps after " + std::to_string(*w) +
                     " warm-up steps");
  }
  for (const std::string &m : methods)
    os << "; " << escape(m);
  os << ".</p>\n";
  // What produced them: dlc's revisions, the hosts and the first run's
  // date (peers' reports carry none of these).
  std::set<std::string> revisions, hosts;
  std::string firstDate;
  for (const Entry &e : page.entries) {
    if (std::optional<llvm::StringRef> rev = e.r->getString("dlc_revision"))
      revisions.insert(rev->str());
    if (std::string host = reportHost(*e.r); !host.empty())
      hosts.insert(host);
    if (std::optional<llvm::StringRef> date = e.r->getString("date"))
      if (firstDate.empty() || *date < firstDate)
        firstDate = date->str();
  }
  if (!revisions.empty()) {
    os << "<p class=\"meta\" id=\"provenance\">dlc ";
    for (auto r = revisions.begin(); r != revisions.end(); ++r)
      os << (r == revisions.begin() ? "" : ", ") << escape(*r);
    if (!firstDate.empty())
      os << "; first run " << escape(firstDate);
    for (const std::string &h : hosts)
      os << "; " << escape(h);
    os << (revisions.size() > 1 ? " (several revisions: compare with care)" : "") << ".</p>\n";
  }
  if (page.entries.empty()) {
    os << "<p class=\"absent\">The reports hold no configuration.</p>\n</body></html>\n";
    return;
  }
  writeSummary(os, page);
  writeThroughput(os, page);
  writeScaling(os, page);
  writeKernelsAndBytes(os, page);
  writeFigures(os, page);
  os << "</body></html>\n";
}

bool writeHtmlFromJson(std::ostream &os, const std::string &jsonText,
                       const std::string &label, std::string &error) {
  ReportSource source{label, {}};
  if (!parseReport(jsonText, label, source.results, error))
    return false;
  writeHtml(os, {source});
  return true;
}

int runReport(const std::vector<std::string> &args, std::ostream &errors) {
  std::vector<std::string> paths;
  std::string output = "-";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" && i + 1 < args.size()) {
      output = args[++i];
    } else if (args[i].rfind("-", 0) == 0) {
      errors << "dlc-bench report: error: unknown option '" << args[i] << "'\n";
      paths.clear();
      break;
    } else {
      paths.push_back(args[i]);
    }
  }
  if (paths.empty()) {
    errors << "usage: dlc-bench report A.json [B.json ...] [-o report.html]\n";
    return 1;
  }
  std::vector<ReportSource> sources;
  for (const std::string &path : paths) {
    // A report is named by its file name, or its path where names repeat.
    std::string label = path.substr(path.find_last_of('/') + 1);
    for (const std::string &other : paths)
      if (other != path && other.substr(other.find_last_of('/') + 1) == label)
        label = path;
    ReportSource source{label, {}};
    std::string error;
    if (!readReport(path, source.results, error)) {
      errors << "dlc-bench report: error: " << error << "\n";
      return 1;
    }
    sources.push_back(std::move(source));
  }
  std::ofstream file;
  std::ostream *os = &std::cout;
  if (output != "-") {
    file.open(output);
    if (!file) {
      errors << "dlc-bench report: error: cannot write " << output << "\n";
      return 1;
    }
    os = &file;
  }
  writeHtml(*os, sources);
  os->flush();
  if (!*os) {
    errors << "dlc-bench report: error: cannot write " << output << "\n";
    return 1;
  }
  return 0;
}

} // namespace dlc::bench
