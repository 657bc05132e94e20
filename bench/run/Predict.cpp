//===- Predict.cpp - dlc-bench --predict ----------------------------------===//

#include "Predict.h"

#include "ProfileCheck.h"

#include "dlc/runtime/PlanSummary.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

namespace dlc::bench {

namespace rp = rt::perf;

namespace {

std::string key(const PredictInput &i) {
  return i.model + "|" + i.precision + "|" + i.fusion + "|" + i.layout + "|" +
         std::to_string(i.batch);
}

double computeSum(const std::vector<rp::SimLaunch> &launches) {
  double sum = 0;
  for (const rp::SimLaunch &l : launches)
    if (!l.isAllReduce())
      sum += l.seconds;
  return sum;
}

/// The data-parallel step of `in` on `in.gpus` of `o.gpu`, its compute
/// launches scaled by `scale`, into `cluster` and `timeline`.
bool simulate(const PredictInput &in, const PredictOptions &o, double scale,
              rp::Cluster &cluster, rp::StepTimeline &timeline,
              std::vector<rp::SimLaunch> &launches, std::string &error) {
  if (!makeCluster(*o.gpu, *o.network, in.gpus, o.gpusPerNode, cluster, error))
    return false;
  rp::SimOptions sim;
  sim.overlap = o.overlap;
  sim.algorithm = o.algorithm;
  sim.rankSlowdown = 1 + o.rankVariation * rp::expectedMaxOfNormals(in.gpus);
  launches = rp::simLaunches(in.launches, deviceSpecOf(*o.gpu), o.params, o.tf32, scale);
  timeline = rp::simulateStep(launches, cluster, sim);
  return true;
}

} // namespace

bool predictSweep(const std::vector<PredictInput> &inputs, const PredictOptions &o,
                  std::vector<Prediction> &predictions, std::string &error) {
  rp::DeviceSpec device = deviceSpecOf(*o.gpu);
  // The one-GPU step of each configuration: the baseline, and the scale
  // that makes it the measured one.
  std::map<std::string, double> oneGpuSeconds, scales;
  for (const PredictInput &in : inputs) {
    if (in.gpus != 1)
      continue;
    double predicted =
        computeSum(rp::simLaunches(in.launches, device, o.params, o.tf32));
    double scale = o.measuredStepMs ? *o.measuredStepMs / 1e3 / predicted : 1;
    scales[key(in)] = scale;
    oneGpuSeconds[key(in)] = predicted * scale;
  }
  for (const PredictInput &in : inputs) {
    auto base = oneGpuSeconds.find(key(in));
    if (base == oneGpuSeconds.end()) {
      error = "no one-GPU configuration to predict " + in.model + " " + in.precision + " " +
              in.fusion + " against";
      return false;
    }
    rp::Cluster cluster;
    rp::StepTimeline timeline;
    std::vector<rp::SimLaunch> launches;
    if (!simulate(in, o, scales[key(in)], cluster, timeline, launches, error))
      return false;
    Prediction p;
    p.model = in.model;
    p.precision = in.precision;
    p.fusion = in.fusion;
    p.layout = in.layout;
    p.batch = in.batch;
    p.gpus = in.gpus;
    p.nodes = cluster.nodes;
    p.timeline = std::move(timeline);
    p.stepMs = p.timeline.stepSeconds * 1e3;
    p.computeMs = p.timeline.computeSeconds * 1e3;
    p.commMs = p.timeline.commSeconds * 1e3;
    p.exposedCommMs = p.timeline.exposedCommSeconds * 1e3;
    p.samplesPerSec = p.stepMs > 0 ? static_cast<double>(in.batch * in.gpus) / (p.stepMs / 1e3) : 0;
    p.efficiency = rp::scalingEfficiency(base->second, p.timeline.stepSeconds);
    p.speedUp = p.efficiency * static_cast<double>(in.gpus);
    p.allExposedEfficiency = rp::scalingEfficiency(
        base->second, p.timeline.computeSeconds + p.timeline.commSeconds);
    for (const rp::LaunchCost &l : in.launches)
      if (l.allReduceBytes >= 0) {
        ++p.allReduces;
        p.allReduceBytes += l.allReduceBytes;
      }
    if (p.timeline.exposedBy >= 0) {
      const rp::TimelineSpan &s = p.timeline.comm[p.timeline.exposedBy];
      p.exposedBucket = p.timeline.exposedBy;
      p.exposedBucketBytes = launches[s.launch].allReduceBytes;
      p.exposedBucketMs = s.exposed * 1e3;
    }
    std::vector<PredictedLaunch> all;
    for (size_t i = 0; i < in.launches.size(); ++i)
      if (!launches[i].isAllReduce())
        all.push_back({in.launches[i].label, in.launches[i].kind, in.launches[i].path,
                       launches[i].seconds * 1e3});
    std::stable_sort(all.begin(), all.end(), [](const PredictedLaunch &a, const PredictedLaunch &b) {
      return a.ms > b.ms;
    });
    all.resize(std::min<size_t>(all.size(), static_cast<size_t>(std::max(0, o.topLaunches))));
    p.top = std::move(all);
    predictions.push_back(std::move(p));
  }
  return true;
}

namespace {

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    out += c;
  }
  return out + "\"";
}

