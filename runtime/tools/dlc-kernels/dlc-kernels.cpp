//===- dlc-kernels.cpp - generate and compile a plan's CUDA kernels -------===//
//
//   dlc-kernels PLAN.plan... [--arch sm_80,sm_90] [--dump-kernels DIR]
//               [--cache DIR] [--no-compile] [--paths] [--check-host [TOL]]
//
// For every launch the CUDA backend generates (LaunchPaths.h: the parts of
// split groups included), writes its CUDA C++ kernel (KernelCodegen.h), and
// compiles it and every hand-written family the plan uses with NVRTC for
// each architecture, through the disk cache (KernelCompiler.h). Prints the
// counts per fusion kind, per kernel form and per architecture, and the
// groups split, with the reason. Exits non-zero,
// naming the kernel and printing NVRTC's log, when a kernel does not
// compile. --paths prints, instead, the device path every launch of the
// CUDA backend takes (LaunchPaths.h) and why each host fallback happens,
// and, for both the CUDA and the CPU backend, the groups split and those
// that run as one library call and one generated kernel ("call + kernel").
// --check-host compiles the CPU fast mode's kernels instead (HostKernels.h)
// and runs each generated launch against the reference kernels on random
// operands, failing when one is off by more than TOL (relative to the
// largest value of a buffer; default 1e-4), or, for a half-precision buffer,
// by more than one unit of its type.
// Needs no GPU, and no MLIR: plans come from
// `dlc-bench MODEL --compile-only --emit-plan X.plan`.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Parallel.h"
#include "dlc/runtime/Plan.h"
#include "dlc/runtime/cpu/HostKernels.h"
#include "dlc/runtime/cuda/HandKernels.h"
#include "dlc/runtime/codegen/KernelCodegen.h"
#include "dlc/runtime/cuda/KernelCompiler.h"
#include "dlc/runtime/cuda/KernelDump.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

using namespace dlc::rt;
using namespace dlc::rt::cuda;

