//===- CalibrateCommand.cpp - dlc-bench calibrate: fit the cost model -----===//
//
// A profile (bench/calibration/profile_to_json.py writes them from the text
// --profile prints, and from its JSON report) holds a measured
// configuration's device time by launch kind and path, or launch by launch,
// and its step time. Each configuration is compiled again here for the CUDA
// backend, its launches grouped the same way, and the parameters chosen to
// minimize, over every profile, the absolute log error of each kind's time
// (of each launch's, where the profile has them), weighted by its share of
// the profile, plus that of the whole step: absolute, so that one kind no
// roofline explains (an atomic scatter) does not drag every parameter
// toward it. The fit is coordinate descent in log space, each parameter
// inside its physical range; a parameter no launch of the data depends on
// keeps its default.
//
//===----------------------------------------------------------------------===//

#include "CalibrateCommand.h"

#include "GpuPeaks.h"
#include "Predict.h"

#include "dlc/InitAll.h"
#include "dlc/Pipelines/Pipelines.h"
#include "dlc/Target/Plan/TrainToPlan.h"
#include "dlc/runtime/perf/CostModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>

namespace dlc::bench {

namespace rp = rt::perf;

namespace {

/// One of the slowest launches --profile lists: its device-launch index,
/// its label as the run printed it, and its ms per step.
struct SlowLaunch {
  int64_t launch = 0;
  std::string label;
  double ms = 0;
};

/// One launch's measured time, where the profile has every launch's.
struct MeasuredLaunch {
  int64_t launch = 0;
  std::string key; // "kind [path]"
  double ms = 0;
};

struct Profile {
  std::string path, modelFile, precision, fusion, layout, gpu;
  int64_t batch = 0;
  double stepMs = 0;
  std::map<std::string, double> msByKind; // "kind [path]"
  std::map<std::string, int64_t> launchesByKind; // as the run counted them
  std::vector<MeasuredLaunch> measured;   // empty: by kind only
  std::vector<SlowLaunch> slowest;
  std::vector<rp::LaunchCost> launches;
  rp::DeviceSpec device;
};

std::string kindKey(const std::string &kind, const std::string &path) {
  return kind + " [" + path + "]";
}

bool readProfile(const std::string &path, Profile &p, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = "cannot open " + path;
    return false;
  }
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error = path + ": " + llvm::toString(json.takeError());
    return false;
  }
  llvm::json::Object *o = json->getAsObject();
  if (!o) {
    error = path + ": not a JSON object";
    return false;
  }
  p.path = path;
  p.modelFile = o->getString("model_file").value_or("").str();
  p.precision = o->getString("precision").value_or("fp32").str();
  p.fusion = o->getString("fusion").value_or("none").str();
  p.layout = o->getString("layout").value_or("auto").str();
  p.gpu = o->getString("gpu").value_or("H100-SXM").str();
  p.batch = o->getInteger("batch").value_or(0);
  p.stepMs = o->getNumber("step_ms").value_or(0);
  if (p.modelFile.empty() || p.batch <= 0 || p.stepMs <= 0) {
    error = path + ": needs model_file, batch and step_ms";
    return false;
  }
  if (llvm::json::Array *kinds = o->getArray("kinds"))
    for (llvm::json::Value &k : *kinds)
      if (llvm::json::Object *ko = k.getAsObject()) {
        std::string key = kindKey(ko->getString("kind").value_or("").str(),
                                  ko->getString("path").value_or("").str());
        p.msByKind[key] += ko->getNumber("ms").value_or(0);
        if (std::optional<int64_t> n = ko->getInteger("launches"))
          p.launchesByKind[key] += *n;
      }
  if (llvm::json::Array *launches = o->getArray("launches")) {
    for (llvm::json::Value &v : *launches) {
      llvm::json::Object *lo = v.getAsObject();
      std::optional<int64_t> index = lo ? lo->getInteger("launch") : std::nullopt;
      std::optional<double> ms = lo ? lo->getNumber("ms") : std::nullopt;
      if (!index || *index < 0 || !ms || !(*ms >= 0)) {
        error = path + ": launches[" + std::to_string(p.measured.size()) +
                "] needs a launch index and its ms";
        return false;
      }
      p.measured.push_back({*index, kindKey(lo->getString("kind").value_or("").str(),
                                            lo->getString("path").value_or("").str()),
                            *ms});
    }
    // The kinds are the launches' sums (--kinds prints them).
    if (p.msByKind.empty())
      for (const MeasuredLaunch &m : p.measured)
        p.msByKind[m.key] += m.ms;
  }
  if (llvm::json::Array *slowest = o->getArray("slowest"))
    for (llvm::json::Value &v : *slowest)
      if (llvm::json::Object *so = v.getAsObject())
        p.slowest.push_back({so->getInteger("launch").value_or(-1),
                             so->getString("label").value_or("").str(),
                             so->getNumber("ms").value_or(0)});
  const GpuPeak *gpu = findGpu(p.gpu);
  if (!gpu) {
    error = path + ": unknown gpu '" + p.gpu + "'";
    return false;
  }
  p.device = deviceSpecOf(*gpu);
  return true;
}