std::string html(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

std::string header(const PredictOptions &o) {
  std::ostringstream s;
  s << "predicted on " << o.gpu->name << ", network " << o.network->name << " ("
    << o.gpusPerNode << " GPUs a node), " << rp::algorithmName(o.algorithm) << " all-reduce"
    << (o.overlap ? ", overlapped" : ", in place") << "; compute "
    << (o.measuredStepMs ? "scaled to the measured one-GPU step of " +
                               fixed(*o.measuredStepMs, 3) + " ms"
                         : "from the cost model (" + o.paramsSource + ")");
  return s.str();
}

const char *kColumns[] = {"model",           "precision",       "fusion",
                          "layout",          "batch",           "gpus",
                          "nodes",           "step_ms",         "samples_per_sec",
                          "speed_up",        "efficiency",      "comm_ms",
                          "exposed_comm_ms", "all_reduces",     "all_reduce_bytes",
                          "exposed_by_bucket", "exposed_bucket_bytes", "exposed_bucket_ms"};

std::vector<std::string> cells(const Prediction &p) {
  return {p.model,
          p.precision,
          p.fusion,
          p.layout,
          std::to_string(p.batch),
          std::to_string(p.gpus),
          std::to_string(p.nodes),
          fixed(p.stepMs, 3),
          fixed(p.samplesPerSec, 1),
          fixed(p.speedUp, 3),
          fixed(p.efficiency, 3),
          fixed(p.commMs, 3),
          fixed(p.exposedCommMs, 3),
          std::to_string(p.allReduces),
          fixed(p.allReduceBytes, 0),
          std::to_string(p.exposedBucket),
          fixed(p.exposedBucketBytes, 0),
          fixed(p.exposedBucketMs, 3)};
}

/// "bucket 5 of 6 (24.9 MB): 3.120 ms", or "-" when nothing is exposed.
std::string exposingBucket(const Prediction &p) {
  if (p.exposedBucket < 0)
    return "-";
  return "bucket " + std::to_string(p.exposedBucket) + " of " + std::to_string(p.allReduces) +
         " (" + fixed(p.exposedBucketBytes / 1e6, 1) + " MB): " + fixed(p.exposedBucketMs, 3) +
         " ms";
}

std::string topList(const Prediction &p, const std::string &separator) {
  std::string out;
  for (const PredictedLaunch &l : p.top)
    out += (out.empty() ? "" : separator) + fixed(l.ms, 3) + " ms " + l.path + " " + l.label;
  return out;
}

/// The timeline of one prediction as SVG: the step's stream above, the
/// all-reduce stream below.
void writeTimelineSvg(std::ostream &os, const Prediction &p) {
  constexpr double kWidth = 900, kRow = 22;
  double scale = p.timeline.stepSeconds > 0 ? kWidth / p.timeline.stepSeconds : 0;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth + 120 << "\" height=\""
     << 3 * kRow + 20 << "\">\n"
     << "<text x=\"0\" y=\"15\" font-size=\"12\">compute</text>\n"
     << "<text x=\"0\" y=\"" << kRow + 15 << "\" font-size=\"12\">all-reduce</text>\n";
  for (const rp::TimelineSpan &s : p.timeline.compute)
    os << "<rect x=\"" << 110 + s.start * scale << "\" y=\"2\" width=\""
       << std::max(0.5, (s.end - s.start) * scale) << "\" height=\"" << kRow - 4
       << "\" fill=\"#4e79a7\"/>\n";
  // Each bucket's all-reduce: red where the step waited for it, else
  // orange (hidden behind compute), with a thin gap between buckets.
  for (size_t b = 0; b < p.timeline.comm.size(); ++b) {
    const rp::TimelineSpan &s = p.timeline.comm[b];
    os << "<rect x=\"" << 110 + s.start * scale << "\" y=\"" << kRow + 2 << "\" width=\""
       << std::max(0.5, (s.end - s.start) * scale - 0.5) << "\" height=\"" << kRow - 4
       << "\" fill=\"" << (s.exposed > 0 ? "#e15759" : "#f28e2b") << "\"><title>bucket " << b
       << ": " << fixed((s.end - s.start) * 1e3, 3) << " ms, exposed "
       << fixed(s.exposed * 1e3, 3) << " ms</title></rect>\n";
  }
  os << "<text x=\"110\" y=\"" << 2 * kRow + 15 << "\" font-size=\"12\">0 ms</text>\n"
     << "<text x=\"" << 110 + kWidth - 60 << "\" y=\"" << 2 * kRow + 15
     << "\" font-size=\"12\">" << fixed(p.stepMs, 1) << " ms</text>\n</svg>\n";
}

} // namespace

