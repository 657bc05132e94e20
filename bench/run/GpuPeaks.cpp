//===- GpuPeaks.cpp - known GPUs' peak TFLOP/s, for MFU -------------------===//
//
// The table and its sources: dlc/runtime/perf/Gpus.h (runtime/src/perf).
//
//===----------------------------------------------------------------------===//

#include "GpuPeaks.h"

#include <cctype>
#include <iomanip>
#include <sstream>

namespace dlc::bench {

namespace {

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

std::string canonicalName(const std::string &name) {
  std::string out;
  for (char c : name)
    if (c != ' ' && c != '-' && c != '_')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const GpuPeak *findGpu(const std::string &name) { return findByName(knownGpus(), name); }

std::string knownGpuNames() { return joinNames(knownGpus()); }

bool choosePeak(const std::string &gpuName, const std::string &precision,
                Fp32Peak fp32, double given, ChosenPeak &peak, std::string &error) {
  peak = ChosenPeak();
  const GpuPeak *gpu = nullptr;
  if (!gpuName.empty()) {
    gpu = findGpu(gpuName);
    if (!gpu) {
      error = "--gpu: unknown GPU '" + gpuName + "'; the table of peaks knows " +
              knownGpuNames() + " (or give the peak with --peak-tflops)";
      return false;
    }
  }
  if (given > 0) {
    peak.tflops = given;
    peak.name = "--peak-tflops";
    return true;
  }
  if (!gpu)
    return true;
  // The tensor-core unit a precision's matmuls and convolutions run on;
  // precision names are matched by their parts, so amp-bf16 or pure-fp16
  // (whatever spelling the precision passes settle on) map as they read.
  std::string p = lower(precision);
  double value = 0;
  std::string kind;
  if (p.find("bf16") != std::string::npos) {
    value = gpu->bf16, kind = "bf16-tensor";
  } else if (p.find("fp16") != std::string::npos || p.rfind("amp", 0) == 0) {
    value = gpu->fp16, kind = "fp16-tensor";
  } else if (p.find("tf32") != std::string::npos ||
             (p == "fp32" && fp32 == Fp32Peak::kTf32)) {
    value = gpu->tf32, kind = "tf32-tensor";
  } else if (p == "fp32") {
    value = gpu->fp32, kind = "fp32";
  } else {
    error = "--gpu: no peak for precision '" + precision +
            "' (fp32, tf32, fp16, bf16 and amp* map to the table); give "
            "--peak-tflops";
    return false;
  }
  if (value <= 0) {
    error = "--gpu " + std::string(gpu->name) + " has no " + kind +
            " units for precision '" + precision + "'; give --peak-tflops";
    return false;
  }
  peak.tflops = value;
  peak.name = std::string(gpu->name) + " " + kind;
  return true;
}

void writeGpuTable(std::ostream &os) {
  os << std::left << std::setw(11) << "gpu" << std::right << std::setw(8) << "fp32"
     << std::setw(8) << "tf32" << std::setw(8) << "fp16" << std::setw(8) << "bf16"
     << std::setw(7) << "mem" << std::setw(5) << "L2" << std::setw(5) << "SMs"
     << std::setw(7) << "nvlink" << std::setw(5) << "pcie"
     << "  product (dense TFLOP/s; memory GB/s; L2 MB; links GB/s each way; - none)\n";
  auto cell = [](double v) {
    std::ostringstream s;
    if (v > 0)
      s << v;
    else
      s << "-";
    return s.str();
  };
  for (const GpuPeak &g : knownGpus())
    os << std::left << std::setw(11) << g.name << std::right << std::setw(8)
       << cell(g.fp32) << std::setw(8) << cell(g.tf32) << std::setw(8) << cell(g.fp16)
       << std::setw(8) << cell(g.bf16) << std::setw(7) << cell(g.memoryGBs) << std::setw(5)
       << cell(g.l2MB) << std::setw(5) << g.sms << std::setw(7) << cell(g.nvlinkGBs)
       << std::setw(5) << cell(g.pcieGBs) << "  " << g.description << "\n";
}

int runGpus(const std::vector<std::string> &args, std::ostream &os,
            std::ostream &errors) {
  if (args.empty()) {
    writeGpuTable(os);
    return 0;
  }
  if (args.size() > 2 || (args.size() == 2 && args[1] != "fp32" && args[1] != "tf32")) {
    errors << "usage: dlc-bench gpus [PRECISION [fp32|tf32]]\n";
    return 1;
  }
  Fp32Peak fp32 = args.size() == 2 && args[1] == "tf32" ? Fp32Peak::kTf32 : Fp32Peak::kFp32;
  for (const GpuPeak &g : knownGpus()) {
    ChosenPeak peak;
    std::string error;
    os << std::left << std::setw(11) << g.name;
    if (choosePeak(g.name, args[0], fp32, 0, peak, error))
      os << peak.name.substr(peak.name.find(' ') + 1) << " " << peak.tflops << "\n";
    else if (error.find("no peak for precision") != std::string::npos) {
      errors << "dlc-bench gpus: error: " << error.substr(error.find("no peak")) << "\n";
      return 1;
    } else
      os << "none: " << error.substr(error.find("has no ") + 4) << "\n";
  }
  return 0;
}

} // namespace dlc::bench