/// Compiles the profile's configuration for one rank of the CUDA backend.
bool compile(Profile &p, std::string &error) {
  std::string file = p.modelFile;
  if (!llvm::sys::path::is_absolute(file) && !std::ifstream(file))
    file = std::string(DLC_SOURCE_DIR) + "/" + file;
  mlir::DialectRegistry registry;
  mlir::dlc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(file, &context);
  if (!module) {
    error = "cannot parse " + file;
    return false;
  }
  mlir::PassManager pm(&context);
  mlir::dlc::TrainStepOptions options;
  options.batch = p.batch;
  options.precision = p.precision;
  options.layout = p.layout;
  options.target = "cuda";
  options.fusion = p.fusion;
  if (mlir::dlc::TrainStepError e; failed(mlir::dlc::buildTrainStepPipeline(pm, options, e))) {
    error = p.path + ": --" + e.option + ": " + e.message;
    return false;
  }
  if (failed(pm.run(*module))) {
    error = "cannot compile " + file;
    return false;
  }
  std::string model = llvm::sys::path::stem(file).str();
  mlir::FailureOr<rt::Plan> plan = mlir::dlc::lowerToPlan(*module, {model, p.precision, p.fusion});
  if (failed(plan)) {
    error = "cannot lower " + file;
    return false;
  }
  p.launches = rp::planLaunchCosts(*plan);
  // Launch by launch, the measured plan must be the one compiled here.
  for (const MeasuredLaunch &m : p.measured) {
    if (m.launch >= static_cast<int64_t>(p.launches.size())) {
      error = p.path + ": launch #" + std::to_string(m.launch) + " measured, but today's plan has " +
              std::to_string(p.launches.size()) + " launches: it changed since the run";
      return false;
    }
    const rp::LaunchCost &l = p.launches[m.launch];
    if (kindKey(l.kind, l.path) != m.key) {
      error = p.path + ": launch #" + std::to_string(m.launch) + " is " + m.key +
              " in the run but " + kindKey(l.kind, l.path) +
              " in today's plan: the plan changed since the run";
      return false;
    }
  }
  return true;
}

/// Where a per-kind profile's launch counts differ from today's plan's:
/// the plan changed since the run, and its kinds are fitted against the
/// times of other kernels. One line naming the first differences ("" when
/// the counts agree or the profile has none). Counts catch a routing
/// change, not a kernel rewritten in place (the first run's BERT softmax).
std::string planDrift(const Profile &p) {
  if (p.launchesByKind.empty() || !p.measured.empty())
    return "";
  std::map<std::string, int64_t> today;
  for (const rp::LaunchCost &l : p.launches)
    if (l.allReduceBytes < 0)
      ++today[kindKey(l.kind, l.path)];
  std::vector<std::string> differences;
  auto note = [&](const std::string &key, int64_t run, int64_t now) {
    if (run != now)
      differences.push_back(key + " " + std::to_string(run) + " -> " + std::to_string(now));
  };
  for (const auto &[key, n] : p.launchesByKind)
    note(key, n, today.count(key) ? today.at(key) : 0);
  for (const auto &[key, n] : today)
    if (!p.launchesByKind.count(key))
      note(key, 0, n);
  if (differences.empty())
    return "";
  std::string text = p.path + ": today's plan is not the one the run profiled (launches by kind, "
                              "run -> today: ";
  for (size_t i = 0; i < differences.size() && i < 3; ++i)
    text += (i ? ", " : "") + differences[i];
  if (differences.size() > 3)
    text += ", and " + std::to_string(differences.size() - 3) + " more";
  return text + "); its kinds are fitted against other kernels' times";
}

