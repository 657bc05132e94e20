//===- dlc-run.cpp - time a compiled plan, no MLIR needed -----------------===//
//
//   dlc-run PLAN.plan [--backend cpu|cuda] [--warmup N] [--steps N]
//           [--repeats N] [--seed N] [--format table|json|csv|markdown]
//           [-o FILE] [--profile] [--loss-every N] [--no-cuda-graph]
//           [--no-overlap] [--tf32]
//           [--gpu NAME]
//           [--peak-tflops X] [--fp32-peak fp32|tf32] [--params-in DIR]
//           [--inputs-in DIR] [--dump-out DIR] [--describe]
//
// dlc-bench without the compiler: it runs a plan written by `dlc-bench
// MODEL --compile-only --emit-plan X.plan` with the same loop and the same
// report, and links only the runtime, so it builds and runs where MLIR is
// not installed (the GPU machine: bench/gpu/run_gpu_tests.sh builds it
// there with runtime/ and bench/run/). --describe prints the plan's counts
// (and, with --backend cuda, its device launches by path) without running.
//
// A plan compiled for N data-parallel ranks (--gpus N) runs them as threads
// of this process, or, under `mpirun -np N dlc-run PLAN`, one rank per
// process (Collective.h); rank 0 writes the report.
//
//===----------------------------------------------------------------------===//

#include "Interrupt.h"
#include "GpuPeaks.h"
#include "NonFinite.h"
#include "NumericOption.h"
#include "Report.h"
#include "CpuBackend.h"
#include "RunPlan.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Parallel.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

namespace rt = ::dlc::rt;
namespace bench = ::dlc::bench;

namespace {

int fail(const std::string &message) {
  // One write: under mpirun another rank's abort banner must not split it.
  std::cerr << ("dlc-run: error: " + message + "\n");
  return 1;
}

const char *const kUsage =
    "usage: dlc-run PLAN.plan [options]\n"
    "Times a plan compiled by `dlc-bench MODEL --compile-only --emit-plan PLAN.plan`,\n"
    "as dlc-bench times a model, without MLIR.\n"
    "  --backend cpu|reference|cuda\n"
    "                         the backend (default cpu: generated host kernels and\n"
    "                         oneDNN; reference: every op alone, the numerical truth)\n"
    "  --warmup N             untimed steps before timing (default 20)\n"
    "  --steps N              timed steps per repeat (default 100)\n"
    "  --repeats N            repeats; the median is reported (default 5)\n"
    "  --seed N               seed of parameters and synthetic data (default 0)\n"
    "  --format F             table (default), json, csv or markdown\n"
    "  -o FILE                write the report to FILE\n"
    "  --profile              time every kernel (cuda: CUDA events per launch), each\n"
    "                         launch beside its floor (bytes at the bandwidth, FLOPs\n"
    "                         at the peak)\n"
    "  --loss-every N         record the first repeat's loss every N steps (JSON)\n"
    "  --no-cuda-graph        cuda: launch kernel by kernel instead of replaying a graph\n"
    "  --no-overlap           each all-reduce in its place, not alongside the backward pass\n"
    "  --tf32                 cuda: fp32 GEMMs and convolutions on TF32\n"
    "  --gpu NAME             the GPU the MFU is against (dlc-bench gpus lists them);\n"
    "                         with --profile on cuda, the cost model's prediction for\n"
    "                         it beside each launch kind\n"
    "  --peak-tflops X        the peak the MFU is against, overriding --gpu\n"
    "  --fp32-peak fp32|tf32  with --gpu, the peak of an fp32 run (default fp32)\n"
    "  --params-in DIR        read parameters from DIR/<name>.npy\n"
    "  --inputs-in DIR        read inputs and labels from DIR/<name>.npy\n"
    "  --dump-out DIR         write the loss, updated parameters and last gradients\n"
    "  --describe             print the plan's counts without running it\n"
    "  --allow-nonfinite      exit 0 even when a loss is NaN or infinite\n"
    "  --version              print dlc's source revision\n"
    "A plan compiled with --gpus N runs its N ranks as threads, or one per process\n"
    "under `mpirun -np N dlc-run PLAN.plan` (rank 0 reports). With --backend cuda a\n"
    "rank waits for NCCL at most DLC_NCCL_TIMEOUT seconds (default 600; 0: no limit).\n";

} // namespace

