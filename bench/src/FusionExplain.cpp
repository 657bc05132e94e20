//===- FusionExplain.cpp - the fusion passes' refusals, grouped -----------===//

#include "FusionExplain.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <tuple>

using namespace dlc::bench;

namespace {

/// The remark at "resnet50.mlir:120:10": the first file position the
/// location holds (ops autodiff or a fusion created carry their source op's,
/// inside a fused or named location); the directory is the same for all.
FusionRemark remarkAt(mlir::Location loc, std::string message) {
  FusionRemark remark{"", std::move(message)};
  std::string &site = remark.site;
  loc->walk([&](mlir::Location inner) {
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(inner)) {
      site = (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
              llvm::Twine(file.getLine()) + ":" + llvm::Twine(file.getColumn()))
                 .str();
      remark.line = file.getLine();
      remark.column = file.getColumn();
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  if (site.empty()) {
    llvm::raw_string_ostream os(site);
    loc.print(os);
  }
  return remark;
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

} // namespace

std::string dlc::bench::fusionSitesText(const FusionReason &reason) {
  std::string text;
  size_t shown = std::min(reason.sites.size(), kFusionSitesShown);
  for (size_t i = 0; i < shown; ++i)
    text += (i ? ", " : "") + reason.sites[i];
  if (reason.sites.size() > shown)
    text += " and " + std::to_string(reason.sites.size() - shown) + " more";
  return text;
}

namespace {

std::string totals(const std::vector<FusionRemark> &remarks,
                   const std::vector<FusionReason> &reasons) {
  return plural(remarks.size(), "candidate") + " not fused, " + plural(reasons.size(), "reason");
}

} // namespace

FusionRemarkCollector::FusionRemarkCollector(mlir::MLIRContext &context, bool passThrough)
    : context(context), passThrough(passThrough) {
  handler =
      context.getDiagEngine().registerHandler([this](mlir::Diagnostic &d) -> llvm::LogicalResult {
        if (d.getSeverity() != mlir::DiagnosticSeverity::Remark)
          return mlir::failure();
        collected.push_back(remarkAt(d.getLocation(), d.str()));
        locations.push_back(d.getLocation());
        // failure() hands the remark on to the handlers before this one.
        return this->passThrough ? mlir::failure() : mlir::success();
      });
}

FusionRemarkCollector::~FusionRemarkCollector() {
  if (registered)
    context.getDiagEngine().eraseHandler(handler);
}

void FusionRemarkCollector::release() {
  if (!registered)
    return;
  context.getDiagEngine().eraseHandler(handler);
  registered = false;
  if (passThrough)
    return;
  for (auto [remark, loc] : llvm::zip(collected, locations))
    mlir::emitRemark(loc) << remark.message;
}

std::vector<FusionReason> dlc::bench::groupFusionRemarks(const std::vector<FusionRemark> &remarks) {
  // Each message's reason, by its index in `reasons`, first said first.
  llvm::StringMap<size_t> indexOf;
  std::vector<FusionReason> reasons;
  std::vector<std::vector<const FusionRemark *>> said;
  for (const FusionRemark &r : remarks) {
    auto [it, added] = indexOf.try_emplace(r.message, reasons.size());
    if (added) {
      reasons.push_back({r.message, 0, {}});
      said.emplace_back();
    }
    ++reasons[it->second].count;
    said[it->second].push_back(&r);
  }
  for (size_t i = 0; i < reasons.size(); ++i) {
    std::stable_sort(said[i].begin(), said[i].end(),
                     [](const FusionRemark *a, const FusionRemark *b) {
                       return std::tie(a->line, a->column) < std::tie(b->line, b->column);
                     });
    for (const FusionRemark *r : said[i])
      if (!llvm::is_contained(reasons[i].sites, r->site))
        reasons[i].sites.push_back(r->site);
  }
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const FusionReason &a, const FusionReason &b) { return a.count > b.count; });
  return reasons;
}

void dlc::bench::printFusionSummary(llvm::raw_ostream &os, const std::vector<FusionRemark> &remarks,
                                    const std::string &label) {
  std::vector<FusionReason> reasons = groupFusionRemarks(remarks);
  os << "dlc-bench: fusion" << (label.empty() ? "" : " of " + label) << ": "
     << totals(remarks, reasons) << (reasons.empty() ? "" : " (--explain-fusion=all lists each)")
     << "\n";
  for (const FusionReason &reason : reasons)
    os << llvm::format("%5zu", reason.count) << "x " << reason.message << "\n"
       << "        at " << fusionSitesText(reason) << "\n";
}

void dlc::bench::writeFusionMarkdown(llvm::raw_ostream &os,
                                     const std::vector<FusionRemark> &remarks,
                                     const std::string &label) {
  std::vector<FusionReason> reasons = groupFusionRemarks(remarks);
  os << "# Fusion: " << label << "\n\n"
     << totals(remarks, reasons) << ", as the fusion passes explained them.\n\n";
  if (reasons.empty())
    return;
  // A `|` in a message would end its cell.
  auto cell = [](llvm::StringRef text) {
    std::string escaped;
    for (char c : text)
      escaped += c == '|' ? std::string("\\|") : std::string(1, c);
    return escaped;
  };
  os << "## By reason\n\n| count | reason | first sites |\n|---:|---|---|\n";
  for (const FusionReason &reason : reasons)
    os << "| " << reason.count << " | " << cell(reason.message) << " | "
       << cell(fusionSitesText(reason)) << " |\n";
  os << "\n## Every remark, in the order the passes made them\n\n";
  for (const FusionRemark &r : remarks)
    os << "- " << r.site << ": " << r.message << "\n";
}
