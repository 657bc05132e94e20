//===- Report.cpp - dlc-bench results and their formats -------------------===//

#include "Report.h"

#include "HostLoad.h"
#include "NonFinite.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>

namespace dlc::bench {

Spread spreadOf(std::vector<double> values) {
  Spread s;
  if (values.empty())
    return s;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min = values.front();
  s.max = values.back();
  return s;
}

double Result::achievedTflops() const {
  double ms = stepMs().median;
  return ms > 0 ? trainFlopsPerStep / (ms * 1e-3) / 1e12 : 0;
}

Spread Result::samplesPerSec() const {
  std::vector<double> v;
  for (const RepeatResult &r : repeatResults)
    v.push_back(r.samplesPerSec);
  return spreadOf(v);
}

Spread Result::stepMs() const {
  std::vector<double> v;
  for (const RepeatResult &r : repeatResults)
    v.push_back(r.stepMs);
  return spreadOf(v);
}

std::vector<double> Result::samplesPerSecValues() const {
  std::vector<double> v;
  for (const RepeatResult &r : repeatResults)
    v.push_back(r.samplesPerSec);
  return v;
}

Interval Result::samplesPerSecInterval() const {
  return bootstrapMedian(samplesPerSecValues(), confidence);
}

std::vector<double> Result::hostLoads() const {
  std::vector<double> v;
  for (const RepeatResult &r : repeatResults)
    v.push_back(r.hostLoadPercent);
  return v;
}

bool Result::hostLoadVaried() const { return bench::hostLoadVaried(hostLoads()); }

Interval Result::stepMsInterval() const {
  std::vector<double> v;
  for (const RepeatResult &r : repeatResults)
    v.push_back(r.stepMs);
  return bootstrapMedian(v, confidence);
}

namespace {

std::string fixed(double value, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << value;
  return os.str();
}

/// Byte counts; a negative count is unknown (a run from a plan file).
std::string mib(int64_t bytes) {
  return bytes < 0 ? "n/a" : fixed(bytes / 1048576.0, 2) + " MiB";
}
std::string bytesOrNull(int64_t bytes) {
  return bytes < 0 ? "null" : std::to_string(bytes);
}
/// A count; a negative one was not taken.
std::string countOrNull(int64_t count) { return bytesOrNull(count); }

/// JSON number: finite values as is, others as null (a NaN loss is data).
std::string num(double value) {
  if (!std::isfinite(value))
    return "null";
  std::ostringstream os;
  os << std::setprecision(9) << value;
  return os.str();
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// [3, 1, 4]: integers as a JSON array.
std::string intListJson(const std::vector<int64_t> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::string countsJson(const std::map<std::string, int64_t> &counts) {
  std::string out = "{";
  for (auto &[kind, count] : counts)
    out += (out.size() > 1 ? ", " : "") + jsonString(kind) + ": " + std::to_string(count);
  return out + "}";
}

/// A JSON string, or null for "" (what a report does not know).
std::string jsonStringOrNull(const std::string &s) { return s.empty() ? "null" : jsonString(s); }

/// The report's "host" object: {"cpu": ..., "cores": ...}.
std::string hostJson(const Provenance &p) {
  return "{\"cpu\": " + jsonStringOrNull(p.hostCpu) +
         ", \"cores\": " + std::to_string(p.hostCores) + "}";
}

/// The provenance fields of a JSON object, each line ending in ",\n".
std::string provenanceJson(const Provenance &p) {
  return "  \"dlc_revision\": " + jsonStringOrNull(p.revision) +
         ",\n  \"date\": " + jsonStringOrNull(p.date) + ",\n  \"host\": " + hostJson(p) +
         ",\n  \"command\": " + jsonStringOrNull(p.command) + ",\n";
}

/// {"low": ..., "high": ..., "level": 0.95}: a median's interval.
std::string intervalJson(const Interval &i) {
  return "{\"low\": " + num(i.low) + ", \"high\": " + num(i.high) +
         ", \"level\": " + num(i.level) + "}";
}

/// {"min": ..., "max": ...} of the repeats' host load, or null.
std::string hostLoadJson(const Result &r) {
  double min = 0, max = 0;
  if (!hostLoadRange(r.hostLoads(), min, max))
    return "null";
  return "{\"min\": " + num(min) + ", \"max\": " + num(max) + "}";
}

/// "3-55% VARIED": the table's host load cell.
std::string hostLoadCell(const Result &r) {
  double min = 0, max = 0;
  if (!hostLoadRange(r.hostLoads(), min, max))
    return "n/a";
  std::ostringstream os;
  os << std::fixed << std::setprecision(0) << min << "-" << max << "%"
     << (r.hostLoadVaried() ? " VARIED" : "");
  return os.str();
}

/// The fields that open every result: what the configuration is.
std::string configurationJson(const Result &r) {
  std::ostringstream os;
  os << "  \"schema\": \"dlc-bench/1\",\n"
     << "  \"model\": " << jsonString(r.model) << ",\n"
     << "  \"backend\": " << jsonString(r.backend) << ",\n"
     << "  \"batch\": " << r.batch << ",\n"
     << "  \"precision\": " << jsonString(r.precision) << ",\n"
     << "  \"fusion\": " << jsonString(r.fusion) << ",\n"
     << "  \"gpus\": " << r.gpus << ",\n";
  return os.str();
}

/// A configuration without figures: what identifies it, and why.
void writeUnfinishedJson(std::ostream &os, const Result &r) {
  os << "{\n"
     << configurationJson(r)
     << "  \"layout\": " << jsonString(r.layout) << ",\n"
     << "  \"status\": " << jsonString(r.status) << ",\n"
     << "  \"samples_per_sec\": null\n"
     << "}\n";
}

void writeJson(std::ostream &os, const Result &r) {
  if (!r.json.empty()) {
    os << r.json;
    return;
  }
  if (!r.status.empty())
    return writeUnfinishedJson(os, r);
  Spread sps = r.samplesPerSec(), ms = r.stepMs();
  Interval spsCi = r.samplesPerSecInterval(), msCi = r.stepMsInterval();
  os << "{\n"
     << configurationJson(r)
     << "  \"threads\": " << r.threads << ",\n"
     << "  \"optimizer\": " << jsonString(r.optimizer) << ",\n"
     << "  \"layout\": " << jsonString(r.layout) << ",\n"
     << "  \"seed\": " << r.seed << ",\n"
     << provenanceJson(r.provenance)
     << "  \"warmup_steps\": " << r.warmup << ",\n"
     << "  \"timed_steps\": " << r.steps << ",\n"
     << "  \"repeats\": " << r.repeats << ",\n"
     << "  \"samples_per_sec\": {\"median\": " << num(sps.median)
     << ", \"min\": " << num(sps.min) << ", \"max\": " << num(sps.max) << "},\n"
     << "  \"step_ms\": {\"median\": " << num(ms.median) << ", \"min\": "
     << num(ms.min) << ", \"max\": " << num(ms.max) << "},\n"
     << "  \"samples_per_sec_ci\": " << intervalJson(spsCi) << ",\n"
     << "  \"step_ms_ci\": " << intervalJson(msCi) << ",\n"
     << "  \"statistics\": " << jsonString(intervalMethod(r.confidence)) << ",\n"
     << "  \"timing_order\": " << jsonString(r.timingOrder) << ",\n"
     << "  \"host_load_percent\": " << hostLoadJson(r) << ",\n"
     << "  \"host_load_varied\": " << (r.hostLoadVaried() ? "true" : "false") << ",\n"
     << "  \"loss\": {\"first\": "
     << num(r.repeatResults.empty() ? NAN : r.repeatResults.front().lossFirst)
     << ", \"last\": "
     << num(r.repeatResults.empty() ? NAN : r.repeatResults.front().lossLast) << "},\n"
     << "  \"loss_finite\": " << (lossFinite(r) ? "true" : "false") << ",\n"
     << "  \"kernels_per_step\": " << r.kernelsPerStep << ",\n"
     << "  \"device_launches\": " << countOrNull(r.deviceLaunches) << ",\n"
     << "  \"launches_per_step\": " << countOrNull(r.launchesPerStep) << ",\n"
     << "  \"memory_bytes_per_step\": " << r.memoryBytesPerStep << ",\n"
     << "  \"all_reduces_per_step\": " << r.allReducesPerStep << ",\n"
     << "  \"all_reduce_bytes_per_step\": " << r.allReduceBytesPerStep << ",\n"
     << "  \"host_cpu_utilization_percent\": "
     << (r.hostCpuUtilization >= 0 ? num(r.hostCpuUtilization) : "null") << ",\n"
     << "  \"all_reduce_overlap\": " << (r.allReduceOverlap ? "true" : "false") << ",\n"
     << "  \"all_reduce_dtype\": "
     << (r.allReduceDtype.empty() ? "null" : jsonString(r.allReduceDtype)) << ",\n"
     << "  \"fused_groups\": " << countsJson(r.fusedGroups) << ",\n"
     << "  \"kernels_by_kind\": " << countsJson(r.kernelsByKind) << ",\n";
  if (!r.launchesByPath.empty())
    os << "  \"launches_by_path\": " << countsJson(r.launchesByPath) << ",\n"
       << "  \"device_bytes_per_step\": " << r.deviceMemoryBytesPerStep << ",\n";
  if (!r.cpuBackendNote.empty())
    os << "  \"cpu_backend\": " << jsonString(r.cpuBackendNote) << ",\n"
       << "  \"host_compile_seconds\": " << r.hostCompileSeconds << ",\n";
  if (r.backend == "cuda")
    os << "  \"device\": " << jsonString(r.device) << ",\n"
       << "  \"cuda_graph\": " << (r.cudaGraph ? "true" : "false") << ",\n"
       << "  \"cuda_graph_note\": " << jsonString(r.cudaGraphNote) << ",\n"
       << "  \"tf32\": " << (r.tf32 ? "true" : "false") << ",\n"
       << "  \"gpu_utilization_percent\": "
       << (r.gpuSamples ? num(r.gpuUtilization) : "null") << ",\n"
       << "  \"gpu_memory_used_bytes\": "
       << (r.gpuSamples ? std::to_string(r.gpuMemoryUsedBytes) : "null") << ",\n"
       << "  \"gpu_usage_note\": " << jsonString(r.gpuUsageNote) << ",\n";
  os << "  \"achieved_tflops\": " << num(r.achievedTflops()) << ",\n"
     << "  \"peak_tflops\": " << (r.peakTflops > 0 ? num(r.peakTflops) : "null") << ",\n"
     << "  \"mfu\": "
     << (r.peakTflops > 0 ? num(r.achievedTflops() / r.peakTflops) : "null") << ",\n"
     << "  \"peak_name\": "
     << (r.peakTflops > 0 && !r.peakName.empty() ? jsonString(r.peakName) : "null") << ",\n"
     << "  \"parameters\": " << r.parameters << ",\n"
     << "  \"forward_macs_per_sample\": " << r.forwardMacsPerSample << ",\n"
     << "  \"train_flops_per_step\": " << r.trainFlopsPerStep << ",\n"
     << "  \"peak_arena_bytes\": " << r.peakArenaBytes << ",\n"
     << "  \"total_buffer_bytes\": " << bytesOrNull(r.totalBufferBytes) << ",\n"
     << "  \"live_bytes_lower_bound\": " << bytesOrNull(r.lowerBoundBytes) << ",\n"
     << "  \"padding_bytes\": " << bytesOrNull(r.paddingBytes) << ",\n"
     << "  \"compile_ms\": " << num(r.compileMs) << ",\n";
  if (!r.profile.empty()) {
    os << "  \"profile\": [";
    for (size_t i = 0; i < r.profile.size(); ++i) {
      const ProfileEntry &p = r.profile[i];
      os << (i ? ",\n    " : "\n    ") << "{\"launch\": " << p.launch
         << ", \"kind\": " << jsonString(p.kind) << ", \"path\": " << jsonString(p.path)
         << ", \"ms_per_step\": " << num(p.msPerStep) << ", \"bytes\": " << p.bytes
         << ", \"flops\": " << p.flops;
      if (p.predictedMs >= 0)
        os << ", \"predicted_ms\": " << num(p.predictedMs);
      if (p.floorMs >= 0)
        os << ", \"floor_ms\": " << num(p.floorMs);
      os << "}";
    }
    os << "\n  ],\n";
    if (r.profileRoof.bytesPerSecond > 0)
      os << "  \"profile_roof\": {\"bytes_per_second\": " << num(r.profileRoof.bytesPerSecond)
         << ", \"flops_per_second\": " << num(r.profileRoof.flopsPerSecond)
         << ", \"source\": " << jsonString(r.profileRoof.source) << "},\n";
  }
  if (r.lossEvery > 0) {
    os << "  \"loss_every\": " << r.lossEvery << ",\n  \"loss_trajectory\": [";
    for (size_t i = 0; i < r.lossTrajectory.size(); ++i)
      os << (i ? ", " : "") << "{\"step\": " << r.lossTrajectory[i].step
         << ", \"loss\": " << num(r.lossTrajectory[i].loss) << "}";
    os << "],\n";
  }
  os << "  \"repeat_results\": [";
  for (size_t i = 0; i < r.repeatResults.size(); ++i) {
    const RepeatResult &x = r.repeatResults[i];
    os << (i ? ",\n    " : "\n    ") << "{\"samples_per_sec\": "
       << num(x.samplesPerSec) << ", \"step_ms\": " << num(x.stepMs)
       << ", \"loss_first\": " << num(x.lossFirst)
       << ", \"loss_last\": " << num(x.lossLast) << ", \"host_load_percent\": "
       << (x.hostLoadPercent >= 0 ? num(x.hostLoadPercent) : "null") << "}";
  }
  os << "\n  ]\n}\n";
}

/// The columns of the table, CSV and Markdown formats.
/// `withPeak`: a "peak" column (which peak the MFU is against) after MFU.
std::vector<std::pair<std::string, std::string>> columns(const Result &r, bool withPeak,
                                                         Format format) {
  Spread sps = r.samplesPerSec(), ms = r.stepMs();
  Interval ci = r.samplesPerSecInterval();
  float first = r.repeatResults.empty() ? NAN : r.repeatResults.front().lossFirst;
  float last = r.repeatResults.empty() ? NAN : r.repeatResults.front().lossLast;
  std::vector<std::pair<std::string, std::string>> cells = {
          {"model", r.model},
          {"backend", r.backend},
          {"precision", r.precision},
          {"fusion", r.fusion},
          {"gpus", std::to_string(r.gpus)},
          {"batch", std::to_string(r.batch)},
          {"samples/s", fixed(sps.median, 1)},
          {"min", fixed(sps.min, 1)},
          {"max", fixed(sps.max, 1)},
          {"step ms", fixed(ms.median, 3)},
          {"kernels", std::to_string(r.kernelsPerStep)},
          {"GB/step", fixed(r.memoryBytesPerStep / 1e9, 3)},
          {"TFLOP/s", fixed(r.achievedTflops(), 3)},
          {"MFU", r.peakTflops > 0
                      ? fixed(100 * r.achievedTflops() / r.peakTflops, 1) + "%"
                      : "n/a"},
          {"arena", mib(r.peakArenaBytes)},
          {"no reuse", mib(r.totalBufferBytes)},
          {"loss first", fixed(first, 4)},
          {"loss last", fixed(last, 4)}};
  // People read the median's confidence interval; CSV keeps min and max
  // where readers of its columns find them, the interval at the end.
  if (format != Format::kCsv) {
    auto min = std::find_if(cells.begin(), cells.end(),
                            [](auto &c) { return c.first == "min"; });
    min = cells.erase(min, min + 2);
    cells.insert(min, {levelName(r.confidence) + " CI",
                       fixed(ci.low, 1) + "-" + fixed(ci.high, 1)});
  } else {
    cells.push_back({"ci low", fixed(ci.low, 1)});
    cells.push_back({"ci high", fixed(ci.high, 1)});
  }
  // Last, where no reader of the columns before looks: the load others put
  // on the host during the repeats, flagged where it changed.
  if (format != Format::kCsv) {
    cells.push_back({"host load", hostLoadCell(r)});
  } else {
    double min = 0, max = 0;
    bool measured = hostLoadRange(r.hostLoads(), min, max);
    cells.push_back({"host load min", measured ? fixed(min, 1) : "n/a"});
    cells.push_back({"host load max", measured ? fixed(max, 1) : "n/a"});
    cells.push_back({"host load varied", r.hostLoadVaried() ? "yes" : "no"});
  }
  if (withPeak) {
    auto mfu = std::find_if(cells.begin(), cells.end(),
                            [](auto &c) { return c.first == "MFU"; });
    std::ostringstream peak;
    peak << r.peakName << " " << r.peakTflops;
    cells.insert(mfu + 1, {"peak", r.peakTflops > 0 ? peak.str() : "n/a"});
  }
  // No figures: the status where the samples/s go, a dash for the rest.
  if (!r.status.empty()) {
    bool identity = true;
    for (auto &[name, value] : cells) {
      if (name == "samples/s")
        identity = false, value = r.status;
      else if (!identity)
        value = "-";
    }
  }
  return cells;
}

} // namespace

void writeReport(std::ostream &os, const Result &r, Format format) {
  writeReports(os, {r}, format);
}

void writeReports(std::ostream &os, const std::vector<Result> &results,
                  Format format) {
  if (results.empty())
    return;
  if (format == Format::kJson) {
    if (results.size() == 1)
      return writeJson(os, results.front());
    os << "{\n\"schema\": \"dlc-bench/1\",\n\"results\": [\n";
    for (size_t i = 0; i < results.size(); ++i) {
      if (i)
        os << ",\n";
      writeJson(os, results[i]);
    }
    os << "]\n}\n";
    return;
  }
  // Rows of cells; a sweep adds the speed-up over the first configuration
  // of the same model with the same batch, precision and GPU count (the
  // baseline the sweep lists first).
  std::vector<std::vector<std::pair<std::string, std::string>>> rows;
  bool withPeak = std::any_of(results.begin(), results.end(),
                              [](const Result &r) { return r.peakTflops > 0; });
  // A sweep over GPU counts adds each row's speed-up over the same
  // configuration on one GPU and its scaling efficiency (speed-up / GPUs).
  bool gpuSweep = std::any_of(results.begin(), results.end(), [&](const Result &r) {
    return r.gpus != results.front().gpus;
  });
  // A speed-up's cell: the ratio, marked n.s. where the bootstrap interval
  // of the ratio includes 1 (Stats.h); CSV gives the interval and the
  // verdict in columns of their own, at the end.
  bool csv = format == Format::kCsv;
  auto speedupCells = [&](const Result &r, const Result &base, const std::string &name,
                          std::vector<std::pair<std::string, std::string>> &row, size_t at,
                          bool withInterval) {
    if (!r.status.empty() || !base.status.empty()) {
      row.insert(row.begin() + at, {name, "-"});
      if (csv) {
        if (withInterval) {
          row.push_back({name + " low", "-"});
          row.push_back({name + " high", "-"});
        }
        row.push_back({name + " verdict", "-"});
      }
      return;
    }
    Interval ratio = bootstrapRatio(base.samplesPerSecValues(), r.samplesPerSecValues(),
                                    r.confidence);
    bool self = &r == &base;
    std::string verdict = self ? "base" : verdictName(verdictOf(ratio));
    std::string cell = fixed(ratio.estimate, 2) + "x";
    if (!csv && !self && verdictOf(ratio) == Verdict::kNoDifference)
      cell += " n.s.";
    row.insert(row.begin() + at, {name, cell});
    if (csv) {
      if (withInterval) {
        row.push_back({name + " low", fixed(ratio.low, 3)});
        row.push_back({name + " high", fixed(ratio.high, 3)});
      }
      row.push_back({name + " verdict", verdict});
    }
  };
  auto position = [](const std::vector<std::pair<std::string, std::string>> &row,
                      const std::string &name) {
    return static_cast<size_t>(
        std::find_if(row.begin(), row.end(), [&](auto &c) { return c.first == name; }) -
        row.begin());
  };
  for (const Result &r : results) {
    rows.push_back(columns(r, withPeak, format));
    auto &row = rows.back();
    if (results.size() > 1) {
      const Result *base = &r;
      for (const Result &b : results)
        if (b.batch == r.batch && b.precision == r.precision && b.gpus == r.gpus &&
            b.model == r.model) {
          base = &b;
          break;
        }
      speedupCells(r, *base, "speed-up", row, position(row, "step ms"), true);
    }
    if (gpuSweep) {
      const Result *one = nullptr;
      for (const Result &b : results)
        if (b.gpus == 1 && b.batch == r.batch && b.precision == r.precision &&
            b.fusion == r.fusion && b.layout == r.layout && b.model == r.model) {
          one = &b;
          break;
        }
      size_t at = position(row, "step ms");
      std::string scaling = "n/a";
      if (one && one->status.empty() && r.status.empty()) {
        speedupCells(r, *one, "vs 1 GPU", row, at, false);
        double speedup = r.samplesPerSec().median / one->samplesPerSec().median;
        scaling = fixed(100 * speedup / r.gpus, 1) + "%";
      } else {
        row.insert(row.begin() + at, {"vs 1 GPU", "n/a"});
        if (csv)
          row.push_back({"vs 1 GPU verdict", "n/a"});
      }
      row.insert(row.begin() + at + 1, {"scaling", scaling});
    }
  }
  const auto &header = rows.front();
  if (format == Format::kCsv || format == Format::kMarkdown) {
    bool md = format == Format::kMarkdown;
    std::string sep = md ? " | " : ",";
    auto line = [&](auto cell) {
      os << (md ? "| " : "");
      for (size_t i = 0; i < header.size(); ++i)
        os << (i ? sep : "") << cell(i);
      os << (md ? " |" : "") << "\n";
    };
    line([&](size_t i) { return header[i].first; });
    if (md)
      line([](size_t) { return std::string("---"); });
    for (auto &row : rows)
      line([&](size_t i) { return row[i].second; });
    return;
  }
  // Terminal table: widths from the widest cell of each column.
  std::vector<size_t> widths(header.size());
  for (size_t i = 0; i < header.size(); ++i) {
    widths[i] = header[i].first.size();
    for (auto &row : rows)
      widths[i] = std::max(widths[i], row[i].second.size());
  }
  for (size_t i = 0; i < header.size(); ++i)
    os << std::left << std::setw(widths[i] + 2) << header[i].first;
  os << "\n";
  for (auto &row : rows) {
    for (size_t i = 0; i < row.size(); ++i)
      os << std::left << std::setw(widths[i] + 2) << row[i].second;
    os << "\n";
  }
  const Result &r = results.front();
  os << "median of " << r.repeats << " repeats of " << r.steps
     << " timed steps after " << r.warmup << " warm-up steps; "
     << r.threads << " CPU threads"
     << (r.hostCpuUtilization >= 0 ? ", " + fixed(r.hostCpuUtilization, 0) + "% busy"
                                   : std::string())
     << (r.rankProcesses ? " per rank, ranks as " + std::to_string(r.rankProcesses) +
                               " MPI processes"
                         : std::string())
     << "\n" << intervalMethod(r.confidence) << "\n";
  if (std::any_of(results.begin(), results.end(),
                  [](const Result &x) { return x.timingOrder == "interleaved"; })) {
    bool consecutive = std::any_of(results.begin(), results.end(), [](const Result &x) {
      return x.status.empty() && x.timingOrder != "interleaved";
    });
    os << "configurations timed in interleaved rounds (each round one repeat of each, "
          "with its own warm-up), so that drift on the host falls on all alike"
       << (consecutive ? "; data-parallel ones after the rounds, their repeats in a row"
                       : "")
       << "\n";
  }
  if (std::any_of(results.begin(), results.end(),
                  [](const Result &x) { return x.hostLoadVaried(); }))
    os << "host load: other processes' share of the host's CPUs during the timed steps "
          "(/proc/stat less this process); VARIED: repeats more than "
       << kHostLoadChangePoints << " points apart, so their times are suspect\n";
  for (const Result &x : results)
    if (x.layout == "NHWC") {
      os << "convolutions and batch norm in NHWC (--layout; transposes at the layout's "
            "edges are counted as kernels)\n";
      break;
    }
  // Data parallelism: the first multi-rank row of each model.
  bool models = std::any_of(results.begin(), results.end(),
                            [&](const Result &x) { return x.model != r.model; });
  std::set<std::string> described;
  for (const Result &x : results)
    if (x.gpus > 1 && described.insert(x.model).second) {
      os << "data parallel" << (models ? " (" + x.model + ")" : std::string())
         << ": batch is per rank; each rank averages "
         << std::fixed << std::setprecision(1) << x.allReduceBytesPerStep / 1e6
         << " MB of " << x.allReduceDtype << " gradients per step in " << x.allReducesPerStep
         << (x.allReducesPerStep == 1 ? " all-reduce" : " all-reduces") << " (--bucket-mb) with " << intListJson(x.allReduceOverlapKernels)
         << " kernels of room each, "
         << (x.allReduceOverlap ? "overlapping the rest of the backward pass (--no-overlap "
                                  "to compare)"
                                : "each in its place (not overlapped)")
         << "\n";
    }
  // CPU ranks share one machine's cores: their "scaling" is contention.
  for (const Result &x : results)
    if (x.gpus > 1 && x.backend != "cuda") {
      os << "cpu backend: the ranks share this machine's cores with their kernels' "
            "threads, so speed-up over 1 GPU and scaling measure that contention, not "
            "communication; they check the machinery (--backend cuda for GPUs)\n";
      break;
    }
  // The fast CPU backend says how much of the step ran where.
  for (const Result &x : results)
    if (!x.cpuBackendNote.empty())
      os << x.fusion << " batch " << x.batch << ": cpu backend: " << x.cpuBackendNote << "\n";
  // The CUDA backend says how much of the step ran where.
  for (const Result &x : results)
    if (!x.launchesByPath.empty()) {
      os << x.fusion << " batch " << x.batch << ": launches by path:";
      for (auto &[path, count] : x.launchesByPath)
        os << " " << path << " " << count;
      os << "; CUDA graph " << (x.cudaGraph ? "replayed" : "off (" + x.cudaGraphNote + ")")
         << "; fp32 GEMMs and convolutions " << (x.tf32 ? "on TF32" : "in full fp32");
      if (x.gpuSamples)
        os << "; GPU utilization " << std::fixed << std::setprecision(0) << x.gpuUtilization
           << "% and " << std::setprecision(2) << x.gpuMemoryUsedBytes / 1e9
           << " GB in use (NVML, " << x.gpuSamples << " samples)";
      else if (!x.gpuUsageNote.empty())
        os << "; no GPU utilization: " << x.gpuUsageNote;
      os << "\n";
    }
  os << provenanceLine(r.provenance) << "\n";
}

void writeCompileReport(std::ostream &os, const Result &r, Format format) {
  std::vector<std::pair<std::string, std::string>> rows = {
      {"model", r.model},
      {"backend", r.backend},
      {"precision", r.precision},
      {"fusion", r.fusion},
      {"layout", r.layout},
      {"batch", std::to_string(r.batch)},
      {"parameters", std::to_string(r.parameters)},
      {"forward_gmacs_per_sample", fixed(r.forwardMacsPerSample / 1e9, 3)},
      {"train_gflops_per_step", fixed(r.trainFlopsPerStep / 1e9, 3)},
      {"kernels_per_step", std::to_string(r.kernelsPerStep)},
      {"device_launches", countOrNull(r.deviceLaunches)},
      {"memory_bytes_per_step", std::to_string(r.memoryBytesPerStep)},
      {"all_reduces_per_step", std::to_string(r.allReducesPerStep)},
      {"all_reduce_bytes_per_step", std::to_string(r.allReduceBytesPerStep)},
      {"all_reduce_overlap_kernels", intListJson(r.allReduceOverlapKernels)},
      {"fused_groups", countsJson(r.fusedGroups)},
      {"kernels_by_kind", countsJson(r.kernelsByKind)},
      {"peak_arena_bytes", std::to_string(r.peakArenaBytes)},
      {"total_buffer_bytes", bytesOrNull(r.totalBufferBytes)},
      {"padding_bytes", bytesOrNull(r.paddingBytes)},
      {"compile_ms", fixed(r.compileMs, 1)}};
  // What compiled it, when and where (--format json: null where unknown).
  const Provenance &p = r.provenance;
  rows.push_back({"dlc_revision", p.revision});
  rows.push_back({"date", p.date});
  rows.push_back({"host", hostDescription(p.hostCpu, p.hostCores)});
  rows.push_back({"command", p.command});
  // --backend cuda: the launches the CUDA backend would make, by path
  // (LaunchPaths.h: decided from the plan, no GPU needed).
  if (!r.launchesByPath.empty()) {
    int64_t launches = 0;
    for (auto &[path, count] : r.launchesByPath)
      launches += count;
    rows.push_back({"device_launches_per_step", std::to_string(launches)});
    rows.push_back({"launches_by_path", countsJson(r.launchesByPath)});
    rows.push_back({"device_bytes_per_step", std::to_string(r.deviceMemoryBytesPerStep)});
  }
  if (format == Format::kJson) {
    os << "{\n  \"schema\": \"dlc-bench/1\",\n  \"compile_only\": true";
    for (auto &[key, value] : rows)
      os << ",\n  " << jsonString(key) << ": "
         << (key == "host" ? hostJson(p)
             : key == "dlc_revision" || key == "date" || key == "command"
                 ? jsonStringOrNull(value)
             : key == "model" || key == "backend" || key == "precision" || key == "fusion" ||
                     key == "layout"
                 ? jsonString(value)
                 : value);
    os << "\n}\n";
    return;
  }
  size_t width = 0;
  for (auto &[key, value] : rows)
    width = std::max(width, key.size());
  for (auto &[key, value] : rows)
    os << std::left << std::setw(static_cast<int>(width + 2)) << key << value << "\n";
}

} // namespace dlc::bench