void writePredictions(std::ostream &os, const std::vector<Prediction> &predictions,
                      const PredictOptions &o, Format format) {
  switch (format) {
  case Format::kJson: {
    os << "{\n  \"predicted\": true,\n  \"gpu\": " << jsonString(o.gpu->name)
       << ",\n  \"network\": " << jsonString(o.network->name)
       << ",\n  \"gpus_per_node\": " << o.gpusPerNode << ",\n  \"all_reduce_algorithm\": "
       << jsonString(rp::algorithmName(o.algorithm))
       << ",\n  \"all_reduce_overlap\": " << (o.overlap ? "true" : "false")
       << ",\n  \"measured_step_ms\": "
       << (o.measuredStepMs ? fixed(*o.measuredStepMs, 6) : std::string("null"))
       << ",\n  \"cost_model\": " << jsonString(o.paramsSource)
       << ",\n  \"rank_step_variation\": " << o.rankVariation << ",\n  \"results\": [\n";
    for (size_t i = 0; i < predictions.size(); ++i) {
      const Prediction &p = predictions[i];
      std::vector<std::string> c = cells(p);
      os << "    {";
      for (size_t k = 0; k < c.size(); ++k) {
        bool text = k < 4;
        os << (k ? ", " : "") << "\"" << kColumns[k] << "\": " << (text ? jsonString(c[k]) : c[k]);
      }
      os << ", \"compute_ms\": " << fixed(p.computeMs, 3) << ", \"efficiency_all_exposed\": "
         << fixed(p.allExposedEfficiency, 3) << ",\n     \"top_launches\": [";
      for (size_t k = 0; k < p.top.size(); ++k)
        os << (k ? ", " : "") << "{\"launch\": " << jsonString(p.top[k].label)
           << ", \"path\": " << jsonString(p.top[k].path) << ", \"ms\": " << fixed(p.top[k].ms, 4)
           << "}";
      os << "]}" << (i + 1 < predictions.size() ? "," : "") << "\n";
    }
    os << "  ]\n}\n";
    return;
  }
  case Format::kCsv: {
    for (const char *c : kColumns)
      os << c << ",";
    os << "top_launches\n";
    for (const Prediction &p : predictions) {
      for (const std::string &c : cells(p))
        os << c << ",";
      os << "\"" << topList(p, "; ") << "\"\n";
    }
    return;
  }
  case Format::kMarkdown: {
    os << "Predicted: " << header(o) << ".\n\n|";
    for (const char *c : kColumns)
      os << " " << c << " |";
    os << "\n|";
    for (size_t k = 0; k < std::size(kColumns); ++k)
      os << " --- |";
    os << "\n";
    for (const Prediction &p : predictions) {
      os << "|";
      for (const std::string &c : cells(p))
        os << " " << c << " |";
      os << "\n";
    }
    os << "\nTop launches by predicted time:\n\n";
    for (const Prediction &p : predictions)
      if (p.gpus == 1) {
        os << "- " << p.model << " " << p.precision << " " << p.fusion << ", batch " << p.batch
           << ":\n";
        for (const PredictedLaunch &l : p.top)
          os << "  - " << fixed(l.ms, 3) << " ms `" << l.path << "` " << l.label << "\n";
      }
    return;
  }
  case Format::kHtml: {
    os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>dlc-bench --predict"
       << "</title><style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right}"
       << "</style></head><body>\n<h1>Predicted step time</h1>\n<p>" << html(header(o))
       << "</p>\n<table>\n<tr>";
    for (const char *c : kColumns)
      os << "<th>" << c << "</th>";
    os << "</tr>\n";
    for (const Prediction &p : predictions) {
      os << "<tr>";
      for (const std::string &c : cells(p))
        os << "<td>" << html(c) << "</td>";
      os << "</tr>\n";
    }
    os << "</table>\n";
    for (const Prediction &p : predictions) {
      os << "<h2>" << html(p.model + " " + p.precision + " " + p.fusion + ", batch " +
                           std::to_string(p.batch) + ", " + std::to_string(p.gpus) + " GPUs")
         << "</h2>\n<p>predicted timeline: step " << fixed(p.stepMs, 3) << " ms, exposed "
         << "communication " << fixed(p.exposedCommMs, 3) << " ms, most of it by "
         << html(exposingBucket(p)) << "</p>\n";
      writeTimelineSvg(os, p);
      os << "<ol>\n";
      for (const PredictedLaunch &l : p.top)
        os << "<li>" << fixed(l.ms, 3) << " ms " << html(l.path + " " + l.label) << "</li>\n";
      os << "</ol>\n";
    }
    os << "</body></html>\n";
    return;
  }
  case Format::kTable:
    break;
  }
  os << header(o) << "\n";
  os << std::left << std::setw(14) << "model" << std::setw(10) << "precision" << std::setw(8)
     << "fusion" << std::right << std::setw(7) << "batch" << std::setw(6) << "gpus"
     << std::setw(6) << "nodes" << std::setw(12) << "step ms" << std::setw(12) << "samples/s"
     << std::setw(10) << "speed-up" << std::setw(11) << "efficiency" << std::setw(10)
     << "comm ms" << std::setw(13) << "exposed ms" << "  exposed by\n";
  for (const Prediction &p : predictions)
    os << std::left << std::setw(14) << p.model << std::setw(10) << p.precision << std::setw(8)
       << p.fusion << std::right << std::setw(7) << p.batch << std::setw(6) << p.gpus
       << std::setw(6) << p.nodes << std::setw(12) << fixed(p.stepMs, 3) << std::setw(12)
       << fixed(p.samplesPerSec, 1) << std::setw(10) << fixed(p.speedUp, 2) << std::setw(11)
       << fixed(p.efficiency, 3) << std::setw(10) << fixed(p.commMs, 3) << std::setw(13)
       << fixed(p.exposedCommMs, 3) << "  " << exposingBucket(p) << "\n";
  os << "top launches by predicted time (one GPU):\n";
  for (const Prediction &p : predictions)
    if (p.gpus == 1) {
      os << "  " << p.model << " " << p.precision << " " << p.fusion << ", batch " << p.batch
         << ":\n";
      for (const PredictedLaunch &l : p.top)
        os << "    " << std::setw(10) << fixed(l.ms, 3) << " ms  " << l.path << "  " << l.label
           << "\n";
    }
}

