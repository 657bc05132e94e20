//===- RunCommand.cpp - dlc-bench MODEL...: run and sweep -----------------===//
//
// The run command: checks the sweep the flags describe, compiles every
// configuration (CompileConfiguration.h), then times them, single-rank
// ones in rounds (Rounds.h), and writes the report, rewritten after every
// configuration so that an interrupted sweep keeps what finished
// (--resume reads it back). --predict stops after the compile and hands the
// plans to PredictCommand.h.
//
//===----------------------------------------------------------------------===//

#include "RunCommand.h"

#include "CompileConfiguration.h"
#include "CpuBackend.h"
#include "DebugDir.h"
#include "Html.h"
#include "Interrupt.h"
#include "Json.h"
#include "NonFinite.h"
#include "PipelineFlags.h"
#include "PredictCommand.h"
#include "Provenance.h"
#include "Rounds.h"
#include "RunFlags.h"
#include "RunPlan.h"

#include "dlc/InitAll.h"
#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Device.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace mlir;
namespace cl = llvm::cl;

namespace dlc::bench {

namespace {

/// runConfiguration's answer when SIGINT or SIGTERM stopped the steps; the
/// result's status says where.
constexpr int kInterrupted = -1;

/// Checks the flags that concern the sweep as a whole and makes it: every
/// combination, model slowest, then precision, then fusion, then layout,
/// then batch, then GPUs. A non-zero exit code after an error.
int checkSweep(RunFlags &flags, const PipelineAxes &axes, bool predict,
               std::vector<Configuration> &sweep, bool &fromPlan) {
  const std::vector<std::string> &modelPaths = flags.models;
  // An unknown --gpu, or a precision it has no peak for, fails before any run.
  for (const std::string &p : axes.precisions) {
    ChosenPeak peak;
    std::string error;
    if (!choosePeak(flags.gpuName, p, flags.fp32Peak, flags.peakTflops.value_or(0), peak,
                    error))
      return fail(error);
  }
  if (predict) {
    // Predictions route every launch as the CUDA backend would.
    if (flags.backendGiven && flags.backend != "cuda")
      return fail("--predict predicts the CUDA backend's step; leave out --backend " +
                  flags.backend);
    flags.backend = "cuda";
    if (std::string error = checkPredictOptions(predictCommandOptions(flags));
        !error.empty())
      return fail(error);
  }
  if (flags.backend == "cuda") {
    // Before compiling anything: without a device there is nothing to time.
    auto devices = rt::listCudaDevices();
    if (!devices.isOk() && !flags.compileOnly && !predict)
      return fail("--backend cuda: " + devices.status().message());
  }
  if (!isCpuBackend(flags.backend) && flags.backend != "cuda")
    return fail("unknown --backend '" + flags.backend + "' (cpu, reference or cuda)");
  std::vector<int64_t> &gpuCounts = flags.gpuCounts;
  // Under mpirun the ranks are the processes it started, one each.
  if (int launched = rt::launchedProcesses(); launched > 1) {
    if (!flags.gpusGiven)
      gpuCounts = {launched};
    else if (gpuCounts != std::vector<int64_t>{launched})
      return fail("mpirun started " + std::to_string(launched) +
                  " processes, one per rank: --gpus must be " + std::to_string(launched) +
                  " (or left out); sweep GPU counts with one mpirun each, or without "
                  "mpirun, where the ranks run as threads");
  }
  // --predict compares each GPU count with one GPU: compile that too.
  if (predict && !llvm::is_contained(gpuCounts, 1))
    gpuCounts.insert(gpuCounts.begin(), 1);
  // Every combination, model slowest, then precision, then fusion, then
  // layout, then batch, then GPUs, so that configurations to compare end up
  // side by side (a GPU sweep's rows next to their one-GPU row, for scaling
  // efficiency).
  for (const std::string &m : modelPaths)
    for (const std::string &p : axes.precisions)
      for (const std::string &f : axes.fusions)
        for (const std::string &l : axes.layouts)
          for (int64_t b : flags.batches)
            for (int64_t g : gpuCounts)
              sweep.push_back({m, p, f, l, b, g});
  fromPlan = llvm::any_of(modelPaths, [](const std::string &path) {
    return llvm::StringRef(path).ends_with(".plan");
  });
  if (predict && fromPlan)
    return fail("--predict compiles the model for every --gpus count: give the model file, "
                "not a .plan");
  if (predict && flags.resume)
    return fail("--resume keeps timed configurations; --predict times none");
  // Every model is there before the first one runs for an hour.
  for (const std::string &path : modelPaths)
    if (!std::ifstream(path))
      return fail("cannot open " + path + ": " + std::strerror(errno));
  if (!flags.debugDir.empty() && rt::launchedRank() == 0)
    if (std::string error = checkWritableDirectory(flags.debugDir); !error.empty())
      return fail("--debug-dir: " + error);
  if (modelPaths.size() > 1 && (!flags.paramsIn.empty() || !flags.inputsIn.empty()))
    return fail("--params-in and --inputs-in hold one model's tensors: give one model");
  bool dataParallel = llvm::any_of(gpuCounts, [](int64_t g) { return g > 1; });
  if (std::string error = checkDataParallelFlags(fromPlan, dataParallel); !error.empty())
    return fail(error);
  if (sweep.size() > 1 && (fromPlan || !flags.emitPlan.empty() || !flags.dumpOut.empty()))
    return fail("a sweep of " + std::to_string(sweep.size()) +
                " configurations cannot run a .plan, --emit-plan or --dump-out: "
                "give one configuration");
  if (!flags.emitMlir.empty() && (fromPlan || sweep.size() > 1))
    return fail(fromPlan ? "--emit-mlir: a .plan is compiled already; give the model file"
                         : "--emit-mlir writes one configuration's IR; this sweep has " +
                               std::to_string(sweep.size()));

  return 0;
}

/// Writes the report of `results`. A file is rewritten after every
/// configuration of a sweep, through a temporary one, so that an interrupt
/// or a crash keeps every finished configuration and never leaves half a
/// report.
int writeReport(const RunFlags &flags, const std::vector<Result> &results) {
  // Every process of an mpirun job ran its rank; rank 0 reports.
  if (rt::launchedRank() != 0)
    return 0;
  std::ofstream file;
  std::ostream *os = &std::cout;
  std::string partial = flags.outputPath + ".partial";
  if (flags.outputPath != "-") {
    file.open(partial);
    os = &file;
  }
  std::optional<Format> format = flags.format;
  // HTML is drawn from the JSON report, so the page shows exactly its numbers.
  bool html = *format == Format::kHtml;
  std::ostringstream jsonReport;
  std::ostream *page = os;
  if (html) {
    os = &jsonReport;
    format = Format::kJson;
  }
  bool sideBySide = results.size() > 1 && (*format == Format::kTable ||
                                            *format == Format::kCsv ||
                                            *format == Format::kMarkdown);
  if (flags.compileOnly && sideBySide) {
    writeCompileSweep(*os, results, *format);
  } else if (flags.compileOnly) {
    bool wrap = *format == Format::kJson && results.size() > 1;
    if (wrap)
      *os << "{\"results\": [\n";
    for (size_t i = 0; i < results.size(); ++i) {
      if (wrap && i)
        *os << ",\n";
      writeCompileReport(*os, results[i], *format);
    }
    if (wrap)
      *os << "]}\n";
  } else
    writeReports(*os, results, *format);
  if (html) {
    std::string title, error;
    for (const std::string &path : flags.models)
      title += (title.empty() ? "" : ", ") + modelName(path);
    if (!writeHtmlFromJson(*page, jsonReport.str(), "dlc-bench " + title, error))
      return fail(error);
    os = page;
  }
  if (!*os)
    return fail("cannot write " + (flags.outputPath == "-" ? std::string("the report") : partial));
  if (flags.outputPath != "-") {
    file.close();
    if (std::rename(partial.c_str(), flags.outputPath.c_str()) != 0)
      return fail("cannot write " + flags.outputPath + ": " + std::strerror(errno));
  }
  return 0;
}

/// --resume: the configuration of `finished` that is `c`, as its JSON
/// text; "" when there is none. An auto layout matches the one the run chose.
std::string finishedJson(std::vector<llvm::json::Object> &finished, const Configuration &c,
                         const std::string &backend) {
  for (llvm::json::Object &r : finished) {
    std::string layout = r.getString("layout").value_or("").str();
    if (r.getString("model").value_or("") != modelName(c.model) ||
        r.getString("backend").value_or("") != backend ||
        r.getString("precision").value_or("") != c.precision ||
        r.getString("fusion").value_or("") != c.fusion ||
        r.getInteger("batch").value_or(-1) != c.batch ||
        r.getInteger("gpus").value_or(1) != c.gpus ||
        (c.layout != "auto" && !llvm::StringRef(layout).equals_insensitive(c.layout)))
      continue;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object(r))) << "\n";
    return text;
  }
  return "";
}