/// Predicted ms by "kind [path]" as --profile times them (each launch
/// between CUDA events, without the graph), and the step (a graph replay).
std::map<std::string, double> predictKinds(const Profile &p, const rp::CostParams &params,
                                           double &stepMs) {
  std::map<std::string, double> ms;
  stepMs = 0;
  for (const rp::LaunchCost &l : p.launches) {
    if (l.allReduceBytes < 0)
      ms[kindKey(l.kind, l.path)] += rp::profiledSeconds(l, p.device, params, false) * 1e3;
    stepMs += rp::predictSeconds(l, p.device, params, /*tf32=*/false) * 1e3;
  }
  return ms;
}

double objective(const std::vector<Profile> &profiles, const rp::CostParams &params) {
  double sum = 0;
  for (const Profile &p : profiles) {
    double step = 0;
    std::map<std::string, double> predicted = predictKinds(p, params, step);
    double total = 0;
    for (const auto &[key, ms] : p.msByKind)
      total += ms;
    // Launch by launch where the profile has them: one GEMM's time says
    // what its kind's sum cannot (its size against its latency).
    for (const MeasuredLaunch &m : p.measured) {
      double t = rp::profiledSeconds(p.launches[m.launch], p.device, params, false) * 1e3;
      if (m.ms > 0)
        sum += m.ms / total * std::fabs(std::log(t / m.ms));
    }
    for (const auto &[key, ms] : p.msByKind) {
      if (!p.measured.empty())
        break;
      auto it = predicted.find(key);
      if (it == predicted.end() || it->second <= 0 || ms <= 0)
        continue;
      sum += ms / total * std::fabs(std::log(it->second / ms));
    }
    sum += std::fabs(std::log(step / p.stepMs));
  }
  return sum;
}

/// Each parameter's range: efficiencies are fractions of a peak; a DRAM
/// load's latency is hundreds of nanoseconds on every GPU of the table; a
/// convolution's gradient runs at 0.1-1.5x its forward pass's ceiling (the
/// H100's ResNet-50 data gradients on tensor cores: 1.1x).
constexpr double kLow[] = {0.5e-6, 0.05, 0.01, 0.01,   0.01,   0.01,  0.02, 0.02, 0.01,
                           0.1e-6, 300e-9, 0.3e-6, 0.1e-6, 0.1, 0.1, 0.1, 0.1};
constexpr double kHigh[] = {50e-6, 1.0, 1.0, 1.0,   1.0,     1.0,   1.0, 1.0, 1.0,
                            50e-6, 1500e-9, 20e-6, 20e-6, 1.5, 1.5, 1.5, 1.5};
static_assert(std::size(kLow) == std::size(kHigh));

