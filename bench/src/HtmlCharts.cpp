//===- HtmlCharts.cpp - the HTML report's bar charts ----------------------===//

#include "HtmlCharts.h"
#include "Html.h"
#include "HtmlSvg.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

namespace dlc::bench::html {

namespace {

/// The fusion strategies of `es`, in the colours every chart gives them.
Legend fusionLegend(Page &page, const std::vector<const Entry *> &es) {
  Legend legend;
  for (const Entry *e : es)
    legend.add(e->fusion, strategyColor(page.fusions(e->fusion)));
  return legend;
}

/// A chart's caption: the model, then what is drawn.
std::string caption(const std::string &model, const std::string &what) {
  return escape(model) + ": " + what;
}

/// A stacked bar of `parts` (kind, value) in the kinds' colours.
double stackedBar(std::ostream &os, const std::vector<std::pair<std::string, double>> &parts,
                  const std::function<std::string(const std::string &)> &colorOf,
                  const std::string &valueAttr, double y, double scale) {
  double x = kPlotLeft;
  for (auto &[kind, value] : parts) {
    os << "<rect class=\"seg\" data-kind=\"" << escape(kind) << "\" " << valueAttr << "=\""
       << exact(value) << "\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << value * scale
       << "\" height=\"" << kBarHeight << "\" fill=\"" << colorOf(kind) << "\"/>";
    x += value * scale;
  }
  return x;
}

} // namespace

void writeThroughput(std::ostream &os, Page &page) {
  if (std::none_of(page.entries.begin(), page.entries.end(),
                   [](const Entry &e) { return e.sps.has_value(); }))
    return;
  os << "<section id=\"throughput\"><h2>Throughput</h2>\n"
        "<p>Median samples per second of each configuration over its repeats, the fusion "
        "strategies side by side within each precision and batch; the whiskers span the "
        "median's bootstrap confidence interval (the slowest and the fastest repeat in "
        "reports without one).</p>\n";
  for (const std::string &model : page.models.values) {
    std::vector<const Entry *> es = page.of(model);
    double max = 0;
    for (const Entry *e : es)
      max = std::max({max, e->sps.value_or(0), e->spsMax.value_or(0), e->ciHigh.value_or(0)});
    Legend legend = fusionLegend(page, es);
    std::vector<std::string> header = kConfigHeader;
    for (const char *c : {"samples_per_sec", "ci_low", "ci_high", "ci_level", "min", "max"})
      header.push_back(c);
    Csv csv(header);
    bool intervals =
        std::all_of(es.begin(), es.end(), [](const Entry *e) { return !e->sps || e->ciLow; });
    legend.note = intervals ? "whiskers: confidence interval of the median"
                            : "whiskers: min–max of the repeats";
    std::ostringstream svg;
    Distinct distinct(es);
    drawBarChart(
        svg, "throughput", model + " samples/s",
        groupByConfiguration(es, distinct, page.fusions), max,
        "samples/s (median of the repeats)", 1, legend,
        [&](const Entry &e, double y, double scale) {
          if (!e.sps) {
            valueText(svg, kPlotLeft, y, "no samples/s in the report");
            return;
          }
          double w = *e.sps * scale;
          svg << "<rect class=\"bar\" data-config=\"" << e.id << "\" data-samples-per-sec=\""
              << exact(*e.sps) << "\"";
          if (e.spsMin && e.spsMax)
            svg << " data-min=\"" << exact(*e.spsMin) << "\" data-max=\"" << exact(*e.spsMax)
                << "\"";
          if (e.ciLow && e.ciHigh)
            svg << " data-ci-low=\"" << exact(*e.ciLow) << "\" data-ci-high=\""
                << exact(*e.ciHigh) << "\"";
          svg << " x=\"" << kPlotLeft << "\" y=\"" << y << "\" width=\"" << w
              << "\" height=\"" << kBarHeight << "\" fill=\""
              << strategyColor(page.fusions(e.fusion)) << "\"><title>"
              << escape(e.model + " " + distinct.name(e)) << ": " << shortNumber(*e.sps)
              << " samples/s</title></rect>";
          double end = kPlotLeft + w;
          std::optional<double> low = intervals ? e.ciLow : e.spsMin,
                                high = intervals ? e.ciHigh : e.spsMax;
          if (low && high) {
            whisker(svg, kPlotLeft + *low * scale, kPlotLeft + *high * scale, y);
            svg << "<g class=\"ci\" data-config=\"" << e.id << "\" data-low=\""
                << exact(*low) << "\" data-high=\"" << exact(*high) << "\"/>";
            end = std::max(end, kPlotLeft + *high * scale);
          }
          valueText(svg, end, y, shortNumber(*e.sps));
        });
    for (const Entry *e : es) {
      if (!e->sps)
        continue;
      std::vector<std::string> row = configCells(*e);
      for (std::optional<double> v : {e->sps, e->ciLow, e->ciHigh, e->ciLevel, e->spsMin,
                                      e->spsMax})
        row.push_back(v ? exact(*v) : "");
      csv.add(row);
    }
    writeFigure(os, caption(model, "samples/s by precision, batch and fusion strategy"),
                svg.str(), model + "-throughput", csv);
  }
  os << "</section>\n";
}

void writeKernelsAndBytes(std::ostream &os, Page &page) {
  bool kernels = std::any_of(page.entries.begin(), page.entries.end(),
                             [](const Entry &e) { return e.kernels.has_value(); });
  bool bytes = std::any_of(page.entries.begin(), page.entries.end(),
                           [](const Entry &e) { return e.bytes.has_value(); });
  if (!kernels && !bytes)
    return;
  os << "<section id=\"kernels\"><h2>Kernels and bytes per step</h2>\n"
        "<p>Kernel launches per step by implementation kind (a fused group is one "
        "launch), and the bytes a step moves if each kernel reads its inputs and "
        "writes its outputs once.</p>\n";
  for (const std::string &model : page.models.values) {
    std::vector<const Entry *> es = page.of(model);
    double maxKernels = 0, maxBytes = 0;
    Legend kinds;
    for (const Entry *e : es) {
      maxKernels = std::max(maxKernels, e->kernels.value_or(0));
      maxBytes = std::max(maxBytes, e->bytes.value_or(0));
      for (auto &[kind, count] : e->kernelsByKind)
        kinds.add(kind, kindColor(page.kinds(kind)));
    }
    Distinct distinct(es);
    std::vector<Group> groups = groupByConfiguration(es, distinct, page.fusions);
    std::vector<std::string> header = kConfigHeader;
    header.insert(header.end(), {"kind", "kernels_per_step"});
    Csv kernelCsv(header);
    std::ostringstream svg;
    drawBarChart(svg, "kernels", model + " kernels per step", groups, maxKernels,
                 "kernels per step", 1, kinds, [&](const Entry &e, double y, double scale) {
                   if (!e.kernels) {
                     valueText(svg, kPlotLeft, y, "no kernel count in the report");
                     return;
                   }
                   svg << "<g class=\"bar\" data-config=\"" << e.id << "\" data-kernels=\""
                       << exact(*e.kernels) << "\"><title>" << escape(distinct.name(e))
                       << ": " << shortNumber(*e.kernels) << " kernels per step</title>";
                   std::vector<std::pair<std::string, double>> parts = e.kernelsByKind;
                   if (parts.empty())
                     parts.push_back({"?", *e.kernels});
                   double x = stackedBar(
                       svg, parts,
                       [&](const std::string &kind) { return kindColor(page.kinds(kind)); },
                       "data-count", y, scale);
                   svg << "</g>";
                   valueText(svg, std::max(x, kPlotLeft + *e.kernels * scale), y,
                             shortNumber(*e.kernels));
                   for (auto &[kind, count] : parts) {
                     std::vector<std::string> row = configCells(e);
                     row.insert(row.end(), {kind, exact(count)});
                     kernelCsv.add(row);
                   }
                 });
    if (kernels)
      writeFigure(os, caption(model, "kernel launches per step, by kind"), svg.str(),
                  model + "-kernels", kernelCsv);
    auto [unit, unitName] = byteUnit(maxBytes);
    header = kConfigHeader;
    header.push_back("memory_bytes_per_step");
    Csv byteCsv(header);
    std::ostringstream bytesSvg;
    drawBarChart(bytesSvg, "bytes", model + " bytes per step", groups, maxBytes,
                 unitName + " per step", unit, fusionLegend(page, es),
                 [&](const Entry &e, double y, double scale) {
                   if (!e.bytes) {
                     valueText(bytesSvg, kPlotLeft, y, "no byte count in the report");
                     return;
                   }
                   bytesSvg << "<rect class=\"bar\" data-config=\"" << e.id
                            << "\" data-bytes=\"" << exact(*e.bytes) << "\" x=\"" << kPlotLeft
                            << "\" y=\"" << y << "\" width=\"" << *e.bytes * scale
                            << "\" height=\"" << kBarHeight << "\" fill=\""
                            << strategyColor(page.fusions(e.fusion)) << "\"/>";
                   valueText(bytesSvg, kPlotLeft + *e.bytes * scale, y,
                             shortNumber(*e.bytes / unit) + " " + unitName);
                   std::vector<std::string> row = configCells(e);
                   row.push_back(exact(*e.bytes));
                   byteCsv.add(row);
                 });
    if (bytes)
      writeFigure(os, caption(model, "bytes moved per step"), bytesSvg.str(),
                  model + "-bytes", byteCsv);
  }
  os << "</section>\n";
}

void writeProfile(std::ostream &os, Page &page) {
  if (std::all_of(page.entries.begin(), page.entries.end(),
                  [](const Entry &e) { return e.msByKind.empty(); }))
    return;
  os << "<section id=\"profile\"><h2>Time per step by kernel kind</h2>\n"
        "<p>With <code>--profile</code>: each launch's milliseconds per step (the "
        "report's <code>profile</code> array), summed by launch kind (the fusion kind, or "
        "the op of a single kernel); the clock reads between kernels add a little to "
        "each. The kinds that take the most time keep a colour each, the rest are drawn "
        "together as <em>other</em> (the CSV has each).</p>\n";
  for (const std::string &model : page.models.values) {
    std::vector<const Entry *> profiled;
    std::map<std::string, double> totals;
    for (const Entry *e : page.of(model))
      if (!e->msByKind.empty()) {
        profiled.push_back(e);
        for (auto &[kind, ms] : e->msByKind)
          totals[kind] += ms;
      }
    if (profiled.empty())
      continue;
    // Launch kinds are fusion kinds and ops, dozens in a large model: the
    // palette's worth that take this model the most time are told apart.
    std::vector<std::pair<double, std::string>> ranked;
    for (auto &[kind, ms] : totals)
      ranked.push_back({-ms, kind});
    std::sort(ranked.begin(), ranked.end());
    std::map<std::string, size_t> rank;
    for (size_t i = 0; i < ranked.size() && i < kKindColors - 1; ++i)
      rank[ranked[i].second] = i;
    auto merged = [&](const Entry &e) {
      std::vector<std::pair<std::string, double>> parts(rank.size());
      for (auto &[kind, i] : rank)
        parts[i].first = kind;
      double other = 0;
      for (auto &[kind, ms] : e.msByKind)
        if (auto it = rank.find(kind); it != rank.end())
          parts[it->second].second = ms;
        else
          other += ms;
      parts.erase(std::remove_if(parts.begin(), parts.end(),
                                 [](const auto &p) { return p.second == 0; }),
                  parts.end());
      if (other > 0)
        parts.push_back({"other", other});
      return parts;
    };
    auto colorOf = [&](const std::string &kind) -> std::string {
      auto it = rank.find(kind);
      return it == rank.end() ? kOtherColor : kindColor(it->second);
    };
    double max = 0;
    Legend kinds;
    for (auto &[negative, kind] : ranked)
      if (rank.count(kind))
        kinds.add(kind, colorOf(kind));
    if (rank.size() < totals.size())
      kinds.add("other", kOtherColor);
    for (const Entry *e : profiled) {
      double total = 0;
      for (auto &[kind, ms] : e->msByKind)
        total += ms;
      max = std::max(max, total);
    }
    std::vector<std::string> header = kConfigHeader;
    header.insert(header.end(), {"kind", "ms_per_step"});
    Csv csv(header);
    Distinct distinct(profiled);
    std::ostringstream svg;
    drawBarChart(svg, "profile", model + " milliseconds per step by kind",
                 groupByConfiguration(profiled, distinct, page.fusions), max,
                 "milliseconds per step (profiled)", 1, kinds,
                 [&](const Entry &e, double y, double scale) {
                   double total = 0;
                   for (auto &[kind, ms] : e.msByKind)
                     total += ms;
                   svg << "<g class=\"bar\" data-config=\"" << e.id << "\" data-ms=\""
                       << exact(total) << "\"><title>" << escape(distinct.name(e)) << ": "
                       << shortNumber(total) << " ms per step</title>";
                   double x = stackedBar(svg, merged(e), colorOf, "data-ms", y, scale);
                   svg << "</g>";
                   valueText(svg, x, y, shortNumber(total) + " ms");
                   for (auto &[kind, ms] : e.msByKind) {
                     std::vector<std::string> row = configCells(e);
                     row.insert(row.end(), {kind, exact(ms)});
                     csv.add(row);
                   }
                 });
    writeFigure(os, caption(model, "milliseconds per step by launch kind"), svg.str(),
                model + "-profile", csv);
  }
  os << "</section>\n";
}

} // namespace dlc::bench::html
