//===- Html.cpp - dlc-bench's self-contained HTML report ------------------===//
//
// The page is drawn from the JSON alone, never from the in-memory results,
// so a run's page and `dlc-bench report` of its JSON are the same page and
// a peer's report (whose fields may be null) draws the same way
// (HtmlModel.cpp). Charts are inline SVG (HtmlCharts.cpp, drawn with
// HtmlSvg.cpp): no script, no fonts or styles fetched, nothing that needs a
// network. Groups are whatever precision and fusion strings the reports
// hold, in the order they first appear.
//
//===----------------------------------------------------------------------===//

#include "Html.h"
#include "HtmlCharts.h"
#include "HtmlModel.h"
#include "HtmlSvg.h"
#include "Json.h"
#include "Stats.h"

#include <algorithm>
#include <charconv>
#include <iomanip>
#include <sstream>
#include <optional>
#include <set>

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

namespace json = llvm::json;
using namespace html;

namespace {

/// The other processes' load on the host during the repeats, flagged where
/// it changed (HostLoad.h): a cell of the summary table.
std::string hostLoadCell(const json::Object &r) {
  const json::Object *load = r.getObject("host_load_percent");
  std::optional<double> min = load ? load->getNumber("min") : std::nullopt,
                        max = load ? load->getNumber("max") : std::nullopt;
  if (!min || !max)
    return "<td>–</td>";
  bool varied = r.getBoolean("host_load_varied").value_or(false);
  return std::string(varied ? "<td class=\"t flag\">" : "<td>") + shortNumber(*min) + "–" +
         shortNumber(*max) + "%" + (varied ? " varied" : "") + "</td>";
}

void writeSummary(std::ostream &os, const Page &page) {
  // A compile-only page has no timings: their columns are left out.
  bool timed = std::any_of(page.entries.begin(), page.entries.end(),
                           [](const Entry &e) { return e.sps.has_value(); });
  // MFU needs a peak (--gpu or --peak-tflops): without any, no columns.
  bool peaks = std::any_of(page.entries.begin(), page.entries.end(), [](const Entry &e) {
    return e.r->getNumber("peak_tflops").has_value();
  });
  os << "<section id=\"summary\"><h2>Configurations</h2>\n<div class=\"scroll\"><table "
        "class=\"numbers\" id=\"summary-table\"><tr><th>model</th><th>backend</th>"
        "<th>precision</th><th>fusion</th><th>GPUs</th><th>batch</th>";
  if (timed)
    os << "<th>samples/s</th><th>CI</th><th>speed-up vs none</th><th>min</th><th>max</th>"
          "<th>step ms</th>";
  os << "<th>kernels</th><th>bytes/step</th>";
  if (timed)
    os << "<th>TFLOP/s</th>" << (peaks ? "<th>MFU</th><th>peak TFLOP/s</th>" : "")
       << "<th>host load</th>";
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
    os << "<tr data-config=\"" << e.id << "\"><td class=\"t\">" << escape(e.model)
       << "</td><td class=\"t\">" << escape(e.backend) << "</td><td class=\"t\">"
       << escape(e.precision) << "</td><td class=\"t\">" << escape(e.fusion) << "</td><td>"
       << e.gpus << "</td><td>" << (e.batch ? std::to_string(*e.batch) : "–") << "</td>";
    if (timed) {
      std::string speedup = e.fusion == "none" && e.sps ? "base" : "–";
      if (std::optional<Speedup> s = speedupOverNone(page, e)) {
        std::ostringstream cell;
        cell << std::fixed << std::setprecision(2) << s->estimate << "x";
        if (s->verdict == verdictName(Verdict::kNoDifference))
          cell << " n.s.";
        speedup = cell.str();
      }
      os << "<td>" << num(e.sps) << "</td><td>"
         << (e.ciLow && e.ciHigh ? num(e.ciLow) + "–" + num(e.ciHigh) : std::string("–"))
         << "</td><td>" << speedup << "</td><td>" << num(e.spsMin) << "</td><td>"
         << num(e.spsMax) << "</td><td>"
         << num(ms ? ms->getNumber("median") : std::nullopt) << "</td>";
    }
    os << "<td>" << num(e.kernels) << "</td><td>"
       << (e.bytes ? shortNumber(*e.bytes / unit) + " " + unitName : "–") << "</td>";
    if (timed) {
      os << "<td>" << num(e.r->getNumber("achieved_tflops")) << "</td>";
      if (peaks)
        os << "<td>" << (mfu ? shortNumber(100 * *mfu) + "%" : "–")
           << "</td><td class=\"t w\">" << escape(peakText) << "</td>";
      os << hostLoadCell(*e.r);
    }
    if (page.sources.size() > 1)
      os << "<td class=\"t w\">" << escape(e.source) << "</td>";
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
  os << "<section id=\"figures\"><h2>Every figure of the reports</h2>\n<p>Every field "
        "of every configuration's JSON, as it holds it; the per-launch profile and the "
        "loss trajectory are in their charts' CSV.</p>\n";
  html::writeFiguresTable(os, columns);
  os << "</section>\n";
}

/// The page's style; the charts' own is HtmlSvg.cpp's kSvgStyle.
const char *const kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 color:#222;margin:24px auto;max-width:1240px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;
 border-bottom:1px solid #ddd;padding-bottom:3px}
p.meta,figcaption,p.absent{color:#555}figure{margin:12px 0 20px}
figcaption{font-weight:600;margin-bottom:4px}
p.absent{background:#f6f6f6;border-left:3px solid #bbb;padding:8px 12px}
p.downloads{margin:2px 0 0;font-size:12px;color:#555}
svg.chart{display:block;max-width:100%;height:auto}
table.numbers{border-collapse:collapse;font-size:12px;margin:8px 0}
table.numbers th,table.numbers td{border:1px solid #ddd;padding:3px 7px;text-align:right;
 white-space:nowrap}
table.numbers th{background:#f4f4f4;text-align:left;font-weight:600}
table.numbers td.null{color:#999}table.numbers td.t{text-align:left}
table.numbers td.w{white-space:normal;min-width:90px}
table.numbers td.text{white-space:normal;overflow-wrap:anywhere;text-align:left;
 min-width:12em;max-width:24em}
td.flag{color:#b00020;font-weight:bold}div.scroll{overflow-x:auto;max-width:100%}
)";


} // namespace

void writeHtml(std::ostream &os, const std::vector<ReportSource> &sources) {
  Page page;
  for (const ReportSource &s : sources) {
    page.sources.push_back(s.label);
    for (const json::Object &r : s.results)
      page.entries.push_back(makeEntry(r, s.label, page.entries.size()));
  }
  // The strategies' colours: `none` first wherever it is, so that it keeps
  // one colour from page to page.
  for (const Entry &e : page.entries)
    if (e.fusion == "none")
      page.fusions(e.fusion);
  for (const Entry &e : page.entries) {
    page.models(e.model);
    page.fusions(e.fusion);
    page.precisions(e.precision);
  }
  std::string models;
  for (const std::string &m : page.models.values)
    models += (models.empty() ? "" : ", ") + m;
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<title>dlc-bench report: "
     << escape(models) << "</title><style>" << kStyle << kSvgStyle
     << "</style></head>\n<body>\n"
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
  for (const Entry &e : page.entries)
    if (std::optional<llvm::StringRef> statistics = e.r->getString("statistics"))
      methods.insert(statistics->str());
  for (const Entry &e : page.entries)
    if (e.r->getString("timing_order").value_or("") == "interleaved")
      methods.insert("configurations timed in interleaved rounds, one repeat of each per "
                     "round, so that drift on the host falls on all alike");
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
  writeSpeedups(os, page);
  writeScaling(os, page);
  writeProfile(os, page);
  writeLosses(os, page);
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

} // namespace dlc::bench
