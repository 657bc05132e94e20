//===- Roofline.cpp - each profiled launch's floor ------------------------===//

#include "Roofline.h"

#include "GpuPeaks.h"

#include "dlc/runtime/Parallel.h"
#include "dlc/runtime/cpu/Dnnl.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iomanip>
#include <map>
#include <memory>
#include <sstream>

namespace dlc::bench {

std::string tableGpuForDevice(const std::string &deviceName) {
  auto has = [&](const char *s) { return deviceName.find(s) != std::string::npos; };
  if (has("H200"))
    return "H200";
  if (has("H100"))
    return has("PCIe") ? "H100-PCIe" : "H100-SXM";
  if (has("A100"))
    return "A100-SXM";
  if (has("V100"))
    return "V100-SXM2";
  if (has("A10"))
    return "A10";
  if (has("L4"))
    return "L4";
  if (has("4090"))
    return "RTX-4090";
  return "";
}

Roof gpuRoof(const std::string &gpuName, double peakTflops, const std::string &peakName) {
  Roof roof;
  const GpuPeak *gpu = findGpu(gpuName);
  if (!gpu)
    return roof;
  roof.bytesPerSecond = gpu->memoryGBs * 1e9;
  roof.flopsPerSecond = peakTflops * 1e12;
  std::ostringstream os;
  os << gpu->name << ": " << gpu->memoryGBs << " GB/s";
  if (peakTflops > 0)
    os << ", " << peakTflops << " TFLOP/s (" << peakName << ")";
  roof.source = os.str();
  return roof;
}

Roof cudaRoof(const std::string &gpuName, const std::string &deviceName,
              const std::string &precision, bool tf32, double givenTflops) {
  std::string name = gpuName.empty() ? tableGpuForDevice(deviceName) : gpuName;
  if (name.empty())
    return {};
  ChosenPeak peak;
  std::string error;
  if (!choosePeak(name, precision, tf32 ? Fp32Peak::kTf32 : Fp32Peak::kFp32, givenTflops, peak,
                  error))
    peak = {}; // the bandwidth bound alone
  return gpuRoof(name, peak.tflops, peak.name);
}

namespace {

/// Read + write bytes per second of the best of `tries` copies of `bytes`,
/// cut into one contiguous part per thread.
double measureCopyBandwidth(size_t bytes, int tries) {
  std::unique_ptr<char[]> from(new char[bytes]), to(new char[bytes]);
  int parts = std::max(1, rt::cpuThreadCount());
  size_t per = (bytes + parts - 1) / parts;
  auto copy = [&](int p, bool fill) {
    size_t begin = std::min(bytes, p * per), end = std::min(bytes, begin + per);
    if (fill)
      std::memset(from.get() + begin, p + 1, end - begin); // first touch on its thread
    std::memcpy(to.get() + begin, from.get() + begin, end - begin);
  };
  rt::runParts(parts, [&](int p) { copy(p, true); });
  double best = 0;
  for (int t = 0; t < tries; ++t) {
    auto start = std::chrono::steady_clock::now();
    rt::runParts(parts, [&](int p) { copy(p, false); });
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 0)
      best = std::max(best, 2.0 * bytes / seconds);
  }
  return best;
}

} // namespace

Roof hostRoof() {
  static const Roof roof = [] {
    Roof r;
    r.bytesPerSecond = measureCopyBandwidth(size_t(64) << 20, 5);
    r.flopsPerSecond = rt::cpu::dnnlGemmGflops() * 1e9;
    std::ostringstream os;
    os << "this host, measured: " << std::fixed << std::setprecision(1)
       << r.bytesPerSecond / 1e9 << " GB/s (a 64 MiB copy on " << rt::cpuThreadCount()
       << " threads)";
    if (r.flopsPerSecond > 0)
      os << ", " << r.flopsPerSecond / 1e9 << " GFLOP/s (oneDNN's f32 GEMM)";
    r.source = os.str();
    return r;
  }();
  return roof;
}