std::string predictedStepHint(const rt::Plan &plan) {
  PredictOptions o;
  o.gpu = findGpu(kDefaultPredictGpu);
  o.network = findNetwork(kDefaultPredictNetwork);
  if (!o.gpu || !o.network)
    return "";
  // As --predict reads it: the GPU's calibration where there is one.
  if (std::string file = calibrationFileFor(o.gpu->name); !file.empty())
    if (!rp::readCostParams(file, o.params).isOk())
      return "";
  PredictInput in;
  in.gpus = rt::planRanks(plan);
  in.launches = rp::planLaunchCosts(plan);
  rp::Cluster cluster;
  rp::StepTimeline timeline;
  std::vector<rp::SimLaunch> launches;
  std::string error;
  if (!simulate(in, o, 1, cluster, timeline, launches, error) || timeline.stepSeconds <= 0)
    return "";
  double ms = timeline.stepSeconds * 1e3;
  std::ostringstream os;
  os << "--predict --gpu " << o.gpu->name << " answers for the GPU without one: a step of "
     << std::fixed << std::setprecision(ms < 1 ? 3 : ms < 10 ? 2 : ms < 100 ? 1 : 0) << ms << " ms on "
     << (in.gpus == 1 ? std::string("one ") : std::to_string(in.gpus) + " x ") << o.gpu->name
     << ", predicted";
  return os.str();
}

} // namespace dlc::bench
