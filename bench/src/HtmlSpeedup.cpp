//===- HtmlSpeedup.cpp - the HTML report's speed-up over `none` -----------===//
//
// What fusion buys: each strategy's samples/s over `none` at the same model,
// backend, precision, batch and GPUs, from the same report. The interval is
// the bootstrap of the ratio of the two medians that the terminal table's
// speed-up column and `compare` use (Stats.h), so that the page calls a
// difference exactly where they do.
//
//===----------------------------------------------------------------------===//

#include "HtmlCharts.h"
#include "Html.h"
#include "HtmlSvg.h"
#include "Stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace dlc::bench::html {

namespace {

constexpr const char *kBaseline = "none";

/// The `none` configuration `e` is compared with, if the page has one.
const Entry *baselineOf(const Page &page, const Entry &e) {
  for (const Entry &n : page.entries)
    if (n.fusion == kBaseline && n.sps && n.model == e.model && n.backend == e.backend &&
        n.precision == e.precision && n.batch == e.batch && n.gpus == e.gpus &&
        n.source == e.source)
      return &n;
  return nullptr;
}

std::string ratioText(double v) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(2);
  os << v << "x";
  return os.str();
}

} // namespace

std::optional<Speedup> speedupOverNone(const Page &page, const Entry &e) {
  const Entry *base = e.sps && e.fusion != kBaseline ? baselineOf(page, e) : nullptr;
  if (!base || *base->sps <= 0)
    return std::nullopt;
  Speedup s;
  if (!e.repeatSps.empty() && !base->repeatSps.empty()) {
    Interval ratio = bootstrapRatio(base->repeatSps, e.repeatSps,
                                    e.ciLevel.value_or(kConfidenceLevel));
    s.estimate = ratio.estimate;
    s.low = ratio.low;
    s.high = ratio.high;
    s.verdict = verdictName(verdictOf(ratio));
  } else {
    s.estimate = *e.sps / *base->sps; // a peer's report without its repeats
  }
  return s;
}

