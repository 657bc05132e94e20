//===- Json.h - reading dlc-bench's JSON reports ---------------*- C++ -*-===//
//
// One reader for every tool that takes reports back in (compare, report):
// dlc-bench's own JSON and the peers' (schema "dlc-bench/1"), where a peer
// may leave a field null.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_JSON_H
#define DLC_BENCH_JSON_H

#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace dlc::bench {

/// The configurations of one report file: a single result, a sweep's
/// {"results": [...]} or a --compile-only report, each as its JSON object;
/// a sweep's configurations that a signal left unfinished ("status") are
/// left out.
/// On failure returns false with `error` saying which file and what is wrong.
bool readReport(const std::string &path, std::vector<llvm::json::Object> &results,
                std::string &error);
/// The same for a report already in memory; `name` says where it came from.
bool parseReport(llvm::StringRef text, const std::string &name,
                 std::vector<llvm::json::Object> &results, std::string &error);

/// "model backend precision fusion gpus N batch B": what makes two results
/// the same configuration; a missing or null field reads "?".
std::string configurationKey(const llvm::json::Object &result);

/// The result's host as hostDescription (Provenance.h) names it, or ""
/// where the report has no "host" (reports from before it had one).
std::string reportHost(const llvm::json::Object &result);

} // namespace dlc::bench

#endif // DLC_BENCH_JSON_H
