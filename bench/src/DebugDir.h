//===- DebugDir.h - dlc-bench --debug-dir: every stage, as files -*- C++ -*-===//
//
// What TORCH_COMPILE_DEBUG gives a PyTorch user, for each configuration
// dlc-bench compiles: the IR after each pass (000-<pass>.mlir, 001-...), the
// plan as text (plan.txt), the CUDA backend's route for every launch
// (routing.txt, as `dlc-kernels --paths --verbose`), the generated kernels
// (kernels/, as --dump-kernels), the fusion passes' refusals grouped by
// reason (fusion.md) and an index.html linking them. A sweep writes each
// configuration to a subdirectory and an index.html over them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_DEBUGDIR_H
#define DLC_BENCH_DEBUGDIR_H

#include "FusionExplain.h"

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/Status.h"

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace dlc::bench {

/// Creates `dir` (and its parents) and writes and removes a file in it, so
/// that a directory that cannot be written fails before any compile.
/// Returns "" or the reason.
std::string checkWritableDirectory(const std::string &dir);

/// Writes the IR after each pass of `pm` to DIR/<NNN>-<pass argument>.mlir,
/// numbered in the order the passes ran, each file parseable by dlc-opt.
/// The first file that cannot be written is `*error`'s (left "" if none).
void dumpIRAfterEachPass(mlir::PassManager &pm, const std::string &dir, std::string *error);

/// --dump-kernels: the CUDA backend's generated kernels to DIR (.cu) and
/// the CPU backend's to DIR/host (.cpp). `summary` says how many and where.
rt::Status writeGeneratedKernels(const rt::Plan &plan, const std::string &dir,
                                 std::string &summary);

/// Writes plan.txt, routing.txt, kernels/, fusion.md (when `remarks`: a
/// plan read from a file has none) and index.html to `dir`, beside the IR
/// files dumpIRAfterEachPass wrote there.
rt::Status writeConfigurationDebugFiles(const std::string &dir, const std::string &label,
                                        const rt::Plan &plan,
                                        const std::vector<FusionRemark> *remarks);

/// One configuration of a sweep's debug directory.
struct DebugEntry {
  std::string label;     ///< "fp32 xla, batch 4"
  std::string directory; ///< its subdirectory's name
};

/// A sweep's DIR/index.html: a link to each configuration's index.html.
rt::Status writeSweepDebugIndex(const std::string &dir, const std::vector<DebugEntry> &entries);

/// "fp32-xla-b4-gpus1" as a directory name on any file system: every
/// character but letters, digits, '.', '-' and '_' becomes '_'.
std::string safeDirectoryName(const std::string &name);

} // namespace dlc::bench

#endif // DLC_BENCH_DEBUGDIR_H