/// A parameter's index in CostParams::values().
size_t paramIndex(const std::string &name) {
  const std::vector<std::string> &names = rp::CostParams::names();
  return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

rp::CostParams fit(const std::vector<Profile> &profiles) {
  const size_t stream = paramIndex("stream_mem_eff");
  const size_t bounded[] = {paramIndex("reduction_mem_eff"), paramIndex("norm_mem_eff"),
                            paramIndex("legacy_norm_mem_eff"), paramIndex("gather_mem_eff")};
  rp::CostParams params;
  std::vector<double> v = params.values();
  double best = objective(profiles, params);
  for (double step : {2.0, 1.4, 1.15, 1.05, 1.01})
    for (int round = 0; round < 30; ++round) {
      bool improved = false;
      for (size_t i = 0; i < v.size(); ++i)
        for (double f : {step, 1 / step}) {
          std::vector<double> trial = v;
          trial[i] = std::clamp(v[i] * f, kLow[i], kHigh[i]);
          if (trial[i] == v[i])
            continue;
          // No access pattern moves bytes faster than a plain stream: the
          // reduction, normalization and gather fractions stay at or under
          // it (an unmeasured one then follows a measured stream down).
          for (size_t k : bounded)
            trial[k] = std::min(trial[k], trial[stream]);
          rp::CostParams t;
          t.setValues(trial);
          double o = objective(profiles, t);
          if (o < best - 1e-12) {
            best = o, v = trial, improved = true;
          }
        }
      if (!improved)
        break;
    }
  params.setValues(v);
  return params;
}

/// Predicted beside measured per launch kind, the largest first, with the
/// kind's access pattern and the fraction of DRAM bandwidth its measured
/// time moves its bytes (passes included) at.
void printKinds(std::ostream &os, const Profile &p, const rp::CostParams &params) {
  double step = 0;
  std::map<std::string, double> predicted = predictKinds(p, params, step);
  std::map<std::string, double> passBytes;
  std::map<std::string, std::string> access;
  for (const rp::LaunchCost &l : p.launches) {
    passBytes[kindKey(l.kind, l.path)] += std::max(l.passBytes, l.bytes);
    access[kindKey(l.kind, l.path)] =
        l.legacyLibraryNorm ? "legacy-norm" : rp::accessName(l.access);
  }
  std::vector<std::pair<double, std::string>> order;
  for (const auto &[key, ms] : p.msByKind)
    order.push_back({ms, key});
  for (const auto &[key, ms] : predicted)
    if (!p.msByKind.count(key))
      order.push_back({0, key});
  std::sort(order.rbegin(), order.rend());
  os << "  " << p.path
     << ": by launch kind, measured / predicted ms, access, DRAM fraction measured\n";
  for (const auto &[ms, key] : order) {
    auto it = predicted.find(key);
    double pr = it == predicted.end() ? 0 : it->second;
    double fraction = ms > 0 ? passBytes[key] / (ms * 1e-3) / p.device.memoryBandwidth : 0;
    os << "    " << std::left << std::setw(44) << key << std::right << std::fixed
       << std::setprecision(3) << std::setw(10) << ms << std::setw(10) << pr << "  "
       << std::left << std::setw(14) << access[key] << std::right << std::setw(7)
       << std::setprecision(3) << fraction << "\n";
  }
  // The launches the run timed one by one: the model's figure for the same
  // launch, found by index and checked by label (a plan of other code
  // numbers its launches otherwise).
  if (!p.slowest.empty())
    os << "    slowest launches, measured / predicted ms:\n";
  for (const SlowLaunch &s : p.slowest) {
    os << "    " << std::right << std::fixed << std::setprecision(3) << std::setw(10) << s.ms;
    // --profile labels a launch with its ops (launchLabelWithOps), the
    // model without them (launchLabel): the latter, less its ")", opens it.
    std::string printed = "launch #" + std::to_string(s.launch) + " (" + s.label + ")";
    if (s.launch < 0 || s.launch >= static_cast<int64_t>(p.launches.size()) ||
        printed.rfind(p.launches[s.launch].label.substr(
                          0, p.launches[s.launch].label.size() - 1), 0) != 0) {
      os << "  (not this plan's launch #" << s.launch << ": " << s.label << ")\n";
      continue;
    }
    const rp::LaunchCost &l = p.launches[s.launch];
    double ms = rp::profiledSeconds(l, p.device, params, /*tf32=*/false) * 1e3;
    os << std::setw(10) << ms << "  #" << s.launch << " " << l.path << " " << s.label << "\n";
  }
}

/// Every launch of the plan, measured (where the profile has it: "-"
/// otherwise) and predicted ms as --profile times it (CUDA events around
/// each launch).
void printLaunches(std::ostream &os, const Profile &p, const rp::CostParams &params) {
  std::map<int64_t, double> measured;
  for (const MeasuredLaunch &m : p.measured)
    measured[m.launch] = m.ms;
  os << "  " << p.path << ": by launch, measured / predicted ms\n";
  for (const rp::LaunchCost &l : p.launches) {
    if (l.allReduceBytes >= 0)
      continue;
    double ms = rp::profiledSeconds(l, p.device, params, /*tf32=*/false) * 1e3;
    auto it = measured.find(l.index);
    os << "    #" << std::left << std::setw(6) << l.index << std::setw(44)
       << kindKey(l.kind, l.path) << std::right << std::fixed << std::setprecision(4);
    if (it == measured.end())
      os << std::setw(10) << "-";
    else
      os << std::setw(10) << it->second;
    os << std::setw(10) << ms << "\n";
  }
}

void printSteps(std::ostream &os, const char *title, const std::vector<Profile> &profiles,
                const rp::CostParams &params) {
  os << title << "\n"
     << std::left << std::setw(46) << "profile" << std::right << std::setw(12) << "measured ms"
     << std::setw(13) << "predicted ms" << std::setw(9) << "error" << "\n";
  double worst = 0;
  for (const Profile &p : profiles) {
    double step = 0;
    predictKinds(p, params, step);
    double error = step / p.stepMs - 1;
    worst = std::max(worst, std::fabs(error));
    std::string name = llvm::sys::path::stem(p.modelFile).str() + " " + p.precision + " " +
                       p.fusion + " " + p.layout + " b" + std::to_string(p.batch);
    os << std::left << std::setw(46) << name << std::right << std::fixed << std::setprecision(2)
       << std::setw(12) << p.stepMs << std::setw(13) << step << std::setw(8)
       << std::setprecision(1) << error * 100 << "%\n";
  }
  os << "worst error " << std::fixed << std::setprecision(1) << worst * 100 << "%\n";
}

} // namespace

