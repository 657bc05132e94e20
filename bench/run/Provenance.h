//===- Provenance.h - what produced a report ------------------------------===//
//
// A figure is only worth comparing with another when one knows what
// produced both: the source revision of dlc, when the run happened, on what
// host, and the command line. Every report carries them (the JSON's
// dlc_revision, date, host and command; the table's last line).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_PROVENANCE_H
#define DLC_BENCH_PROVENANCE_H

#include <cstdint>
#include <string>

namespace dlc::bench {

struct Provenance {
  /// git's 12-digit commit of the source tree built, "-dirty" when tracked
  /// files differed from it, "unknown" outside a checkout.
  std::string revision;
  std::string date;    // when the run started, UTC, ISO 8601
  std::string hostCpu; // /proc/cpuinfo's model name, "" where unknown
  int64_t hostCores = 0;
  std::string command; // the command line, arguments quoted where needed
};

/// This build's revision (DLC_REVISION).
const char *dlcRevision();

/// The provenance of a run starting now, of the command `argv`.
Provenance currentProvenance(int argc, char **argv);

/// A report's last line: "dlc 0123456789ab, 2026-11-23T16:50:12Z, <cpu>
/// (2 cores)".
std::string provenanceLine(const Provenance &p);

/// How every report names a host: "AMD EPYC (2 cores)", "unknown CPU (2
/// cores)" where /proc/cpuinfo gave no model name.
std::string hostDescription(const std::string &cpu, int64_t cores);

} // namespace dlc::bench

#endif // DLC_BENCH_PROVENANCE_H
