//===- Roofline.h - each profiled launch's floor ----------------*- C++ -*-===//
//
// --profile puts beside each launch's time the least time it could take:
// its bytes (read once, written once: Profile.h) at the device's memory
// bandwidth, or its FLOPs at the device's peak for the step's precision,
// whichever is longer. A launch far above its floor is where a backend
// loses time; one at its floor can only get faster by moving or computing
// less, which is the fusion strategy's business, not the kernel's.
//
//   CUDA  the datasheet figures of --gpu, else of the GPU the executor
//         reports, when the table knows it (dlc-bench gpus);
//   CPU   measured on this machine: a copy's bandwidth on the CPU
//         backend's threads, and oneDNN's f32 GEMM rate (dnnlGemmGflops).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_ROOFLINE_H
#define DLC_BENCH_ROOFLINE_H

#include "Profile.h"

#include <ostream>
#include <string>
#include <vector>

namespace dlc::bench {

/// The table's GPU for a device name as CUDA reports it ("NVIDIA H100 80GB
/// HBM3" is H100-SXM, "NVIDIA H200" is H200); "" when the table has none.
std::string tableGpuForDevice(const std::string &deviceName);

/// A GPU's roof from the table: `gpuName` (a `dlc-bench gpus` name), its
/// memory bandwidth, and `peakTflops` (the run's precision's peak, as the
/// MFU takes it; 0 leaves the FLOPs bound out). bytesPerSecond is 0 for an
/// unknown GPU.
Roof gpuRoof(const std::string &gpuName, double peakTflops, const std::string &peakName);

/// The CUDA backend's roof: the table's figures for `gpuName` (--gpu), else
/// for the GPU `deviceName` is (tableGpuForDevice), at the peak choosePeak
/// gives `precision` (`givenTflops`, --peak-tflops, wins when positive).
Roof cudaRoof(const std::string &gpuName, const std::string &deviceName,
              const std::string &precision, bool tf32, double givenTflops);

/// This machine's roof, measured once per process (about 0.1 s): the best
/// of a few copies of 64 MiB on cpuThreadCount() threads (read + write
/// bytes over the time), and oneDNN's GEMM rate (0 without oneDNN).
Roof hostRoof();

/// Sets every entry's floorMs from `roof` (left at -1 when the roof's
/// bandwidth is unknown).
void applyFloors(std::vector<ProfileEntry> &entries, const Roof &roof);

/// --profile's floors: time against the floor by launch kind [path], the
/// kinds furthest above theirs first, and the ten launches furthest above
/// theirs; one line saying why when the roof is unknown.
void writeFloors(std::ostream &os, const std::vector<ProfileEntry> &entries, const Roof &roof);

/// The floor of `bytes` and `flops` under `roof`, in ms; -1 if unknown.
double floorMs(int64_t bytes, int64_t flops, const Roof &roof);

} // namespace dlc::bench

#endif // DLC_BENCH_ROOFLINE_H
