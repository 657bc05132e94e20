//===- dlc-bench.cpp - compile a model's training step and time it --------===//
//
// What is timed: only the training steps themselves. For each repeat the
// parameters are initialized from the seed and a synthetic batch is drawn
// (not timed), `--warmup` steps run untimed, then `--steps` steps run
// back to back between two clock reads; samples/s = batch x steps / elapsed.
// The report gives the median over `--repeats` with its bootstrap confidence
// interval (Stats.h), min and max; speed-ups are called only where the
// interval of their ratio excludes 1. A sweep compiles every configuration
// first, then times its single-rank ones in rounds, one repeat of each per
// round (Rounds.h), and records the host's other load per repeat.
// What is not timed: parsing, compiling (reported separately as compile
// time), planning, arena allocation, initialization and data synthesis.
// Every repeat starts from the same parameters and batch, so its losses are
// the same sequence: a repeat that trains differently is a bug, not noise.
//
//===----------------------------------------------------------------------===//

#include "CalibrateCommand.h"
#include "Compare.h"
#include "GpuPeaks.h"
#include "Html.h"
#include "Networks.h"
#include "RunCommand.h"

#include "dlc/InitAll.h"
#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Parallel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/InitLLVM.h"

#include <iostream>
#include <string>
#include <vector>

namespace bench = ::dlc::bench;
namespace rt = ::dlc::rt;

namespace {

/// What --help says above the flags of the run command.
constexpr const char *kOverview =
    "dlc-bench: compile a model's whole training step and time it\n\n"
    "  dlc-bench models/small_convnet.mlir --batch 32 --format json\n"
    "  dlc-bench compare BEFORE.json AFTER.json\n"
    "  dlc-bench report A.json [B.json ...] -o report.html\n"
    "  dlc-bench gpus [PRECISION]   (the known GPU peaks --gpu picks from)\n\n"
    "Reports samples/s (median over --repeats with its bootstrap confidence\n"
    "interval, min and max), step time,\n"
    "kernels per step, arena bytes and the loss at the first and last step.\n";

/// A subcommand: `dlc-bench NAME ARGS...`, its arguments after the name.
struct Subcommand {
  llvm::StringRef name;
  int (*run)(const std::vector<std::string> &args);
};

int compareCommand(const std::vector<std::string> &args) {
  if (args.size() != 2) {
    std::cerr << "usage: dlc-bench compare BEFORE.json AFTER.json\n";
    return 1;
  }
  return bench::runCompare(args[0], args[1], std::cout, std::cerr);
}

int calibrateCommand(const std::vector<std::string> &args) {
  mlir::dlc::registerAllPasses();
  return bench::runCalibrate(args, std::cout, std::cerr);
}

/// Every subcommand but the run command, which takes a model and no name.
const Subcommand kSubcommands[] = {
    {"compare", compareCommand},
    {"report", [](const std::vector<std::string> &args) {
       return bench::runReport(args, std::cerr);
     }},
    {"calibrate", calibrateCommand},
    {"networks", [](const std::vector<std::string> &) { return bench::runNetworks(std::cout); }},
    {"gpus", [](const std::vector<std::string> &args) {
       return bench::runGpus(args, std::cout, std::cerr);
     }},
};

int benchMain(int argc, char **argv) {
  if (argc >= 2)
    for (const Subcommand &command : kSubcommands)
      if (command.name == argv[1])
        return command.run(std::vector<std::string>(argv + 2, argv + argc));
  return bench::runBench(argc, argv, kOverview);
}

} // namespace

int main(int argc, char **argv) {
  rt::pinOpenMpThreads(argv);
  llvm::InitLLVM init(argc, argv);
  int rc = benchMain(argc, argv);
  // Under mpirun: MPI_Finalize, or MPI_Abort after an error so that no other
  // rank waits for this one.
  rt::leaveProcessRankGroup(rc != 0);
  return rc;
}
