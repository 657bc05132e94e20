//===- HtmlCharts.cpp - the HTML report's charts --------------------------===//

#include "HtmlCharts.h"
#include "Html.h"
#include "HtmlSvg.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

namespace dlc::bench::html {

namespace {
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

} // namespace

void writeThroughput(std::ostream &os, Page &page) {
  os << "<section id=\"throughput\"><h2>Throughput</h2>\n"
        "<p>Median samples per second of each configuration over its repeats; the "
        "whiskers span the median's bootstrap confidence interval (the slowest and the "
        "fastest repeat in reports without one).</p>\n";
  for (const std::string &model : page.models.values) {
    std::vector<const Entry *> es;
    double max = 0;
    for (const Entry &e : page.entries)
      if (e.model == model) {
        es.push_back(&e);
        max = std::max({max, e.sps.value_or(0), e.spsMax.value_or(0), e.ciHigh.value_or(0)});
      }
    Legend legend = fusionLegend(page, es);
    bool intervals =
        std::all_of(es.begin(), es.end(), [](const Entry *e) { return !e->sps || e->ciLow; });
    legend.note = intervals ? "whiskers: confidence interval of the median"
                            : "whiskers: min–max of the repeats";
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
                   if (e.ciLow && e.ciHigh)
                     os << " data-ci-low=\"" << exact(*e.ciLow) << "\" data-ci-high=\""
                        << exact(*e.ciHigh) << "\"";
                   os << " x=\"" << kPlotLeft << "\" y=\"" << y << "\" width=\"" << w
                      << "\" height=\"" << kBarHeight << "\" fill=\""
                      << color(page.fusions(e.fusion)) << "\"><title>"
                      << escape(e.model + " " + e.precision + " " + e.fusion) << ": "
                      << shortNumber(*e.sps) << " samples/s</title></rect>";
                   double end = kPlotLeft + w;
                   std::optional<double> low = intervals ? e.ciLow : e.spsMin,
                                         high = intervals ? e.ciHigh : e.spsMax;
                   if (low && high) {
                     double x0 = kPlotLeft + *low * scale;
                     double x1 = kPlotLeft + *high * scale, mid = y + kBarHeight / 2;
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

} // namespace dlc::bench::html
