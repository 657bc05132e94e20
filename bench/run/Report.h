//===- Report.h - dlc-bench results and their formats -----------*- C++ -*-===//

#ifndef DLC_BENCH_REPORT_H
#define DLC_BENCH_REPORT_H

#include "Profile.h"
#include "Provenance.h"
#include "Stats.h"

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace dlc::bench {

/// One repeat of the timed loop.
struct RepeatResult {
  double samplesPerSec = 0;
  double stepMs = 0;
  float lossFirst = 0; // after the first step of the repeat (warm-up included)
  float lossLast = 0;  // after its last timed step
  /// Other processes' share of the host's CPUs during the timed steps, in
  /// percent; -1 when not measured (HostLoad.h).
  double hostLoadPercent = -1;
};

/// One point of --loss-every's trajectory: the loss after step `step`,
/// counted from 1 over the warm-up steps and then the timed ones.
struct LossPoint {
  int64_t step = 0;
  float loss = 0;
};

/// The spread of a figure over the repeats.
struct Spread {
  double median = 0, min = 0, max = 0;
};
Spread spreadOf(std::vector<double> values);

/// Everything one configuration's run reports.
struct Result {
  std::string model, backend, precision, fusion;
  int64_t batch = 0, gpus = 1, threads = 1;
  /// The ranks ran as this many processes of an mpirun job (0: as threads
  /// of one process, or on one GPU each, driven by threads of one process).
  int64_t rankProcesses = 0;
  /// The all-reduces ran alongside the kernels after them (not
  /// --no-overlap; the CPU backend runs half-precision ones in place).
  bool allReduceOverlap = false;
  int64_t warmup = 0, steps = 0, repeats = 0;
  uint64_t seed = 0;
  std::string optimizer;
  /// Convolutions' and batch norms' layout (NCHW or NHWC); empty when the
  /// model has neither.
  std::string layout;
  double compileMs = 0;
  int64_t kernelsPerStep = 0;
  int64_t parameters = 0;
  int64_t forwardMacsPerSample = 0;
  int64_t trainFlopsPerStep = 0; // 2 x multiply-accumulates of the whole step
  int64_t memoryBytesPerStep = 0; // each kernel's inputs read, outputs written once
  /// Data parallelism: the all-reduces (buckets) of a step and the gradient
  /// bytes each rank puts into them; 0 on one rank.
  int64_t allReducesPerStep = 0, allReduceBytesPerStep = 0;
  /// The element type the gradients travel in ("f32"; "f16" or "bf16"
  /// under --grad-compression or pure fp16; "mixed"); "" without any.
  std::string allReduceDtype;
  /// Per all-reduce, in step order: the kernels it may overlap, from it to
  /// the first that needs its result (allReduceWaitPoints): the backward
  /// work there is to hide its communication behind.
  std::vector<int64_t> allReduceOverlapKernels;
  std::map<std::string, int64_t> fusedGroups; // by kind
  std::map<std::string, int64_t> kernelsByKind; // library / generated / hand-written
  /// --backend cuda: launches by the path that ran them (generated,
  /// cublaslt, cudnn, host-fallback); empty on the CPU.
  std::map<std::string, int64_t> launchesByPath;
  /// --backend cuda: bytes per step with the CUDA backend's launches (more
  /// than memoryBytesPerStep where it splits groups).
  int64_t deviceMemoryBytesPerStep = 0;
  /// --backend cuda: whether the timed steps replayed a CUDA graph, and if
  /// not why; whether fp32 GEMMs / convolutions used TF32; the device.
  std::string device;
  bool cudaGraph = false;
  std::string cudaGraphNote;
  bool tf32 = false;
  /// --backend cuda with NVML: the timed steps' mean GPU utilization (%)
  /// and the most device memory in use; samples 0 when NVML was not there.
  int64_t gpuSamples = 0;
  double gpuUtilization = 0;
  int64_t gpuMemoryUsedBytes = 0;
  std::string gpuUsageNote; // why there are no samples
  /// --backend cpu: what ran where (generated launches, oneDNN, reference
  /// kernels), and the seconds the host compiler took (0 on a cache hit).
  std::string cpuBackendNote;
  double hostCompileSeconds = 0;
  /// The timed steps' CPU time over wall time x the host's hardware
  /// threads, in percent (this process's threads; a rank's own under
  /// mpirun); -1 when not measured (compile-only).
  double hostCpuUtilization = -1;
  /// dlc's revision, when the run started, the host and the command line.
  Provenance provenance;
  /// The peak the model-FLOP utilization is against, in TFLOP/s; 0 unknown.
  double peakTflops = 0;
  /// Where it came from: "<gpu> <unit>" from --gpu, or "--peak-tflops".
  std::string peakName;

  /// Training FLOPs per step / median step time, in TFLOP/s.
  double achievedTflops() const;
  int64_t peakArenaBytes = 0, totalBufferBytes = 0, lowerBoundBytes = 0;
  /// What the lowering's padded rows add to the buffers (PadRows.h); -1
  /// where unknown (a plan read from a file).
  int64_t paddingBytes = 0;
  std::vector<RepeatResult> repeatResults;
  /// "" for a configuration that ran to the end; otherwise why it has no
  /// figures ("interrupted by SIGINT in repeat 2 of 5", "not run: ..."), as
  /// a sweep that a signal stopped reports it (Interrupt.h).
  std::string status;
  /// A configuration an earlier report finished (dlc-bench --resume): its
  /// JSON object, written as it was; the JSON format alone shows it.
  std::string json;

  /// The launches the CUDA backend makes of the plan (groups it cannot run
  /// whole split), beside kernelsPerStep, the launches fusion left. A GPU
  /// figure: routed only where one is asked for (describePlan); -1 (null)
  /// otherwise.
  int64_t deviceLaunches = -1;
  /// The launches the backend that ran the step made per step: the CPU
  /// executor's (a generated host launch once, every other kernel alone),
  /// the CUDA backend's device launches; -1 (null) when none ran
  /// (--compile-only).
  int64_t launchesPerStep = -1;
  /// --profile: each launch's time, bytes and FLOPs (Profile.h).
  std::vector<ProfileEntry> profile;
  /// --profile: the roof every entry's floorMs is under (Roofline.h).
  Roof profileRoof;
  /// --loss-every N (0: not asked): the first repeat's loss after every
  /// N-th step; the repeats start alike, so theirs would be the same.
  int64_t lossEvery = 0;
  std::vector<LossPoint> lossTrajectory;
  /// The level of the report's confidence intervals (--confidence).
  double confidence = kConfidenceLevel;
  /// How a sweep timed this configuration's repeats: "interleaved" (in
  /// rounds with the sweep's other single-rank configurations, ABCABC...)
  /// or "consecutive" (all its repeats in a row: one configuration, or
  /// data-parallel ranks).
  std::string timingOrder = "consecutive";

  Spread samplesPerSec() const;
  Spread stepMs() const;
  /// Every repeat's samples/s, in the order they ran.
  std::vector<double> samplesPerSecValues() const;
  /// The median samples/s and its bootstrap interval (Stats.h).
  Interval samplesPerSecInterval() const;
  Interval stepMsInterval() const;
  /// Each repeat's hostLoadPercent.
  std::vector<double> hostLoads() const;
  /// Its repeats saw other loads more than kHostLoadChangePoints apart.
  bool hostLoadVaried() const;
};

/// kHtml is drawn from the JSON report by Html.h, never by writeReports.
enum class Format { kTable, kJson, kCsv, kMarkdown, kHtml };

void writeReport(std::ostream &os, const Result &result, Format format);
/// One configuration: as writeReport. Several (a sweep): one table with a
/// row per configuration and the speed-up over the first configuration of
/// the same batch and precision; JSON wraps the results in {"results": [...]}.
void writeReports(std::ostream &os, const std::vector<Result> &results,
                  Format format);
/// The report of --compile-only: the compiled step's counts, no timings.
void writeCompileReport(std::ostream &os, const Result &result, Format format);
/// Several --compile-only configurations side by side (table, CSV or
/// Markdown): one row each, with kernels and bytes relative to the first
/// configuration of the same model, precision and batch.
void writeCompileSweep(std::ostream &os, const std::vector<Result> &results,
                       Format format);

} // namespace dlc::bench

#endif // DLC_BENCH_REPORT_H
