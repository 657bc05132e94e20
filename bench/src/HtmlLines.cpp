//===- HtmlLines.cpp - the HTML report's line charts ----------------------===//
//
// Lines are configurations: coloured by fusion strategy (the bars' colours)
// and dashed by precision, so that the same configuration looks the same in
// every chart.
//
//===----------------------------------------------------------------------===//

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

std::string seriesColor(Page &page, const Entry &e) {
  return strategyColor(page.fusions(e.fusion));
}
std::string seriesDash(Page &page, const Entry &e) {
  return precisionDash(page.precisions(e.precision));
}

} // namespace

void writeScaling(std::ostream &os, Page &page) {
  std::vector<const Entry *> measured;
  std::set<int64_t> counts;
  for (const Entry &e : page.entries)
    if (e.sps) {
      measured.push_back(&e);
      counts.insert(e.gpus);
    }
  // Nothing to scale over: no section (a sweep of strategies on one GPU).
  if (counts.size() < 2)
    return;
  os << "<section id=\"scaling\"><h2>Scaling over GPUs</h2>\n";
  struct Series {
    std::string label;
    const Entry *first;
    std::map<int64_t, const Entry *> byGpus;
  };
  // Series are named by configuration; the GPU count is the x axis.
  Distinct distinct(measured);
  distinct.gpus = false;
  std::vector<std::string> order;
  std::map<std::string, Series> series;
  for (const Entry *entry : measured) {
    const Entry &e = *entry;
    std::string batch = e.batch ? std::to_string(*e.batch) : "?";
    std::string key = e.source + "\n" + e.model + "\n" + e.backend + "\n" + e.precision +
                      "\n" + e.fusion + "\n" + batch;
    if (!series.count(key))
      order.push_back(key);
    Series &s = series[key];
    s.label = e.model + " · " + distinct.name(e);
    s.first = s.byGpus.empty() ? &e : s.first;
    s.byGpus.insert({e.gpus, &e});
  }
  std::vector<const Series *> drawn;
  for (const std::string &key : order) {
    const Series &s = series[key];
    if (s.byGpus.size() > 1 && s.byGpus.count(1) && *s.byGpus.at(1)->sps > 0)
      drawn.push_back(&s);
  }
  if (drawn.empty()) {
    os << "<p class=\"absent\" id=\"scaling-absent\">No scaling chart: no configuration "
          "(same model, backend, precision, fusion and per-GPU batch) was measured both on "
          "1 GPU and on more.</p>\n</section>\n";
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
  constexpr double panelWidth = 440, left = 56, right = 16, plotHeight = 240;
  double height = 330;
  std::set<int64_t> shown;
  for (const Series *s : drawn)
    for (auto &[n, e] : s->byGpus)
      shown.insert(n);
  auto xOf = [&](int64_t n) {
    double span = std::log2(double(maxGpus));
    return left + (span > 0 ? std::log2(double(n)) / span : 0) *
                      (panelWidth - left - right);
  };
  std::ostringstream svg, legendSvg;
  Legend legend;
  legend.lines = true;
  for (const Series *s : drawn)
    legend.add(s->label, seriesColor(page, *s->first), seriesDash(page, *s->first));
  double legendExtra = drawLegend(legendSvg, legend, left, 2 * panelWidth + 40);
  height += legendExtra + 20;
  double plotTop = 54 + legendExtra;
  svg << "<svg class=\"chart\" data-chart=\"scaling\" width=\"" << 2 * panelWidth + 40
      << "\" height=\"" << height << "\" viewBox=\"0 0 " << 2 * panelWidth + 40 << " "
      << height << "\" role=\"img\" aria-label=\"speed-up\">" << legendSvg.str();
  for (int panel = 0; panel < 2; ++panel) {
    double ox = panel * (panelWidth + 40);
    double yMax = panel == 0 ? std::max<double>(maxGpus, maxSpeedup) * 1.05
                             : std::max(1.0, maxEfficiency) * 1.1;
    auto yOf = [&](double v) { return plotTop + plotHeight * (1 - v / yMax); };
    svg << "<g transform=\"translate(" << ox << " 0)\"><text class=\"group\" x=\"" << left
        << "\" y=\"" << plotTop - 14 << "\">"
        << (panel == 0 ? "speed-up over 1 GPU" : "scaling efficiency") << "</text>";
    double step = tickStep(yMax, 5);
    for (double t = 0; t <= yMax; t += step)
      svg << "<line class=\"grid\" x1=\"" << left << "\" y1=\"" << yOf(t) << "\" x2=\""
         << panelWidth - right << "\" y2=\"" << yOf(t) << "\"/><text class=\"tick\" x=\""
         << left - 6 << "\" y=\"" << yOf(t) + 4 << "\" text-anchor=\"end\">"
         << tickLabel(t) << "</text>";
    for (int64_t n : shown)
      svg << "<text class=\"tick\" x=\"" << xOf(n) << "\" y=\"" << plotTop + plotHeight + 16
         << "\" text-anchor=\"middle\">" << n << "</text>";
    svg << "<text class=\"axis\" x=\"" << (left + panelWidth - right) / 2 << "\" y=\""
       << plotTop + plotHeight + 36 << "\" text-anchor=\"middle\">GPUs</text>";
    svg << "<path class=\"ideal\" d=\"M" << xOf(1) << " " << yOf(1);
    for (int64_t n : shown)
      svg << "L" << xOf(n) << " " << yOf(panel == 0 ? double(n) : 1.0);
    svg << "\"/>";
    for (size_t i = 0; i < drawn.size(); ++i) {
      const Series &s = *drawn[i];
      double base = *s.byGpus.at(1)->sps;
      std::string line;
      for (auto &[n, e] : s.byGpus) {
        double speedup = *e->sps / base;
        double v = panel == 0 ? speedup : speedup / n;
        line += (line.empty() ? "M" : "L") + exact(xOf(n)) + " " + exact(yOf(v));
      }
      const Entry &first = *s.first;
      std::string dash = seriesDash(page, first);
      svg << "<path class=\"series\" stroke=\"" << seriesColor(page, first) << "\""
          << (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") << " d=\"" << line
          << "\"/>";
      for (auto &[n, e] : s.byGpus) {
        double speedup = *e->sps / base;
        svg << "<circle class=\"point\" data-config=\"" << e->id << "\" data-gpus=\"" << n
           << "\" data-samples-per-sec=\"" << exact(*e->sps) << "\" data-speedup=\""
           << exact(speedup) << "\" data-efficiency=\"" << exact(speedup / n)
           << "\" cx=\"" << xOf(n) << "\" cy=\"" << yOf(panel == 0 ? speedup : speedup / n)
           << "\" r=\"4\" fill=\"" << seriesColor(page, first) << "\"><title>" << escape(s.label) << ", "
           << n << " GPUs: " << shortNumber(speedup) << "x, efficiency "
           << shortNumber(speedup / n) << "</title></circle>";
      }
    }
    svg << "</g>";
  }
  svg << "</svg>\n";
  Csv csv({"series", "config", "gpus", "samples_per_sec", "speedup", "efficiency"});
  for (const Series *s : drawn)
    for (auto &[n, e] : s->byGpus) {
      double speedup = *e->sps / *s->byGpus.at(1)->sps;
      csv.add({s->label, e->id, std::to_string(n), exact(*e->sps), exact(speedup),
               exact(speedup / n)});
    }
  writeFigure(os,
              "Speed-up over 1 GPU and scaling efficiency (speed-up / GPUs) at the same "
              "per-GPU batch; dashed grey: linear scaling",
              svg.str(), "scaling", csv);
  os << "<table class=\"numbers\" id=\"scaling-table\"><tr><th>series</th>"
        "<th>GPUs</th><th>samples/s</th><th>speed-up</th><th>efficiency</th></tr>\n";
  for (const Series *s : drawn)
    for (auto &[n, e] : s->byGpus) {
      double speedup = *e->sps / *s->byGpus.at(1)->sps;
      std::ostringstream ratio;
      ratio << std::fixed << std::setprecision(2) << speedup << "x</td><td>"
            << std::setprecision(1) << 100 * speedup / n << "%";
      os << "<tr><td class=\"t\">" << escape(s->label) << "</td><td>" << n << "</td><td>"
         << shortNumber(*e->sps) << "</td><td>" << ratio.str() << "</td></tr>\n";
    }
  os << "</table>\n</section>\n";
}

void writeLosses(std::ostream &os, Page &page) {
  if (std::all_of(page.entries.begin(), page.entries.end(),
                  [](const Entry &e) { return e.losses.empty(); }))
    return;
  os << "<section id=\"losses\"><h2>Loss trajectory</h2>\n"
        "<p>With <code>--loss-every N</code>: the first repeat's loss after every N-th "
        "step, warm-up steps first (left of the dashed line), then the timed ones. Each "
        "line is drawn narrower than the one listed before it, so that lines that "
        "coincide (strategies that compute the same losses) show as nested bands.</p>\n";
  constexpr double left = 70, right = 930, plotHeight = 260;
  for (const std::string &model : page.models.values) {
    std::vector<const Entry *> es;
    for (const Entry *e : page.of(model))
      if (!e->losses.empty())
        es.push_back(e);
    if (es.empty())
      continue;
    int64_t maxStep = 1;
    double lo = INFINITY, hi = -INFINITY;
    std::set<int64_t> warmups;
    for (const Entry *e : es) {
      warmups.insert(e->warmup.value_or(0));
      for (auto &[step, loss] : e->losses) {
        maxStep = std::max(maxStep, step);
        if (std::isfinite(loss))
          lo = std::min(lo, loss), hi = std::max(hi, loss);
      }
    }
    if (!(lo <= hi))
      lo = 0, hi = 1;
    // A flat trajectory still gets a band to sit in.
    double pad = hi > lo ? (hi - lo) * 0.08 : std::max(std::fabs(hi) * 0.05, 0.05);
    double yStep = tickStep(hi - lo + 2 * pad, 5);
    // Losses are not negative: no axis below 0 for a loss that nears it.
    double yLo = std::floor(std::max(lo - pad, lo >= 0 ? 0.0 : lo - pad) / yStep) * yStep,
           yHi = std::ceil((hi + pad) / yStep) * yStep;
    Distinct distinct(es);
    Legend legend;
    legend.lines = true;
    for (const Entry *e : es)
      legend.add(distinct.name(*e), seriesColor(page, *e), seriesDash(page, *e));
    std::ostringstream legendSvg, svg;
    double plotTop = kTop + 12 + drawLegend(legendSvg, legend, left, kWidth - 8);
    double plotBottom = plotTop + plotHeight, height = plotBottom + kBottom;
    auto xOf = [&](double step) {
      return left + (maxStep > 1 ? (step - 1) / double(maxStep - 1) : 0.5) * (right - left);
    };
    auto yOf = [&](double v) { return plotBottom - (v - yLo) / (yHi - yLo) * plotHeight; };
    svg << "<svg class=\"chart\" data-chart=\"loss\" width=\"" << kWidth << "\" height=\""
        << height << "\" viewBox=\"0 0 " << kWidth << " " << height
        << "\" role=\"img\" aria-label=\"" << escape(model) << " loss\">" << legendSvg.str();
    for (double t = yLo; t <= yHi + yStep * 1e-6; t += yStep)
      svg << "<line class=\"grid\" x1=\"" << left << "\" y1=\"" << yOf(t) << "\" x2=\""
          << right << "\" y2=\"" << yOf(t) << "\"/><text class=\"tick\" x=\"" << left - 6
          << "\" y=\"" << yOf(t) + 4 << "\" text-anchor=\"end\">" << tickLabel(t) << "</text>";
    double xStep = std::max(1.0, tickStep(double(maxStep), 8));
    for (double t = 1; t <= maxStep; t = t == 1 && xStep > 1 ? xStep : t + xStep)
      svg << "<text class=\"tick\" x=\"" << xOf(t) << "\" y=\"" << plotBottom + 14
          << "\" text-anchor=\"middle\">" << tickLabel(t) << "</text>";
    svg << "<text class=\"axis\" x=\"" << (left + right) / 2 << "\" y=\"" << height - 8
        << "\" text-anchor=\"middle\">step</text><text class=\"axis\" x=\"14\" y=\""
        << (plotTop + plotBottom) / 2 << "\" transform=\"rotate(-90 14 "
        << (plotTop + plotBottom) / 2 << ")\" text-anchor=\"middle\">loss</text>";
    // The warm-up's end, where every configuration warmed up alike.
    if (warmups.size() == 1 && *warmups.begin() > 0 && *warmups.begin() < maxStep) {
      double x = xOf(*warmups.begin() + 0.5);
      svg << "<line class=\"reference\" x1=\"" << x << "\" y1=\"" << plotTop << "\" x2=\"" << x
          << "\" y2=\"" << plotBottom << "\"/><text class=\"note\" x=\"" << x + 4 << "\" y=\""
          << plotTop + 12 << "\">timed steps →</text>";
    }
    std::vector<std::string> header = kConfigHeader;
    header.insert(header.end(), {"step", "loss"});
    Csv csv(header);
    for (size_t i = 0; i < es.size(); ++i) {
      const Entry *e = es[i];
      std::string d, steps, losses;
      bool pen = false; // a NaN loss lifts it
      for (auto &[step, loss] : e->losses) {
        steps += (steps.empty() ? "" : " ") + std::to_string(step);
        losses += (losses.empty() ? "" : " ") + (std::isfinite(loss) ? exact(loss) : "null");
        std::vector<std::string> row = configCells(*e);
        row.insert(row.end(), {std::to_string(step), std::isfinite(loss) ? exact(loss) : ""});
        csv.add(row);
        if (!std::isfinite(loss)) {
          pen = false;
          continue;
        }
        // A run's first point is also a dot (a zero-length segment with round
        // caps), so that a point between two NaNs, or alone, still shows.
        d += (pen ? "L" : "M") + exact(xOf(double(step))) + " " + exact(yOf(loss)) +
             (pen ? "" : "h0");
        pen = true;
      }
      std::string dash = seriesDash(page, *e);
      // Strategies often compute the same losses: each line is drawn
      // narrower than the one before, so that coinciding ones all show.
      svg << "<path class=\"series\" data-config=\"" << e->id << "\" data-steps=\"" << steps
          << "\" data-losses=\"" << losses << "\" stroke=\"" << seriesColor(page, *e)
          << "\" style=\"stroke-width:"
          << 2 + (es.size() > 1 ? 12.0 * double(es.size() - 1 - i) / double(es.size() - 1) : 0)
          << "\""
          << (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") << " d=\"" << d
          << "\"><title>" << escape(distinct.name(*e)) << "</title></path>";
    }
    svg << "<line class=\"axisline\" x1=\"" << left << "\" y1=\"" << plotTop << "\" x2=\""
        << left << "\" y2=\"" << plotBottom << "\"/></svg>\n";
    writeFigure(os, escape(model) + ": loss after each recorded step", svg.str(),
                model + "-loss", csv);
  }
  os << "</section>\n";
}

} // namespace dlc::bench::html