void writeSpeedups(std::ostream &os, Page &page) {
  if (std::none_of(page.entries.begin(), page.entries.end(),
                   [](const Entry &e) { return e.sps.has_value(); }))
    return;
  os << "<section id=\"speedup\"><h2>Speed-up over fusion none</h2>\n";
  std::map<const Entry *, Speedup> speedups;
  for (const Entry &e : page.entries)
    if (std::optional<Speedup> s = speedupOverNone(page, e))
      speedups[&e] = *s;
  if (speedups.empty()) {
    os << "<p class=\"absent\" id=\"speedup-absent\">No speed-up chart: no configuration "
          "with samples/s has a <code>none</code> configuration of the same model, "
          "backend, precision, batch and GPUs in its report to compare with.</p>\n"
          "</section>\n";
    return;
  }
  os << "<p>Median samples/s of each strategy over that of <code>none</code> (dashed "
        "line, 1x) at the same model, backend, precision, batch and GPUs. Whiskers: the "
        "bootstrap confidence interval of the ratio; <em>n.s.</em> where it includes 1 "
        "(no significant difference).</p>\n";
  std::vector<std::string> header = kConfigHeader;
  header.insert(header.end(), {"baseline_config", "speedup", "ci_low", "ci_high", "verdict"});
  for (const std::string &model : page.models.values) {
    std::vector<const Entry *> es;
    double max = 1;
    for (const Entry *e : page.of(model))
      if (auto it = speedups.find(e); it != speedups.end()) {
        es.push_back(e);
        max = std::max({max, it->second.estimate, it->second.high.value_or(0)});
      }
    if (es.empty())
      continue;
    Legend legend;
    for (const Entry *e : es)
      legend.add(e->fusion, strategyColor(page.fusions(e->fusion)));
    legend.note = "whiskers: confidence interval of the ratio";
    Distinct distinct(es);
    Csv csv(header);
    std::ostringstream svg;
    drawBarChart(
        svg, "speedup", model + " speed-up over none",
        groupByConfiguration(es, distinct, page.fusions), max, "speed-up over none (x)", 1,
        legend,
        [&](const Entry &e, double y, double scale) {
          const Speedup &s = speedups.at(&e);
          const Entry &base = *baselineOf(page, e);
          svg << "<rect class=\"bar\" data-config=\"" << e.id << "\" data-baseline=\""
              << base.id << "\" data-speedup=\"" << exact(s.estimate) << "\"";
          if (s.low && s.high)
            svg << " data-ci-low=\"" << exact(*s.low) << "\" data-ci-high=\""
                << exact(*s.high) << "\" data-verdict=\"" << escape(s.verdict) << "\"";
          svg << " x=\"" << kPlotLeft << "\" y=\"" << y << "\" width=\"" << s.estimate * scale
              << "\" height=\"" << kBarHeight << "\" fill=\""
              << strategyColor(page.fusions(e.fusion)) << "\"><title>"
              << escape(model + " " + distinct.name(e)) << ": " << ratioText(s.estimate)
              << " over none" << (s.verdict.empty() ? "" : ", " + s.verdict)
              << "</title></rect>";
          double end = kPlotLeft + s.estimate * scale;
          if (s.low && s.high) {
            whisker(svg, kPlotLeft + *s.low * scale, kPlotLeft + *s.high * scale, y);
            end = std::max(end, kPlotLeft + *s.high * scale);
          }
          bool ns = s.verdict == verdictName(Verdict::kNoDifference);
          valueText(svg, end, y, ratioText(s.estimate) + (ns ? " n.s." : ""));
          std::vector<std::string> row = configCells(e);
          row.insert(row.end(), {base.id, exact(s.estimate), s.low ? exact(*s.low) : "",
                                 s.high ? exact(*s.high) : "", s.verdict});
          csv.add(row);
        },
        /*reference=*/1);
    writeFigure(os, escape(model) + ": speed-up over none by precision, batch and strategy",
                svg.str(), model + "-speedup", csv);
  }
  // Over models: each strategy's geometric mean of the models' speed-ups
  // at the same precision, batch, GPUs and backend.
  if (page.models.values.size() < 2)
    return void(os << "</section>\n");
  struct Mean {
    Entry row; // what the chart draws: the configuration without a model
    std::vector<std::pair<std::string, double>> byModel;
  };
  std::vector<std::string> order;
  std::map<std::string, Mean> means;
  // (`speedups` is keyed by address: the page's order.)
  for (auto &[e, s] : speedups) {
    std::string key = e->precision + "\n" + std::to_string(e->batch.value_or(0)) + "\n" +
                      std::to_string(e->gpus) + "\n" + e->backend + "\n" + e->fusion;
    if (!means.count(key)) {
      order.push_back(key);
      Mean &m = means[key];
      m.row = *e;
      m.row.model = "geometric mean";
      m.row.source.clear();
      m.row.revision.clear();
    }
    means[key].byModel.push_back({e->model, s.estimate});
  }
  // A mean of one model is that model's speed-up, drawn above already.
  order.erase(std::remove_if(order.begin(), order.end(),
                             [&](const std::string &key) {
                               return means[key].byModel.size() < 2;
                             }),
              order.end());
  if (order.empty())
    return void(os << "</section>\n");
  std::vector<Entry> rows;
  std::vector<const Entry *> rowPtrs;
  double max = 1;
  for (size_t i = 0; i < order.size(); ++i) {
    Mean &m = means[order[i]];
    double logs = 0;
    for (auto &[model, v] : m.byModel)
      logs += std::log(v);
    m.row.id = "g" + std::to_string(i);
    m.row.sps = std::exp(logs / m.byModel.size());
    max = std::max(max, *m.row.sps);
  }
  for (const std::string &key : order)
    rows.push_back(means[key].row);
  for (const Entry &r : rows)
    rowPtrs.push_back(&r);
  Legend legend;
  for (const Entry *e : rowPtrs)
    legend.add(e->fusion, strategyColor(page.fusions(e->fusion)));
  Csv csv({"precision", "batch", "gpus", "backend", "fusion", "models", "geomean_speedup"});
  Distinct distinct(rowPtrs);
  std::ostringstream svg;
  drawBarChart(
      svg, "speedup-geomean", "geometric mean of the speed-ups over none",
      groupByConfiguration(rowPtrs, distinct, page.fusions), max,
      "geometric mean of the models' speed-ups over none (x)", 1, legend,
      [&](const Entry &e, double y, double scale) {
        const Mean &m = means[order[std::stoul(e.id.substr(1))]];
        std::string models;
        for (auto &[model, v] : m.byModel)
          models += (models.empty() ? "" : " ") + model;
        svg << "<rect class=\"bar\" data-geomean=\"" << exact(*e.sps) << "\" data-models=\""
            << escape(models) << "\" x=\"" << kPlotLeft << "\" y=\"" << y << "\" width=\""
            << *e.sps * scale << "\" height=\"" << kBarHeight << "\" fill=\""
            << strategyColor(page.fusions(e.fusion)) << "\"><title>" << escape(models)
            << "</title></rect>";
        valueText(svg, kPlotLeft + *e.sps * scale, y,
                  ratioText(*e.sps) + " (" + std::to_string(m.byModel.size()) + " models)");
        csv.add({e.precision, e.batch ? std::to_string(*e.batch) : "", std::to_string(e.gpus),
                 e.backend, e.fusion, models, exact(*e.sps)});
      },
      /*reference=*/1);
  writeFigure(os,
              "Over the models: each strategy's geometric mean of the models' speed-ups "
              "over none (of their medians; no interval)",
              svg.str(), "speedup-geomean", csv);
  os << "</section>\n";
}

} // namespace dlc::bench::html
