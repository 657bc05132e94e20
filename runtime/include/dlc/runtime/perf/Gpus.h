//===- Gpus.h - the GPUs a cost model can describe --------------*- C++ -*-===//
//
// Known GPUs' datasheet figures: what `dlc-bench --gpu NAME` picks a peak
// from, and what the cost model's DeviceSpec is filled with, for dlc-bench
// (bench/run/GpuPeaks.h) and for the compiler's cost-driven fusion
// (dlc-fuse-priority) alike.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_PERF_GPUS_H
#define DLC_RUNTIME_PERF_GPUS_H

#include "dlc/runtime/perf/CostModel.h"

#include <string>
#include <vector>

namespace dlc::rt::perf {

/// Dense (no 2:4 sparsity) peaks of one GPU in TFLOP/s, from its vendor's
/// datasheet; 0 where the GPU has no such units.
struct GpuPeak {
  const char *name;        ///< what --gpu takes, e.g. "H100-SXM"
  const char *description; ///< the product it stands for
  double fp32;             ///< FP32 on the CUDA cores (non-tensor)
  double tf32;             ///< TF32 tensor cores
  double fp16;             ///< FP16 tensor cores, FP32 accumulate
  double bf16;             ///< BF16 tensor cores, FP32 accumulate
  // The rest of the device description the cost model reads
  // (dlc/runtime/perf/CostModel.h), from the same datasheets.
  double memoryGBs;        ///< DRAM (HBM / GDDR) bandwidth, GB/s
  double l2MB;             ///< L2 cache, MB
  int sms;                 ///< streaming multiprocessors
  double nvlinkGBs;        ///< NVLink per GPU, GB/s each direction (0: none)
  double pcieGBs;          ///< host interface, GB/s each direction
  /// Resident threads per multiprocessor (CUDA C++ Programming Guide,
  /// "Technical Specifications per Compute Capability": 2048 on 7.0, 8.0
  /// and 9.0; 1536 on 8.6 and 8.9).
  int threadsPerSm;
};

/// Every GPU the table knows, in the order `--gpu` lists them.
const std::vector<GpuPeak> &knownGpus();

/// The GPU named `name`, compared without case, spaces, '-' or '_'
/// ("h100 sxm" finds H100-SXM); null if unknown.
const GpuPeak *findKnownGpu(const std::string &name);

/// What the cost model reads of a GPU of the table.
DeviceSpec deviceSpecOf(const GpuPeak &gpu);

} // namespace dlc::rt::perf

#endif // DLC_RUNTIME_PERF_GPUS_H