double floorMs(int64_t bytes, int64_t flops, const Roof &roof) {
  if (roof.bytesPerSecond <= 0)
    return -1;
  double seconds = bytes / roof.bytesPerSecond;
  if (roof.flopsPerSecond > 0)
    seconds = std::max(seconds, flops / roof.flopsPerSecond);
  return seconds * 1e3;
}

void applyFloors(std::vector<ProfileEntry> &entries, const Roof &roof) {
  for (ProfileEntry &e : entries)
    e.floorMs = floorMs(e.bytes, e.flops, roof);
}

void writeFloors(std::ostream &os, const std::vector<ProfileEntry> &entries, const Roof &roof) {
  if (roof.bytesPerSecond <= 0) {
    os << "floors: not known for this device (--gpu NAME takes the table's figures; "
          "dlc-bench gpus lists them)\n";
    return;
  }
  struct Kind {
    double ms = 0, floor = 0;
    int64_t launches = 0;
  };
  std::map<std::string, Kind> byKind;
  double total = 0, totalFloor = 0;
  for (const ProfileEntry &e : entries) {
    Kind &k = byKind[e.kind + " [" + e.path + "]"];
    k.ms += e.msPerStep;
    k.floor += std::max(0.0, e.floorMs);
    ++k.launches;
    total += e.msPerStep;
    totalFloor += std::max(0.0, e.floorMs);
  }
  auto times = [](double ms, double floor) { return floor > 0 ? ms / floor : 0.0; };
  os << std::fixed << std::setprecision(3) << "time against the floor (" << roof.source
     << "): " << total << " ms/step measured, " << totalFloor << " ms floor";
  if (totalFloor > 0)
    os << " (" << std::setprecision(1) << times(total, totalFloor) << "x)";
  os << "\n";
  // The kinds by the time they spend above their floor: where a backend
  // loses the most.
  std::vector<std::pair<double, std::string>> rows;
  for (auto &[kind, k] : byKind)
    rows.push_back({k.ms - k.floor, kind});
  std::sort(rows.rbegin(), rows.rend());
  for (size_t i = 0; i < rows.size() && i < 15; ++i) {
    const Kind &k = byKind[rows[i].second];
    os << "  " << std::left << std::setw(44) << rows[i].second << std::right
       << std::setprecision(3) << std::setw(10) << k.ms << " ms/step  floor " << std::setw(8)
       << k.floor << " ms";
    if (k.floor > 0)
      os << "  " << std::setprecision(1) << std::setw(6) << times(k.ms, k.floor) << "x";
    os << "  (" << k.launches << " launches)\n";
  }
  bool underFloor = false;
  for (auto &[kind, k] : byKind)
    underFloor |= k.floor > 0 && k.ms < k.floor;
  if (underFloor)
    os << "  (under 1x: the launch's data stayed in a cache; the floor is main memory's)\n";
  if (rows.size() > 15)
    os << "  ... " << rows.size() - 15 << " more kinds (the JSON report has every launch)\n";
  std::vector<const ProfileEntry *> order;
  for (const ProfileEntry &e : entries)
    order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const ProfileEntry *a, const ProfileEntry *b) {
    return a->msPerStep - a->floorMs > b->msPerStep - b->floorMs;
  });
  os << "launches furthest above their floor:\n";
  for (size_t i = 0; i < std::min<size_t>(10, order.size()); ++i) {
    const ProfileEntry &e = *order[i];
    os << "  " << std::setprecision(3) << std::setw(9) << e.msPerStep << " ms  floor "
       << std::setw(8) << e.floorMs << " ms";
    if (e.floorMs > 0)
      os << "  " << std::setprecision(1) << std::setw(6) << times(e.msPerStep, e.floorMs) << "x";
    os << "  launch #" << e.launch << " (" << e.kind << ") [" << e.path << "]\n";
  }
}

} // namespace dlc::bench
