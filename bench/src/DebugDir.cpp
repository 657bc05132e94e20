//===- DebugDir.cpp - dlc-bench --debug-dir: every stage, as files --------===//

#include "DebugDir.h"

#include "Html.h"

#include "dlc/runtime/PlanListing.h"
#include "dlc/runtime/cpu/HostKernels.h"
#include "dlc/runtime/cuda/KernelDump.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;
namespace rt = ::dlc::rt;
using namespace dlc::bench;

namespace {

/// The IR printer instrumentation's sink: one numbered file per pass, the
/// IR after it, whether or not the pass changed anything, so that file N is
/// the N-th pass of the pipeline.
class NumberedFilePrinter final : public mlir::PassManager::IRPrinterConfig {
public:
  NumberedFilePrinter(std::string dir, std::string *error)
      : IRPrinterConfig(/*printModuleScope=*/false, /*printAfterOnlyOnChange=*/false),
        dir(std::move(dir)), error(error) {}

  void printAfterIfEnabled(mlir::Pass *pass, mlir::Operation *, PrintCallbackFn print) override {
    std::string name =
        pass->getArgument().empty() ? pass->getName().str() : pass->getArgument().str();
    char number[16];
    std::snprintf(number, sizeof(number), "%03u", next++);
    std::string path = dir + "/" + number + "-" + safeDirectoryName(name) + ".mlir";
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (!ec)
      print(os);
    if ((ec || os.has_error()) && error->empty())
      *error = "cannot write " + path + (ec ? ": " + ec.message() : std::string());
  }

private:
  std::string dir;
  std::string *error;
  /// Passes nested on functions may print from several threads.
  std::atomic<unsigned> next{0};
};

/// Files of a previous run in `dir` whose names match `pattern`: removed,
/// so that the index lists only this run's (the user's own files stay).
void removeStale(const std::string &dir, const std::regex &pattern) {
  std::error_code ec;
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && std::regex_match(e.path().filename().string(), pattern))
      fs::remove(e.path(), ec);
}

const std::regex kIRFile("[0-9]{3}-.*\\.mlir");
const std::regex kKernelFile("[0-9]{4}-dlc_.*\\.(cu|cpp)");

/// The names of the regular files of `dir` matching `pattern`, sorted.
std::vector<std::string> filesIn(const std::string &dir, const std::regex &pattern) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && std::regex_match(e.path().filename().string(), pattern))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

rt::Status writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out)
    return rt::Status(rt::StatusCode::kInvalidArgument,
                      "cannot write " + path + ": " + std::strerror(errno));
  return rt::Status::ok();
}

const char *kPageStyle =
    "<style>body{font-family:system-ui,sans-serif;max-width:64em;margin:2em auto;"
    "padding:0 1em;line-height:1.45;color:#222}code,pre{font-family:ui-monospace,monospace;"
    "font-size:0.9em}pre{background:#f5f5f5;padding:0.6em;overflow-x:auto;"
    "white-space:pre-wrap}table{border-collapse:collapse}th,td{border:1px solid #ccc;"
    "padding:0.2em 0.5em;text-align:left;vertical-align:top}td.n{text-align:right}"
    "li{margin:0.1em 0}</style>\n";

void pageStart(std::ostream &os, const std::string &title) {
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
     << html::escape(title) << "</title>\n"
     << kPageStyle << "</head><body>\n<h1>" << html::escape(title) << "</h1>\n";
}

std::string link(const std::string &href) {
  return "<a href=\"" + html::escape(href) + "\">" + html::escape(href) + "</a>";
}

/// The links of one kernel directory, in a list a reader opens on demand.
void kernelList(std::ostream &os, const std::string &dir, const std::string &relative,
                const char *what) {
  std::vector<std::string> files = filesIn(dir + "/" + relative, kKernelFile);
  os << "<details><summary>" << files.size() << " " << what << " (" << html::escape(relative)
     << "/)</summary>\n<ul>\n";
  for (const std::string &f : files)
    os << "<li>" << link(relative + "/" + f) << "</li>\n";
  os << "</ul></details>\n";
}

} // namespace

