//===- ProfileCheck.cpp - the cost model beside a GPU run's --profile ----===//

#include "ProfileCheck.h"

#include "GpuPeaks.h"
#include "Predict.h"

#include "dlc/runtime/perf/CostModel.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>

namespace dlc::bench {

namespace fs = std::filesystem;

std::string calibrationFileFor(const std::string &gpuName) {
  std::string own;
  for (char c : gpuName)
    own += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const fs::path &dir : {fs::path("bench/calibration"), fs::path(DLC_CALIBRATION_DIR)})
    for (const std::string &name : {own, std::string("h100")}) {
      std::error_code ec;
      if (!name.empty() && fs::is_regular_file(dir / (name + ".json"), ec))
        return (dir / (name + ".json")).string();
    }
  return "";
}

rt::Status predictLaunches(const rt::Plan &plan, const std::string &gpuName, bool tf32,
                           ModelFigures &figures) {
  figures = {};
  if (gpuName.empty())
    return rt::Status::ok();
  const GpuPeak *gpu = findGpu(gpuName);
  if (!gpu)
    return rt::Status(rt::StatusCode::kInvalidArgument,
                      "--gpu: unknown GPU '" + gpuName + "' (" + knownGpuNames() + ")");
  rt::perf::CostParams params;
  std::string file = calibrationFileFor(gpu->name);
  if (!file.empty())
    if (rt::Status s = rt::perf::readCostParams(file, params); !s.isOk())
      return s;
  rt::perf::DeviceSpec device = deviceSpecOf(*gpu);
  for (const rt::perf::LaunchCost &l : rt::perf::planLaunchCosts(plan))
    figures.msPerLaunch.push_back(rt::perf::profiledSeconds(l, device, params, tf32) * 1e3);
  figures.source =
      (file.empty() ? std::string("the model's defaults") : fs::path(file).filename().string()) +
      ", " + gpu->name;
  return rt::Status::ok();
}

void writeLaunchProfile(std::ostream &os, const std::vector<std::string> &labels,
                        const std::vector<std::string> &paths, const std::vector<double> &ms,
                        int64_t steps, const ModelFigures &model) {
  struct Kind {
    double ms = 0, predicted = 0;
    int64_t launches = 0;
  };
  bool predicted = model.msPerLaunch.size() >= labels.size() && !labels.empty();
  std::map<std::string, Kind> byKind;
  double total = 0, totalPredicted = 0;
  for (size_t i = 0; i < labels.size() && i < paths.size() && i < ms.size(); ++i) {
    // "launch #5 (elewise_act, group 2, ...)": the kind is the first word.
    const std::string &label = labels[i];
    size_t open = label.find('(') + 1;
    std::string kind = label.substr(open, label.find_first_of(",)", open) - open);
    Kind &k = byKind[kind + " [" + paths[i] + "]"];
    k.ms += ms[i];
    ++k.launches;
    total += ms[i];
    if (predicted) {
      k.predicted += model.msPerLaunch[i];
      totalPredicted += model.msPerLaunch[i];
    }
  }
  auto error = [](double p, double m) { return m > 0 ? 100 * (p / m - 1) : 0.0; };
  std::vector<std::pair<double, std::string>> rows;
  for (auto &[kind, k] : byKind)
    rows.push_back({k.ms, kind});
  std::sort(rows.rbegin(), rows.rend());
  os << "device time by launch kind [path] over " << steps
     << " profiled steps (CUDA events around each launch, no graph): " << std::fixed
     << std::setprecision(3) << total << " ms/step\n";
  for (auto &[value, kind] : rows) {
    const Kind &k = byKind[kind];
    os << "  " << std::left << std::setw(44) << kind << std::right << std::setw(10)
       << std::setprecision(3) << value << " ms/step  " << std::setw(5) << std::setprecision(1)
       << (total > 0 ? 100 * value / total : 0.0) << "%  (" << k.launches << " launches)";
    if (predicted)
      os << "  predicted " << std::setprecision(3) << k.predicted << " ms  " << std::showpos
         << std::setprecision(1) << error(k.predicted, value) << "%" << std::noshowpos;
    os << "\n";
  }
  if (predicted)
    os << "cost model (" << model.source << "): " << std::setprecision(3) << totalPredicted
       << " ms/step predicted against " << total << " measured, " << std::showpos
       << std::setprecision(1) << error(totalPredicted, total) << "%" << std::noshowpos
       << " (docs/CostModel.md; dlc-bench calibrate refits from this run's JSON report)\n";
  else if (model.source.empty())
    os << "cost model: not compared (--gpu NAME puts its prediction beside each kind)\n";
  std::vector<size_t> order(labels.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ms[a] > ms[b]; });
  os << "slowest launches:\n";
  for (size_t i = 0; i < std::min<size_t>(10, order.size()); ++i)
    os << "  " << std::setw(9) << std::setprecision(3) << ms[order[i]] << " ms  "
       << paths[order[i]] << "  " << labels[order[i]] << "\n";
}

} // namespace dlc::bench
