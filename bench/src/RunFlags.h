//===- RunFlags.h - the run command's flags, read once ----------*- C++ -*-===//
//
// The flags of `dlc-bench MODEL...` that are not the pipeline's
// (PipelineFlags.h) nor --predict's (PredictCommand.h): what to time and
// how long, where the report and the optional files go, and the peak the
// MFU is against. Declared in RunFlags.cpp and read, checked, into a
// RunFlags value once the command line is parsed; the command reads that
// value, never the flags.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_RUNFLAGS_H
#define DLC_BENCH_RUNFLAGS_H

#include "GpuPeaks.h"
#include "Report.h"
#include "RunPlan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc::bench {

struct RunFlags {
  std::vector<std::string> models; // the paths, .mlir or .plan
  std::string backend = "cpu";
  bool backendGiven = false;
  std::vector<int64_t> batches, gpuCounts;
  bool batchGiven = false, gpusGiven = false;
  int64_t warmup = 20, steps = 100, repeats = 5, seed = 0;
  int64_t lossEvery = 0; // --loss-every; 0 when not given
  double confidence = kConfidenceLevel;
  std::optional<double> peakTflops;
  std::string gpuName; // --gpu, "" for none
  Fp32Peak fp32Peak = Fp32Peak::kFp32;
  Format format = Format::kTable;
  std::string outputPath = "-";
  std::string paramsIn, inputsIn, dumpOut;       // directories, "" for none
  std::string debugDir, dumpKernels;             // directories, "" for none
  std::string emitPlan, emitMlir;                // files, "" for none
  bool profile = false, noOverlap = false, noCudaGraph = false, tf32 = false;
  bool compileOnly = false, resume = false, allowNonFinite = false;

  /// What the timed run takes of them (RunPlan.h).
  RunOptions runOptions() const;
};

/// The flags as given, checked; "" when all are valid, else the one-line
/// error naming the first bad one.
std::string readRunFlags(RunFlags &flags);
/// --gpu as given, or empty.
std::string gpuFlag();

/// Says `message` as dlc-bench's error on stderr; the exit code, 1.
int fail(const std::string &message);

} // namespace dlc::bench

#endif // DLC_BENCH_RUNFLAGS_H