namespace {

int usage(const char *message) {
  std::cerr << "dlc-kernels: " << message << "\n"
            << "usage: dlc-kernels PLAN.plan... [--arch sm_80,sm_90] [--dump-kernels DIR]\n"
            << "                   [--cache DIR] [--no-compile] [--paths]\n"
            << "  --arch A,B          architectures to compile for (default sm_80,sm_90)\n"
            << "  --dump-kernels DIR  write every generated source, with its plan bindings\n"
            << "                      (CUDA in DIR, the CPU backend's host C++ in DIR/host)\n"
            << "  --cache DIR         NVRTC's disk cache (default $DLC_KERNEL_CACHE or\n"
            << "                      ~/.cache/dlc/kernels)\n"
            << "  --no-compile        generate only\n"
            << "  --paths             print the CUDA backend's path for every launch (no GPU\n"
            << "                      needed): launches per path, and each host fallback's op\n"
            << "                      and reason\n"
            << "  --verbose           with --paths: every launch, its ops and path; with\n"
            << "                      --check-host: every generated launch's error, and with\n"
            << "                      --time-host every one's time, not only the slowest\n"
            << "  --time-host         with --check-host: also time each generated launch alone\n"
            << "                      (the fastest of up to 50 runs) and list the slowest\n"
            << "  --check-host [TOL]  compile the CPU fast mode's host kernels and check each\n"
            << "                      generated launch against the reference on random\n"
            << "                      operands (relative error at most TOL, default 1e-4,\n"
            << "                      or one unit of an f16 / bf16 result)\n";
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

/// --time-host: the generated launches' total and the slowest (`all`: every
/// one), by the fastest of their timed runs, with the rate each streams its
/// buffers at.
void printHostTimes(const Plan &plan, const std::vector<cpu::HostLaunch> &launches,
                    const std::vector<cpu::HostLaunchCheck> &checks, bool all) {
  std::vector<const cpu::HostLaunchCheck *> order;
  double total = 0;
  for (const cpu::HostLaunchCheck &c : checks) {
    order.push_back(&c);
    total += c.minSeconds;
  }
  std::sort(order.begin(), order.end(),
            [](auto *a, auto *b) { return a->minSeconds > b->minSeconds; });
  std::cout << "  generated launches alone, " << cpuThreadCount() << " threads: "
            << total * 1e3 << " ms in all (each the fastest of its runs); the slowest:\n";
  for (size_t i = 0; i < order.size() && (all || i < 12); ++i) {
    const cpu::HostLaunch &h = launches[order[i]->launch];
    int64_t bytes = 0;
    for (int32_t id : h.kernel->args)
      bytes += plan.buffers[id].bytes;
    std::cout << "    launch #" << order[i]->launch << " " << h.kernel->name << ": "
              << order[i]->minSeconds * 1e6 << " us, " << bytes / order[i]->minSeconds / 1e9
              << " GB/s of its buffers\n";
  }
}

/// --check-host: 1 when a launch fails the check or nothing compiles.
int checkHostKernels(const std::string &path, const Plan &plan, double tolerance,
                     bool verbose, bool time) {
  auto host = cpu::HostKernels::create(plan);
  if (!host.isOk()) {
    std::cerr << "dlc-kernels: " << host.status().toString() << "\n";
    return 1;
  }
  const cpu::HostKernelStats &s = (*host)->stats();
  std::cout << "plan " << path << ": " << plan.model << ", batch " << plan.batch << ", fusion "
            << plan.fusion << ", " << plan.precision << "\n"
            << "host launches: " << s.launches << ", generated: " << s.generated << " ("
            << s.kernels << " of " << plan.kernels.size() << " kernels, " << s.distinct
            << " distinct), "
            << (s.cacheHit ? std::string("from the cache")
                           : "compiled in " + std::to_string(s.compileSeconds) + " s")
            << "\n";
  auto checks = cpu::checkHostLaunches(plan, 1, cpu::defaultHostKernelCacheDir(), time ? 50 : 0);
  if (!checks.isOk()) {
    std::cerr << "dlc-kernels: " << checks.status().toString() << "\n";
    return 1;
  }
  const std::vector<cpu::HostLaunch> &launches = (*host)->launches();
  const cpu::HostLaunchCheck *worst = nullptr;
  int failed = 0;
  for (const cpu::HostLaunchCheck &c : *checks) {
    const cpu::HostLaunch &h = launches[c.launch];
    bool bad = !c.within(tolerance);
    failed += bad;
    if (!worst || !(c.error <= worst->error))
      worst = &c;
    if (verbose || bad)
      std::cout << "  " << (bad ? "MISMATCH " : "") << "launch #" << c.launch << " ("
                << h.launch.kind << ", " << kernelFormName(h.kernel->form) << ", "
                << h.launch.kernels.size() << " kernels): error " << c.error << " in '"
                << c.buffer << "'\n";
  }
  std::cout << "  checked " << checks->size() << " launches against the reference: "
            << (failed ? std::to_string(failed) + " off by more than " : "all within ")
            << tolerance << " (or a unit of a half type)";
  if (worst)
    std::cout << ", worst " << worst->error << " (launch #" << worst->launch << ", "
              << launches[worst->launch].launch.kind << ")";
  std::cout << "\n";
  if (time)
    printHostTimes(plan, launches, *checks, verbose);
  return failed ? 1 : 0;
}

/// --paths: the CPU backend's launches as the device's, its groups split
/// and those run as one call and one generated kernel.
void printHostSplits(const Plan &plan) {
  std::vector<cpu::HostLaunch> launches = cpu::planHostLaunches(plan);
  std::set<int64_t> split, pairs;
  std::map<std::string, std::pair<int64_t, std::string>> splitKinds, pairKinds;
  for (const cpu::HostLaunch &h : launches) {
    if (h.splitFromGroup && !h.callPlusKernel && split.insert(h.launch.group).second) {
      auto &entry = splitKinds[h.launch.kind];
      if (entry.first++ == 0)
        entry.second = h.splitReason;
    }
    if (h.callPlusKernel && pairs.insert(h.launch.group).second) {
      auto &entry = pairKinds[h.launch.kind];
      if (entry.first++ == 0)
        entry.second = h.splitReason;
    }
  }
  std::cout << "host launches: " << launches.size() << ", splits: " << split.size()
            << ", call + kernel: " << pairs.size() << "\n";
  for (const auto &[kind, entry] : splitKinds)
    std::cout << "  host split groups: " << kind << " x" << entry.first << ": " << entry.second
              << "\n";
  for (const auto &[kind, entry] : pairKinds)
    std::cout << "  host call + kernel: " << kind << " x" << entry.first << ": "
              << entry.second << "\n";
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> plans, archs = {"sm_80", "sm_90"};
  std::string dumpDir, cacheDir = defaultKernelCacheDir();
  bool compile = true, paths = false, verbose = false, checkHost = false, timeHost = false;
  double tolerance = 1e-4;
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
    else if (arg == "--paths")
      paths = true;
    else if (arg == "--verbose")
      verbose = true;
    else if (arg == "--time-host")
      timeHost = true;
    else if (arg == "--check-host") {
      checkHost = true;
      if (i + 1 < argc && argv[i + 1][0] != '-' && std::isdigit(argv[i + 1][0]))
        tolerance = std::atof(argv[++i]);
    }
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
  if (paths || checkHost)
    compile = false;
  if (compile && !nvrtcBuilt()) {
    std::cerr << "dlc-kernels: " << nvrtcVersionString().status().toString()
              << " (use --no-compile to generate only)\n";
    return 1;
  }

  KernelCompiler compiler(cacheDir);
  int failures = 0, hostFailures = 0;
  for (const std::string &path : plans) {
    auto plan = readPlanFile(path);
    if (!plan.isOk()) {
      std::cerr << "dlc-kernels: " << plan.status().toString() << "\n";
      return 1;
    }
    if (paths) {
      printLaunchPaths(std::cout, path, *plan, verbose);
      printHostSplits(*plan);
      continue;
    }
    if (checkHost) {
      hostFailures += checkHostKernels(path, *plan, tolerance, verbose, timeHost);
      continue;
    }
    // The kernels the CUDA backend compiles for this plan: every generated
    // device launch (split groups' parts included) and every hand-written
    // family a launch uses.
    std::vector<DeviceLaunch> device = planDeviceLaunches(*plan);
    std::vector<Launch> launches = launchesOf(device);
    PlanKernels all;
    std::set<std::string> families;
    std::map<std::string, int> byKind, byForm;
    std::set<std::string> distinct;
    std::set<int64_t> splitGroups, pairGroups;
    std::map<std::string, std::pair<int64_t, std::string>> splits; // by kind
    std::map<std::string, std::pair<int64_t, std::string>> pairs; // by kind
    for (const DeviceLaunch &d : device) {
      if (d.callPlusKernel && pairGroups.insert(d.launch.group).second) {
        auto &entry = pairs[d.launch.kind];
        if (entry.first++ == 0)
          entry.second = d.splitReason;
      }
      if (d.splitFromGroup && !d.callPlusKernel && splitGroups.insert(d.launch.group).second) {
        auto &entry = splits[d.launch.kind];
        if (entry.first++ == 0)
          entry.second = d.splitReason;
      }
      if (d.path == DevicePath::kHandWritten) {
        auto hand = planHandKernel(*plan, plan->kernels[d.launch.kernels.front()]);
        if (hand.isOk())
          families.insert(hand->family);
      }
      if (d.path != DevicePath::kGenerated)
        continue;
      auto g = generateKernel(*plan, d.launch, launches);
      if (!g.isOk()) {
        std::cerr << "dlc-kernels: " << g.status().toString() << "\n";
        return 1;
      }
      ++byKind[d.launch.kind];
      ++byForm[kernelFormName(g->form)];
      distinct.insert(g->name);
      all.kernels.push_back(std::move(*g));
    }
    std::cout << "plan " << path << ": " << plan->model << ", batch " << plan->batch
              << ", fusion " << plan->fusion << "\n"
              << "device launches: " << device.size() << ", generated: " << all.kernels.size()
              << " (" << distinct.size() << " distinct), hand-written families: "
              << families.size() << ", split groups: " << splitGroups.size()
              << ", call + kernel: " << pairGroups.size() << "\n";
    for (const auto &[kind, n] : byKind)
      std::cout << "  kind " << kind << ": " << n << "\n";
    for (const auto &[form, n] : byForm)
      std::cout << "  form " << form << ": " << n << "\n";
    for (const auto &[kind, entry] : splits)
      std::cout << "  split groups: " << kind << " x" << entry.first << ": " << entry.second
                << "\n";
    for (const auto &[kind, entry] : pairs)
      std::cout << "  call + kernel: " << kind << " x" << entry.first << ": " << entry.second
                << "\n";

    if (!dumpDir.empty()) {
      std::string dir = plans.size() > 1 ? dumpDir + "/" + stem(path) : dumpDir;
      if (Status written = writeKernelSources(*plan, all.kernels, dir); !written.isOk()) {
        std::cerr << "dlc-kernels: " << written.toString() << "\n";
        return 1;
      }
      std::vector<GeneratedKernel> host = cpu::planHostKernels(*plan);
      if (Status written = writeKernelSources(*plan, host, dir + "/host"); !written.isOk()) {
        std::cerr << "dlc-kernels: " << written.toString() << "\n";
        return 1;
      }
      std::cout << "  wrote " << all.kernels.size() << " sources to " << dir << " and "
                << host.size() << " host sources to " << dir << "/host\n";
    }
    if (!compile)
      continue;
    std::vector<std::pair<std::string, std::string>> sources;
    for (const GeneratedKernel &g : all.kernels)
      sources.push_back({g.name, g.source});
    for (const std::string &family : families)
      sources.push_back({"dlc_hw_" + family, handKernelSource(family)});
    for (const std::string &arch : archs) {
      int64_t hits = compiler.cacheHits(), misses = compiler.cacheMisses();
      int compiled = 0, failed = 0;
      std::set<std::string> done;
      for (const auto &[name, source] : sources) {
        if (done.count(name)) {
          ++compiled;
          continue;
        }
        auto cubin = compiler.compile(name, source, arch);
        if (!cubin.isOk()) {
          ++failed;
          std::cerr << "dlc-kernels: " << cubin.status().toString() << "\n";
          continue;
        }
        done.insert(name);
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
  if (hostFailures) {
    std::cerr << "dlc-kernels: the host kernels of " << hostFailures
              << " plan(s) are not the reference's\n";
    return 1;
  }
  return 0;
}
