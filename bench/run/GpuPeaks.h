//===- GpuPeaks.h - known GPUs' peak TFLOP/s, for MFU -----------*- C++ -*-===//
//
// Model-FLOP utilization is achieved TFLOP/s over the device's peak for the
// arithmetic the step uses. `--gpu NAME` picks the peak from this table by
// the run's precision; `--peak-tflops` gives one directly and wins.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_GPUPEAKS_H
#define DLC_BENCH_GPUPEAKS_H

#include "dlc/runtime/perf/Gpus.h"

#include <ostream>
#include <string>
#include <vector>

namespace dlc::bench {

/// The table itself lives in the runtime's perf layer (dlc/runtime/perf/Gpus.h),
/// where the compiler's cost-driven fusion reads it too.
using GpuPeak = rt::perf::GpuPeak;
using rt::perf::knownGpus;

/// `name` without case, spaces, '-' or '_': how --gpu and --network match
/// names ("h100 sxm" is H100-SXM).
std::string canonicalName(const std::string &name);

/// The entry of a table of named things (GPUs, networks) that `name` names,
/// compared as canonicalName does; null if none.
template <typename T> const T *findByName(const std::vector<T> &table, const std::string &name) {
  for (const T &entry : table)
    if (canonicalName(entry.name) == canonicalName(name))
      return &entry;
  return nullptr;
}

/// "A, B, C": a table's names, for errors.
template <typename T> std::string joinNames(const std::vector<T> &table) {
  std::string names;
  for (const T &entry : table)
    names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

/// The GPU named `name`, compared without case, spaces, '-' or '_'
/// ("h100 sxm" finds H100-SXM); null if unknown.
const GpuPeak *findGpu(const std::string &name);

/// "A100-SXM, H100-SXM, ...": for errors.
std::string knownGpuNames();

/// Which peak an fp32 step is measured against: the CUDA cores' FP32, or
/// TF32 tensor cores when the backend lets matmuls and convolutions use them.
enum class Fp32Peak { kFp32, kTf32 };

/// The peak a configuration's MFU is against.
struct ChosenPeak {
  double tflops = 0; ///< 0: none (no --gpu, no --peak-tflops)
  std::string name;  ///< e.g. "H100-SXM bf16-tensor", or "--peak-tflops"
};

/// The peak for a run at `precision`: `given` (--peak-tflops) if positive,
/// else `gpu`'s entry for the precision (fp32 -> FP32 or TF32 per `fp32`;
/// tf32 -> TF32; fp16 and amp -> FP16 tensor; bf16 and amp-bf16 -> BF16
/// tensor), else none. Returns false with `error` set for an unknown GPU
/// (listing the known ones), a precision the table cannot map, or a GPU
/// without units for that precision.
bool choosePeak(const std::string &gpu, const std::string &precision, Fp32Peak fp32,
                double given, ChosenPeak &peak, std::string &error);

/// The table itself, one GPU a line: name, FP32, TF32, FP16, BF16, memory
/// bandwidth, L2, SMs, NVLink, PCIe, product.
void writeGpuTable(std::ostream &os);

/// `dlc-bench gpus [PRECISION [fp32|tf32]]`: the table, or the peak each GPU
/// gives a run at PRECISION (what --gpu would pick). Returns the exit code.
int runGpus(const std::vector<std::string> &args, std::ostream &os,
            std::ostream &errors);

} // namespace dlc::bench

#endif // DLC_BENCH_GPUPEAKS_H