int runCalibrate(const std::vector<std::string> &args, std::ostream &os, std::ostream &errors) {
  std::string out, paramsFile;
  std::vector<std::string> fitPaths, checkPaths;
  bool check = false, kinds = false, launches = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" && i + 1 < args.size())
      out = args[++i];
    else if (args[i] == "--params" && i + 1 < args.size())
      paramsFile = args[++i];
    else if (args[i] == "--check")
      check = true;
    else if (args[i] == "--kinds")
      kinds = true;
    else if (args[i] == "--launches")
      launches = true;
    else if (args[i] == "--fit")
      check = false;
    else
      (check ? checkPaths : fitPaths).push_back(args[i]);
  }
  if (paramsFile.empty() ? fitPaths.empty() : !fitPaths.empty() || checkPaths.empty()) {
    errors << "usage: dlc-bench calibrate [-o OUT.json] [--kinds] [--launches] PROFILE.json... "
              "[--check PROFILE.json...]\n"
              "       dlc-bench calibrate --params FIT.json [--kinds] [--launches] --check "
              "PROFILE.json...\n";
    return 1;
  }
  if (!paramsFile.empty() && !out.empty()) {
    errors << "dlc-bench calibrate: error: --params evaluates " << paramsFile
           << " and fits nothing: -o has nothing to write\n";
    return 1;
  }
  std::vector<Profile> fitted, checked;
  for (auto [paths, into] : {std::pair{&fitPaths, &fitted}, std::pair{&checkPaths, &checked}})
    for (const std::string &path : *paths) {
      Profile p;
      std::string error;
      if (!readProfile(path, p, error) || !compile(p, error)) {
        errors << "dlc-bench calibrate: error: " << error << "\n";
        return 1;
      }
      if (std::string drift = planDrift(p); !drift.empty())
        errors << "dlc-bench calibrate: warning: " << drift << "\n";
      into->push_back(std::move(p));
    }
  rp::CostParams params;
  if (!paramsFile.empty()) {
    // Out of sample: the parameters a checked-in fit chose, against
    // measurements it never saw.
    if (rt::Status s = rp::readCostParams(paramsFile, params); !s.isOk()) {
      errors << "dlc-bench calibrate: error: " << s.message() << "\n";
      return 1;
    }
    os << "parameters of " << paramsFile << " (not fitted here):\n";
  } else {
    params = fit(fitted);
    os << "fitted on " << fitted.size() << " profiles (objective "
       << objective(fitted, params) << "):\n";
  }
  std::vector<double> v = params.values();
  for (size_t i = 0; i < v.size(); ++i)
    os << "  " << rp::CostParams::names()[i] << " = " << std::setprecision(4)
       << std::defaultfloat << v[i] << "\n";
  if (!fitted.empty())
    printSteps(os, "step time, profiles fitted on:", fitted, params);
  if (!checked.empty())
    printSteps(os, "step time, --check profiles (not fitted on):", checked, params);
  if (kinds)
    for (const std::vector<Profile> *set : {&fitted, &checked})
      for (const Profile &p : *set)
        printKinds(os, p, params);
  if (launches)
    for (const std::vector<Profile> *set : {&fitted, &checked})
      for (const Profile &p : *set)
        printLaunches(os, p, params);
  if (!out.empty()) {
    std::ofstream file(out);
    file << "{\n  \"gpu\": \"" << fitted.front().device.name << "\",\n  \"profiles\": [";
    for (size_t i = 0; i < fitted.size(); ++i)
      file << (i ? ", " : "") << "\"" << fitted[i].path
           << "\"";
    file << "],\n";
    for (size_t i = 0; i < v.size(); ++i)
      file << "  \"" << rp::CostParams::names()[i] << "\": " << std::setprecision(6) << v[i]
           << (i + 1 < v.size() ? ",\n" : "\n");
    file << "}\n";
    if (!file) {
      errors << "dlc-bench calibrate: error: cannot write " << out << "\n";
      return 1;
    }
  }
  return 0;
}

} // namespace dlc::bench
