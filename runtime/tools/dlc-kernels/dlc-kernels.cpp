//===- dlc-kernels.cpp - generate and compile a plan's CUDA kernels -------===//
//
//   dlc-kernels PLAN.plan... [--arch sm_80,sm_90] [--dump-kernels DIR]
//               [--cache DIR] [--no-compile]
//
// For every launch the plan summary calls "generated", writes its CUDA C++
// kernel (KernelCodegen.h) and compiles it with NVRTC for each
// architecture, through the disk cache (KernelCompiler.h). Prints the
// counts per fusion kind, per kernel form and per architecture, and the
// launches that stay on the library path with the reason. Exits non-zero,
// naming the kernel and printing NVRTC's log, when a kernel does not
// compile. Needs no GPU, and no MLIR: plans come from
// `dlc-bench MODEL --compile-only --emit-plan X.plan`.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/cuda/KernelCodegen.h"
#include "dlc/runtime/cuda/KernelCompiler.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>

using namespace dlc::rt;
using namespace dlc::rt::cuda;

namespace {

int usage(const char *message) {
  std::cerr << "dlc-kernels: " << message << "\n"
            << "usage: dlc-kernels PLAN.plan... [--arch sm_80,sm_90] [--dump-kernels DIR]\n"
            << "                   [--cache DIR] [--no-compile]\n";
  return 2;
}

std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty())
      parts.push_back(part);
  return parts;
}

std::string stem(const std::string &path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  return base.substr(0, base.rfind('.'));
}

bool makeDir(const std::string &path) {
  std::string partial;
  for (size_t at = 0; at != std::string::npos;) {
    at = path.find('/', at + 1);
    partial = path.substr(0, at);
    mkdir(partial.c_str(), 0755);
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// The dump's preamble: which plan kernels and buffers this launch binds,
/// as a comment, so the file compiles exactly like the source NVRTC saw.
std::string bindings(const Plan &plan, const GeneratedKernel &g) {
  std::string text = "// plan " + plan.model + " (batch " + std::to_string(plan.batch) +
                     ", fusion " + plan.fusion + "), launch #" + std::to_string(g.launch) +
                     ", plan kernels";
  for (size_t k : g.kernels)
    text += " #" + std::to_string(k);
  text += "\n";
  for (size_t i = 0; i < g.args.size(); ++i)
    text += "//   argument " + std::to_string(i) + ": '" + plan.buffers[g.args[i]].name + "'\n";
  for (const OptimizerSegment &s : g.segments)
    text += "//   segment: " + std::string(s.adamw ? "adamw" : "sgd") + " '" +
            plan.buffers[s.param].name + "', " + std::to_string(s.elements) + " elements\n";
  return text + "\n";
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> plans, archs = {"sm_80", "sm_90"};
  std::string dumpDir, cacheDir = defaultKernelCacheDir();
  bool compile = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc) {
        usage((std::string(flag) + " needs a value").c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--arch")
      archs = splitCommas(value("--arch"));
    else if (arg == "--dump-kernels")
      dumpDir = value("--dump-kernels");
    else if (arg == "--cache")
      cacheDir = value("--cache");
    else if (arg == "--no-compile")
      compile = false;
    else if (arg == "-h" || arg == "--help")
      return usage("generates and compiles the CUDA kernels of compiled plans"), 0;
    else if (!arg.empty() && arg[0] == '-')
      return usage(("unknown option '" + arg + "'").c_str());
    else
      plans.push_back(arg);
  }
  if (plans.empty())
    return usage("no plan given");
  if (archs.empty())
    return usage("--arch names no architecture");
  for (const std::string &arch : archs)
    if (arch.rfind("sm_", 0) != 0)
      return usage(("'" + arch + "' is not an architecture like sm_80 or sm_90").c_str());
  if (compile && !nvrtcBuilt()) {
    std::cerr << "dlc-kernels: " << nvrtcVersionString().status().toString()
              << " (use --no-compile to generate only)\n";
    return 1;
  }

  KernelCompiler compiler(cacheDir);
  int failures = 0;
  for (const std::string &path : plans) {
    auto plan = readPlanFile(path);
    if (!plan.isOk()) {
      std::cerr << "dlc-kernels: " << plan.status().toString() << "\n";
      return 1;
    }
    PlanKernels all = generatePlanKernels(*plan);
    std::map<std::string, int> byKind, byForm;
    std::set<std::string> distinct;
    std::vector<Launch> launches = planLaunches(*plan);
    for (const GeneratedKernel &g : all.kernels) {
      const std::string &kind = launches[g.launch].kind;
      ++byKind[kind];
      ++byForm[kernelFormName(g.form)];
      distinct.insert(g.name);
    }
    std::cout << "plan " << path << ": " << plan->model << ", batch " << plan->batch
              << ", fusion " << plan->fusion << "\n"
              << "generated launches: " << all.kernels.size() + all.refused.size()
              << ", kernels: " << all.kernels.size() << " (" << distinct.size()
              << " distinct), library path: " << all.refused.size() << "\n";
    for (const auto &[kind, n] : byKind)
      std::cout << "  kind " << kind << ": " << n << "\n";
    for (const auto &[form, n] : byForm)
      std::cout << "  form " << form << ": " << n << "\n";
    for (const auto &[launch, reason] : all.refused)
      std::cout << "  library path: launch #" << launch.index << " (" << launch.kind
                << "): " << reason << "\n";

    if (!dumpDir.empty()) {
      std::string dir = plans.size() > 1 ? dumpDir + "/" + stem(path) : dumpDir;
      if (!makeDir(dir)) {
        std::cerr << "dlc-kernels: cannot create directory " << dir << "\n";
        return 1;
      }
      for (const GeneratedKernel &g : all.kernels) {
        char index[16];
        std::snprintf(index, sizeof(index), "%04zu", g.launch);
        std::string file = dir + "/" + index + "-" + g.name + ".cu";
        std::ofstream out(file);
        out << bindings(*plan, g) << g.source;
        if (!out) {
          std::cerr << "dlc-kernels: cannot write " << file << "\n";
          return 1;
        }
      }
      std::cout << "  wrote " << all.kernels.size() << " sources to " << dir << "\n";
    }
    if (!compile)
      continue;
    for (const std::string &arch : archs) {
      int64_t hits = compiler.cacheHits(), misses = compiler.cacheMisses();
      int compiled = 0, failed = 0;
      std::set<std::string> done;
      for (const GeneratedKernel &g : all.kernels) {
        if (done.count(g.name)) {
          ++compiled;
          continue;
        }
        auto cubin = compiler.compile(g.name, g.source, arch);
        if (!cubin.isOk()) {
          ++failed;
          std::cerr << "dlc-kernels: " << cubin.status().toString() << "\n";
          continue;
        }
        done.insert(g.name);
        ++compiled;
      }
      failures += failed;
      std::cout << "  arch " << arch << ": " << compiled << " compiled, " << failed
                << " failed (cache: " << compiler.cacheHits() - hits << " hits, "
                << compiler.cacheMisses() - misses << " misses)\n";
    }
  }
  if (failures) {
    std::cerr << "dlc-kernels: " << failures << " kernel(s) did not compile\n";
    return 1;
  }
  return 0;
}