std::string dlc::bench::safeDirectoryName(const std::string &name) {
  std::string safe = name;
  for (char &c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      c = '_';
  // "." and ".." name other directories.
  if (safe.find_first_not_of('.') == std::string::npos)
    safe = "_" + safe;
  return safe;
}

std::string dlc::bench::checkWritableDirectory(const std::string &dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return "cannot create directory " + dir + ": " + ec.message();
  if (!fs::is_directory(dir))
    return "cannot create directory " + dir + ": a file is there";
  std::string probe = dir + "/.dlc-bench-write-test";
  {
    std::ofstream out(probe);
    out << "x";
    out.close();
    if (!out)
      return "cannot write in " + dir + ": " + std::strerror(errno);
  }
  fs::remove(probe, ec);
  return "";
}

void dlc::bench::dumpIRAfterEachPass(mlir::PassManager &pm, const std::string &dir,
                                     std::string *error) {
  removeStale(dir, kIRFile);
  pm.enableIRPrinting(std::make_unique<NumberedFilePrinter>(dir, error));
}

rt::Status dlc::bench::writeGeneratedKernels(const rt::Plan &plan, const std::string &dir,
                                             std::string &summary) {
  auto kernels = rt::cuda::generateDeviceKernels(plan);
  if (!kernels.isOk())
    return kernels.status();
  if (rt::Status s = rt::cuda::writeKernelSources(plan, *kernels, dir); !s.isOk())
    return s;
  // The fast CPU backend's kernels: the same launches, the host target.
  std::vector<rt::codegen::GeneratedKernel> host = rt::cpu::planHostKernels(plan);
  if (rt::Status s = rt::codegen::writeKernelSources(plan, host, dir + "/host"); !s.isOk())
    return s;
  summary = std::to_string(kernels->size()) + " generated kernel sources to " + dir +
            " (CUDA) and " + std::to_string(host.size()) + " to " + dir +
            "/host (C++ for the CPU backend)";
  return rt::Status::ok();
}

rt::Status dlc::bench::writeConfigurationDebugFiles(const std::string &dir,
                                                    const std::string &label, const rt::Plan &plan,
                                                    const std::vector<FusionRemark> *remarks) {
  std::ostringstream listing, routing, routingSummary;
  rt::printPlanListing(listing, plan);
  if (rt::Status s = writeText(dir + "/plan.txt", listing.str()); !s.isOk())
    return s;
  rt::cuda::printLaunchPaths(routing, label, plan, /*verbose=*/true);
  if (rt::Status s = writeText(dir + "/routing.txt", routing.str()); !s.isOk())
    return s;
  rt::cuda::printLaunchPaths(routingSummary, label, plan, /*verbose=*/false);
  removeStale(dir + "/kernels", kKernelFile);
  removeStale(dir + "/kernels/host", kKernelFile);
  std::string kernelSummary;
  if (rt::Status s = writeGeneratedKernels(plan, dir + "/kernels", kernelSummary); !s.isOk())
    return s;
  if (remarks) {
    std::string text;
    llvm::raw_string_ostream os(text);
    writeFusionMarkdown(os, *remarks, label);
    if (rt::Status s = writeText(dir + "/fusion.md", text); !s.isOk())
      return s;
  }

  std::ostringstream page;
  pageStart(page, "dlc-bench debug: " + plan.model + ", " + label);
  page << "<p>Model " << html::escape(plan.model) << ", batch " << plan.batch << ", precision "
       << html::escape(plan.precision) << ", fusion " << html::escape(plan.fusion) << ": "
       << plan.kernels.size() << " plan kernels, arena " << plan.arenaBytes
       << " bytes.</p>\n<h2>IR after each pass</h2>\n";
  std::vector<std::string> passes = filesIn(dir, kIRFile);
  if (passes.empty())
    page << "<p>None: the step was read from a compiled plan.</p>\n";
  else
    page
        << "<p>In the order the passes ran; each file parses with dlc-opt.</p>\n<ol start=\"0\">\n";
  for (const std::string &f : passes)
    page << "<li>" << link(f) << "</li>\n";
  if (!passes.empty())
    page << "</ol>\n";
  page << "<h2>Plan</h2>\n<p>" << link("plan.txt") << ": every buffer (role, type, shape, "
       << "place in the arena) and every kernel in launch order.</p>\n"
       << "<h2>Launch routing</h2>\n<p>" << link("routing.txt")
       << ": the CUDA backend's path for every launch, as <code>dlc-kernels --paths "
       << "--verbose</code> prints it.</p>\n<pre>" << html::escape(routingSummary.str())
       << "</pre>\n";
  if (remarks) {
    std::vector<FusionReason> reasons = groupFusionRemarks(*remarks);
    page << "<h2>Fusion</h2>\n<p>" << link("fusion.md") << ": " << remarks->size()
         << " candidates not fused, " << reasons.size() << " reasons.</p>\n";
    if (!reasons.empty()) {
      page << "<table><tr><th>count</th><th>reason</th><th>first sites</th></tr>\n";
      for (const FusionReason &r : reasons) {
        page << "<tr><td class=\"n\">" << r.count << "</td><td>" << html::escape(r.message)
             << "</td><td>" << html::escape(fusionSitesText(r)) << "</td></tr>\n";
      }
      page << "</table>\n";
    }
  }
  page << "<h2>Generated kernels</h2>\n<p>What <code>--dump-kernels</code> writes: each "
       << "launch's source, starting with the plan kernels it computes and the buffer each "
       << "argument binds.</p>\n";
  kernelList(page, dir, "kernels", "CUDA sources");
  kernelList(page, dir, "kernels/host", "host C++ sources");
  page << "</body></html>\n";
  return writeText(dir + "/index.html", page.str());
}

rt::Status dlc::bench::writeSweepDebugIndex(const std::string &dir,
                                            const std::vector<DebugEntry> &entries) {
  std::ostringstream page;
  pageStart(page, "dlc-bench debug: " + std::to_string(entries.size()) + " configurations");
  page << "<ul>\n";
  for (const DebugEntry &e : entries)
    page << "<li><a href=\"" << html::escape(e.directory) << "/index.html\">"
         << html::escape(e.label) << "</a></li>\n";
  page << "</ul>\n</body></html>\n";
  return writeText(dir + "/index.html", page.str());
}
