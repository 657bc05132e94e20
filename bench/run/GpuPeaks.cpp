//===- GpuPeaks.cpp - known GPUs' peak TFLOP/s, for MFU -------------------===//
//
// Every value is a dense peak: NVIDIA's datasheets quote tensor-core figures
// "with sparsity" (2:4 structured) and note that dense ones are half, so the
// starred datasheet figures are halved here. FP16 and BF16 are the rates
// with FP32 accumulation, the mode training uses (on GeForce parts that is
// half the FP16-accumulate rate the box advertises).
//
//===----------------------------------------------------------------------===//

#include "GpuPeaks.h"

#include <cctype>
#include <iomanip>
#include <sstream>

namespace dlc::bench {

const std::vector<GpuPeak> &knownGpus() {
  static const std::vector<GpuPeak> table = {
      // NVIDIA A100 Tensor Core GPU datasheet (2021), SXM column: FP32 19.5,
      // TF32 Tensor 156 | 312*, BF16 and FP16 Tensor 312 | 624* (* sparsity).
      // Memory: HBM2 1,555 GB/s (40 GB; the 80 GB part 2,039); NVLink 600 GB/s
      // (12 links, both directions); PCIe Gen4 64 GB/s; 108 SMs and 40 MB L2
      // from the NVIDIA A100 Tensor Core GPU Architecture whitepaper.
      {"A100-SXM", "NVIDIA A100 SXM4 40/80 GB", 19.5, 156, 312, 312, 1555, 40, 108, 300, 32, 2048},
      // NVIDIA H100 Tensor Core GPU Architecture whitepaper (v1.0x), table
      // "H100 SXM5": FP32 66.9, TF32 Tensor 494.7, FP16 and BF16 Tensor with
      // FP32 accumulate 989.4 (dense). The H100 datasheet rounds the same
      // parts to 67, 989* and 1,979* with sparsity.
      // Same whitepaper: HBM3 3.35 TB/s, 132 SMs, 50 MB L2, NVLink 900 GB/s
      // (18 links, both directions), PCIe Gen5 128 GB/s.
      {"H100-SXM", "NVIDIA H100 SXM5 80 GB", 66.9, 494.7, 989.4, 989.4, 3350, 50, 132, 450,
       64, 2048},
      // Same whitepaper, table "H100 PCIe": FP32 51.2, TF32 Tensor 378,
      // FP16 and BF16 Tensor 756 (dense); datasheet: 51, 756*, 1,513*.
      // HBM2e 2.0 TB/s, 114 SMs, 50 MB L2, NVLink bridge 600 GB/s, PCIe Gen5.
      {"H100-PCIe", "NVIDIA H100 PCIe 80 GB", 51.2, 378, 756, 756, 2000, 50, 114, 300, 64, 2048},
      // NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM column: FP32
      // 67, TF32 Tensor 989*, BF16 and FP16 Tensor 1,979* (* sparsity),
      // halved. The compute is the H100 SXM5's; only the memory differs.
      // HBM3e 4.8 TB/s, NVLink 900 GB/s, PCIe Gen5 128 GB/s; the H100's die
      // (132 SMs, 50 MB L2).
      {"H200", "NVIDIA H200 SXM 141 GB", 67, 494.5, 989.5, 989.5, 4800, 50, 132, 450, 64, 2048},
      // NVIDIA Tesla V100 GPU datasheet (2020), V100 SXM2 column: single
      // precision 15.7, tensor performance 125 (FP16 inputs, FP32
      // accumulate). Volta has no TF32 and no BF16 units.
      // HBM2 900 GB/s, NVLink 300 GB/s (6 links, both directions), PCIe Gen3
      // 32 GB/s; 80 SMs and 6 MB L2 from the Volta architecture whitepaper.
      {"V100-SXM2", "NVIDIA Tesla V100 SXM2 16/32 GB", 15.7, 0, 125, 0, 900, 6, 80, 150, 16, 2048},
      // NVIDIA A10 Tensor Core GPU datasheet (2021): FP32 31.2, TF32 Tensor
      // 62.5 | 125*, BF16 and FP16 Tensor 125 | 250*.
      // GDDR6 600 GB/s, PCIe Gen4 64 GB/s, no NVLink; 72 SMs, 6 MB L2 (GA102).
      {"A10", "NVIDIA A10 24 GB", 31.2, 62.5, 125, 125, 600, 6, 72, 0, 32, 1536},
      // NVIDIA L4 Tensor Core GPU datasheet (2023): FP32 30.3, TF32 Tensor
      // 120*, FP16 and BF16 Tensor 242* (* sparsity), halved.
      // GDDR6 300 GB/s, PCIe Gen4 x16 64 GB/s; 58 SMs, 48 MB L2 (AD104).
      {"L4", "NVIDIA L4 24 GB", 30.3, 60, 121, 121, 300, 48, 58, 0, 32, 1536},
      // NVIDIA Ada GPU Architecture whitepaper (v2.1), appendix table
      // "GeForce RTX 4090": peak FP32 82.6, TF32 Tensor 82.6/165.2, FP16 and
      // BF16 Tensor with FP32 accumulate 165.2/330.4 (dense/sparse).
      // Same appendix: GDDR6X 1,008 GB/s, 128 SMs, 72 MB L2; PCIe Gen4.
      {"RTX-4090", "NVIDIA GeForce RTX 4090 24 GB", 82.6, 82.6, 165.2, 165.2, 1008, 72, 128, 0,
       32, 1536},
  };
  return table;
}

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