int runMain(int argc, char **argv) {
  std::string planPath, format = "table", output = "-", gpu, fp32Peak = "fp32";
  double peakTflops = 0;
  bool describe = false, allowNonFinite = false;
  bench::RunOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "dlc-run: error: " << arg << " needs a value\n" << kUsage;
        std::exit(2);
      }
      return argv[++i];
    };
    // Every numeric option goes through NumericOption.h, as in dlc-bench.
    auto integer = [&](int64_t minimum) -> int64_t {
      std::string text = value(), error;
      auto v = bench::parseIntegerOption(arg, text, {minimum}, error);
      if (!v) {
        std::cerr << "dlc-run: error: " << error << "\n";
        std::exit(2);
      }
      return *v;
    };
    auto positive = [&]() -> double {
      std::string text = value(), error;
      auto v = bench::parseRealOption(arg, text, {}, error);
      if (!v) {
        std::cerr << "dlc-run: error: " << error << "\n";
        std::exit(2);
      }
      return *v;
    };
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--version") {
      std::cout << "dlc-run, dlc revision " << bench::dlcRevision() << "\n";
      return 0;
    } else if (arg == "--backend") {
      o.backend = value();
    } else if (arg == "--warmup") {
      o.warmup = integer(0);
    } else if (arg == "--steps") {
      o.steps = integer(1);
    } else if (arg == "--repeats") {
      o.repeats = integer(1);
    } else if (arg == "--seed") {
      o.seed = static_cast<uint64_t>(integer(0));
    } else if (arg == "--format") {
      format = value();
    } else if (arg == "-o") {
      output = value();
    } else if (arg == "--profile") {
      o.profile = true;
    } else if (arg == "--loss-every") {
      o.lossEvery = integer(1);
    } else if (arg == "--no-cuda-graph") {
      o.noCudaGraph = true;
    } else if (arg == "--no-overlap") {
      o.noOverlap = true;
    } else if (arg == "--tf32") {
      o.tf32 = true;
    } else if (arg == "--gpu") {
      gpu = value();
      o.gpuName = gpu;
    } else if (arg == "--peak-tflops") {
      peakTflops = positive();
    } else if (arg == "--fp32-peak") {
      fp32Peak = value();
    } else if (arg == "--params-in") {
      o.paramsIn = value();
    } else if (arg == "--inputs-in") {
      o.inputsIn = value();
    } else if (arg == "--dump-out") {
      o.dumpOut = value();
    } else if (arg == "--describe") {
      describe = true;
    } else if (arg == "--allow-nonfinite") {
      allowNonFinite = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "dlc-run: error: unknown option '" << arg << "'\n" << kUsage;
      return 2;
    } else if (planPath.empty()) {
      planPath = arg;
    } else {
      return fail("one plan at a time; got '" + planPath + "' and '" + arg + "'");
    }
  }
  if (planPath.empty()) {
    std::cerr << "dlc-run: error: no plan given\n" << kUsage;
    return 2;
  }
  if (!bench::isCpuBackend(o.backend) && o.backend != "cuda")
    return fail("unknown --backend '" + o.backend + "' (cpu, reference or cuda)");
  if (fp32Peak != "fp32" && fp32Peak != "tf32")
    return fail("--fp32-peak must be fp32 or tf32, got '" + fp32Peak + "'");
  bench::Format reportFormat;
  if (format == "table")
    reportFormat = bench::Format::kTable;
  else if (format == "json")
    reportFormat = bench::Format::kJson;
  else if (format == "csv")
    reportFormat = bench::Format::kCsv;
  else if (format == "markdown")
    reportFormat = bench::Format::kMarkdown;
  else
    return fail("unknown --format '" + format + "' (table, json, csv or markdown)");

  auto plan = rt::readPlanFile(planPath);
  if (!plan.isOk())
    return fail(plan.status().toString());
  bench::Result result;
  result.provenance = bench::currentProvenance(argc, argv);
  bench::describePlan(*plan, o.backend, /*gpuFigures=*/!o.gpuName.empty(), result);
  // A plan records offsets, not which buffers share storage by design.
  result.totalBufferBytes = result.lowerBoundBytes = result.paddingBytes = -1;
  bench::ChosenPeak peak;
  if (std::string error;
      !bench::choosePeak(gpu, result.precision,
                         fp32Peak == "tf32" ? bench::Fp32Peak::kTf32 : bench::Fp32Peak::kFp32,
                         peakTflops, peak, error))
    return fail(error);
  result.peakTflops = peak.tflops;
  result.peakName = peak.name;
  if (!describe)
    if (rt::Status ran = bench::runPlan(*plan, o, result); !ran.isOk())
      return fail(ran.message());
  std::string nonFinite = bench::nonFiniteLossWarning(result);
  if (!nonFinite.empty() && rt::launchedRank() == 0)
    std::cerr << ("dlc-run: warning: " + nonFinite + "\n");

  // Every process of an mpirun job ran its rank; rank 0 reports.
  if (rt::launchedRank() != 0)
    return 0;
  std::ofstream file;
  if (output != "-") {
    file.open(output);
    if (!file)
      return fail("cannot write " + output);
  }
  std::ostream &os = output == "-" ? std::cout : file;
  if (describe)
    bench::writeCompileReport(os, result, reportFormat);
  else
    bench::writeReport(os, result, reportFormat);
  if (!os)
    return fail("cannot write " + output);
  // The report is written, then a NaN or infinite loss fails the run.
  return nonFinite.empty() || allowNonFinite ? 0 : 1;
}

int main(int argc, char **argv) {
  rt::pinOpenMpThreads(argv);
  if (rt::launchedProcesses() > 1)
    bench::sayWhenMpirunEndsThisRank("dlc-run", rt::launchedRank());
  int rc = runMain(argc, argv);
  // Under mpirun: MPI_Finalize, or MPI_Abort after an error so that no other
  // rank waits for this one.
  rt::leaveProcessRankGroup(rc != 0);
  return rc;
}