/// Runs a compiled configuration, all its repeats in a row, into `result`;
/// returns a non-zero exit code after an error, or kInterrupted.
int runConfiguration(const RunFlags &flags, const rt::Plan &plan,
                     const std::string &progressLabel, Result &result) {
  RunOptions options = flags.runOptions();
  options.progressLabel = progressLabel;
  rt::Status ran = runPlan(plan, options, result);
  if (!ran.isOk() && interruptSignal()) {
    result.status = ran.message();
    return kInterrupted;
  }
  if (!ran.isOk())
    return fail(ran.message());
  if (std::string warning = nonFiniteLossWarning(result);
      !warning.empty() && rt::launchedRank() == 0)
    llvm::errs() << ("dlc-bench: warning: " + warning + "\n");
  return 0;
}

} // namespace

int runBench(int argc, char **argv, const char *overview) {
  mlir::dlc::registerAllPasses();
  registerPassManagerCLOptions();
  registerMLIRContextCLOptions();
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions({&benchCategory()});
  cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "dlc revision " << dlcRevision() << "\n";
  });
  cl::ParseCommandLineOptions(argc, argv, overview);

  // Before --fusion is checked: a plugin may register strategies.
  if (std::string error = loadPipelinePlugins(); !error.empty())
    return fail(error);
  RunFlags flags;
  if (std::string error = readRunFlags(flags); !error.empty())
    return fail(error);
  PipelineAxes axes;
  if (std::string error = readPipelineFlags(axes); !error.empty())
    return fail(error);
  bool predict = predictRequested();
  std::vector<Configuration> sweep;
  bool fromPlan = false;
  if (int rc = checkSweep(flags, axes, predict, sweep, fromPlan))
    return rc;
  bool models = flags.models.size() > 1;
  std::vector<Result> results;
  auto writeOutputs = [&]() { return writeReport(flags, results); };
  // SIGINT / SIGTERM: the configuration running stops after its step (a
  // single rank) or at its end (several), nothing new starts, and the
  // report lists what finished, what was interrupted and what never ran.
  // Under mpirun, mpirun's SIGTERM ends a job one of whose ranks died: it
  // must end this rank, saying so.
  if (rt::launchedProcesses() > 1)
    sayWhenMpirunEndsThisRank("dlc-bench", rt::launchedRank());
  else
    catchInterrupts();
  if (flags.compileOnly && flags.lossEvery)
    return fail("--loss-every records the losses of the steps run; --compile-only runs none");
  // --resume: the finished configurations of the report already there.
  std::vector<llvm::json::Object> finished;
  if (flags.resume) {
    if (flags.outputPath == "-" || flags.format != Format::kJson)
      return fail("--resume reads the finished configurations back from the report: give "
                  "--format json -o FILE");
    if (flags.compileOnly)
      return fail("--resume skips configurations timed already; --compile-only times none");
    std::string error;
    if (std::ifstream(flags.outputPath) && !readReport(flags.outputPath, finished, error))
      return fail("--resume: " + error);
  }
  auto finishedRun = [&](const Configuration &c) {
    return finishedJson(finished, c, flags.backend);
  };
  size_t resumed = 0;
  auto notRun = [&](const Configuration &c) {
    Result r;
    r.model = modelName(c.model);
    r.backend = flags.backend;
    r.precision = c.precision;
    r.fusion = c.fusion;
    r.layout = c.layout == "auto" ? "" : c.layout;
    r.batch = c.batch;
    r.gpus = c.gpus;
    r.status = "not run (" + interruptName() + ")";
    return r;
  };
  // Each configuration's slot in the report, in the sweep's order; `done`
  // once its figures are final (finished, carried over, or compiled only).
  std::vector<Result> slots(sweep.size());
  std::vector<bool> done(sweep.size(), false);
  // The report so far: what is done, for the file rewritten during a sweep.
  auto writeDone = [&]() -> int {
    if (sweep.size() < 2 || flags.outputPath == "-")
      return 0;
    results.clear();
    for (size_t i = 0; i < sweep.size(); ++i)
      if (done[i])
        results.push_back(slots[i]);
    return writeOutputs();
  };
  auto label = [&](size_t i) {
    return sweep.size() > 1 ? "[" + std::to_string(i + 1) + "/" +
                                  std::to_string(sweep.size()) + "] " +
                                  sweep[i].displayName(models) + ": "
                            : std::string();
  };
  // Compile every configuration first, so that a sweep fails before any
  // timing if one of them does not compile.
  std::vector<rt::Plan> plans(sweep.size());
  std::vector<DebugEntry> debugEntries;
  bool stopped = false;
  for (size_t i = 0; i < sweep.size(); ++i) {
    const Configuration &c = sweep[i];
    if (interruptSignal()) {
      for (size_t j = i; j < sweep.size(); ++j)
        slots[j] = notRun(sweep[j]);
      stopped = true;
      break;
    }
    if (std::string finishedJson = finishedRun(c); !finishedJson.empty()) {
      slots[i].json = std::move(finishedJson);
      done[i] = true;
      ++resumed;
      continue;
    }
    // A sweep dumps each configuration's kernels and debug files apart.
    ConfigurationOutputs outputs{flags.dumpKernels, flags.debugDir, c.displayName(models),
                                 sweep.size() > 1};
    std::string subdirectory = safeDirectoryName(c.directoryName(models));
    if (outputs.inSweep && !flags.dumpKernels.empty())
      outputs.kernelDir += "/" + c.directoryName(models);
    if (outputs.inSweep && !flags.debugDir.empty()) {
      outputs.debugDir += "/" + subdirectory;
      if (rt::launchedRank() == 0)
        if (std::string error = checkWritableDirectory(outputs.debugDir);
            !error.empty())
          return fail("--debug-dir: " + error);
    }
    slots[i].provenance = currentProvenance(argc, argv);
    if (int rc = compileConfiguration(c, flags, fromPlan, predict, outputs, plans[i],
                                      slots[i]))
      return rc;
    if (outputs.inSweep && !flags.debugDir.empty() && rt::launchedRank() == 0) {
      debugEntries.push_back({outputs.label, subdirectory});
      if (rt::Status s = writeSweepDebugIndex(flags.debugDir, debugEntries); !s.isOk())
        return fail("--debug-dir: " + s.message());
    }
    if (flags.compileOnly) {
      done[i] = true;
      if (i + 1 < sweep.size())
        if (int written = writeDone())
          return written;
    }
  }
  // --predict times nothing: every configuration is compiled and recorded.
  if (predict && !stopped)
    return writePrediction(predictCommandOptions(flags), std::cerr);
  // Then time them: single-rank configurations of a sweep in rounds
  // (Rounds.h), data-parallel ones after, each's repeats in a row.
  std::vector<size_t> inRounds, inRow;
  for (size_t i = 0; i < sweep.size() && !flags.compileOnly && !stopped; ++i)
    if (!done[i])
      (rt::planRanks(plans[i]) == 1 && rt::launchedProcesses() <= 1 ? inRounds : inRow)
          .push_back(i);
  if (inRounds.size() < 2) {
    inRow.insert(inRow.end(), inRounds.begin(), inRounds.end());
    std::sort(inRow.begin(), inRow.end());
    inRounds.clear();
  }
  if (!inRounds.empty()) {
    std::vector<RoundEntry> entries;
    for (size_t i : inRounds) {
      RoundEntry e;
      e.plan = &plans[i];
      e.result = &slots[i];
      e.options = flags.runOptions();
      e.options.progressLabel = label(i);
      e.name = sweep[i].displayName(models);
      entries.push_back(std::move(e));
    }
    rt::Status ran = runInRounds(entries, flags.repeats, [&](size_t k) {
      size_t i = inRounds[k];
      done[i] = true;
      if (std::string warning = nonFiniteLossWarning(slots[i]);
          !warning.empty() && rt::launchedRank() == 0)
        llvm::errs() << ("dlc-bench: warning: " + warning + "\n");
      if (writeDone())
        return rt::Status(rt::StatusCode::kInvalidArgument, "");
      return rt::Status::ok();
    });
    if (!ran.isOk() && !interruptSignal())
      return ran.message().empty() ? 1 : fail(ran.message());
    if (!ran.isOk()) {
      stopped = true;
      for (size_t i : inRow)
        slots[i] = notRun(sweep[i]);
    }
  }
  for (size_t i : inRow) {
    if (stopped)
      break;
    if (interruptSignal()) {
      for (size_t j : inRow)
        if (!done[j])
          slots[j] = notRun(sweep[j]);
      break;
    }
    int rc = runConfiguration(flags, plans[i], label(i), slots[i]);
    if (rc == kInterrupted) {
      for (size_t j : inRow)
        if (!done[j] && j != i)
          slots[j] = notRun(sweep[j]);
      break;
    }
    if (rc)
      return rc;
    done[i] = true;
    if (i != inRow.back())
      if (int written = writeDone())
        return written;
  }
  results = std::move(slots);
  if (flags.resume && rt::launchedRank() == 0)
    llvm::errs() << "dlc-bench: --resume: " << resumed << " of " << sweep.size()
                 << " configurations were finished in " << flags.outputPath << " and kept\n";
  if (int written = writeOutputs())
    return written;
  if (int signal = interruptSignal()) {
    size_t finished = llvm::count_if(results, [](const Result &r) {
      return r.status.empty();
    });
    if (rt::launchedRank() == 0)
      llvm::errs() << "dlc-bench: stopped by " << interruptName() << ": " << finished
                   << " of " << sweep.size() << " configurations finished"
                   << (flags.outputPath != "-" ? ", written to " + flags.outputPath : std::string())
                   << "\n";
    return 128 + signal;
  }
  // The report is written, then a NaN or infinite loss fails the run.
  if (!flags.allowNonFinite && !llvm::all_of(results, lossFinite))
    return 1;
  return 0;
}


} // namespace dlc::bench
