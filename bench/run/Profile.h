//===- Profile.h - --profile's figures in the report ------------*- C++ -*-===//
//
// --profile prints its tables on stderr; the report carries the same times
// per launch, with what each launch moves and computes, so that a paper's
// per-kernel figures come from the JSON and `compare` can line up two runs'
// launches by kind.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_PROFILE_H
#define DLC_BENCH_PROFILE_H

#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::rt::cuda {
struct LaunchPath;
} // namespace dlc::rt::cuda

namespace dlc::bench {

/// One launch of a profiled step.
struct ProfileEntry {
  int64_t launch = 0; // its position in the step
  std::string kind;   // the fusion kind, or the op of a single kernel
  std::string path;   // what ran it: the CUDA path, or the CPU backend
  double msPerStep = 0;
  /// Its inputs read and outputs written once (values kept inside the
  /// launch not counted), and 2 x its multiply-accumulates.
  int64_t bytes = 0, flops = 0;
  /// The cost model's figure for the launch (CUDA, with --gpu); -1 for none.
  double predictedMs = -1;
  /// Its bytes at the device's bandwidth or its FLOPs at the peak,
  /// whichever is longer (Roofline.h); -1 when the device's roof is unknown.
  double floorMs = -1;
};

/// What bounds a launch from below: the device's memory bandwidth and peak
/// (Roofline.h).
struct Roof {
  double bytesPerSecond = 0; ///< 0: unknown (no floors)
  double flopsPerSecond = 0; ///< 0: the FLOPs bound is left out
  std::string source;        ///< "H100-SXM: 3350 GB/s, 989.4 TFLOP/s bf16"
};

/// The CPU backends: per plan launch (a fused group is one), from each plan
/// kernel's seconds over `steps` timed steps.
std::vector<ProfileEntry> cpuProfile(const rt::Plan &plan,
                                     const std::vector<double> &kernelSeconds, int64_t steps,
                                     const std::string &backend);

/// The CUDA backend: per device launch (groups split where needed), from
/// its milliseconds per step, with the cost model's figure where
/// `predictedMs` has one per launch (empty: none).
std::vector<ProfileEntry> cudaProfile(const rt::Plan &plan,
                                      const std::vector<rt::cuda::LaunchPath> &paths,
                                      const std::vector<double> &msPerStep,
                                      const std::vector<double> &predictedMs = {});

} // namespace dlc::bench

#endif // DLC_BENCH_PROFILE_H
