//===- FusionExplain.h - the fusion passes' refusals, grouped ---*- C++ -*-===//
//
// With `explain`, every fusion pass reports each candidate it did not fuse
// as a remark on the op, "... not fused ...: <reason>" (FusionUtils.h's
// decisions). A model as large as ResNet-50 gives over a hundred of them,
// most saying the same thing at another op, so --explain-fusion groups them
// by message, with a count and the first few places each was said (the
// aggregation PyTorch users asked of Inductor's per-pair logs);
// --explain-fusion=all passes every remark through as MLIR prints it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_FUSIONEXPLAIN_H
#define DLC_BENCH_FUSIONEXPLAIN_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace dlc::bench {

/// One refusal: where (file:line:col of the op) and the message.
struct FusionRemark {
  std::string site;
  std::string message;
  /// The site's position, to list sites in source order (0 if unknown).
  unsigned line = 0, column = 0;
};

/// Collects the remarks of `context` while it lives: on a compile that
/// succeeds, the fusion passes' refusals are its only remarks (a plugin's
/// too, however worded). With `passThrough` they also reach the handlers
/// registered before it (printed as without it); without, they are kept
/// here only.
class FusionRemarkCollector {
public:
  FusionRemarkCollector(mlir::MLIRContext &context, bool passThrough);
  ~FusionRemarkCollector();
  FusionRemarkCollector(const FusionRemarkCollector &) = delete;
  FusionRemarkCollector &operator=(const FusionRemarkCollector &) = delete;

  /// In the order the passes emitted them.
  const std::vector<FusionRemark> &remarks() const { return collected; }

  /// Stops collecting and emits what was kept, as it would have been
  /// printed without the collector: after a failed compile, a remark is the
  /// context of its error ("while specializing the batch size ...").
  void release();

private:
  mlir::MLIRContext &context;
  bool passThrough;
  mlir::DiagnosticEngine::HandlerID handler;
  bool registered = true;
  std::vector<FusionRemark> collected;
  std::vector<mlir::Location> locations;
};

/// The remarks that say one thing: how many, and the distinct sites in
/// source order.
struct FusionReason {
  std::string message;
  size_t count = 0;
  std::vector<std::string> sites;
};

/// Sites a summary shows per reason; the rest are counted.
constexpr size_t kFusionSitesShown = 3;

/// Groups `remarks` by message, most frequent first (ties: first emitted
/// first).
std::vector<FusionReason> groupFusionRemarks(const std::vector<FusionRemark> &remarks);

/// "a, b, c and 4 more": the reason's first sites, the rest counted.
std::string fusionSitesText(const FusionReason &reason);

/// The grouped summary on a terminal: a line naming the configuration
/// (`label`, "" for a single one) with the totals, then per reason its count
/// and message, and a line with its first sites.
void printFusionSummary(llvm::raw_ostream &os, const std::vector<FusionRemark> &remarks,
                        const std::string &label);

/// The same as Markdown: a table of reasons, then every remark.
void writeFusionMarkdown(llvm::raw_ostream &os, const std::vector<FusionRemark> &remarks,
                         const std::string &label);

} // namespace dlc::bench

#endif // DLC_BENCH_FUSIONEXPLAIN_H
