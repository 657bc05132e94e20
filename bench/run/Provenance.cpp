//===- Provenance.cpp - what produced a report ----------------------------===//

#include "Provenance.h"

#include "Revision.inc"

#include <cctype>
#include <ctime>
#include <fstream>
#include <thread>

namespace dlc::bench {

namespace {

/// The argument as a shell would need it: quoted when it holds anything
/// but letters, digits and -_./=,:+
std::string shellWord(const std::string &arg) {
  bool plain = !arg.empty();
  for (char c : arg)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) ||
                      std::string("-_./=,:+").find(c) != std::string::npos);
  if (plain)
    return arg;
  std::string quoted = "'";
  for (char c : arg)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string cpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "";
}

} // namespace

const char *dlcRevision() { return DLC_REVISION; }

/// "dlc 0123456789ab, 2026-11-23T16:50:12Z, Intel(R) Xeon(R) ... (2 cores)".
std::string provenanceLine(const Provenance &p) {
  std::string line = "dlc " + (p.revision.empty() ? std::string("unknown") : p.revision);
  if (!p.date.empty())
    line += ", " + p.date;
  return line + ", " + hostDescription(p.hostCpu, p.hostCores);
}

std::string hostDescription(const std::string &cpu, int64_t cores) {
  return (cpu.empty() ? std::string("unknown CPU") : cpu) + " (" + std::to_string(cores) +
         " cores)";
}


Provenance currentProvenance(int argc, char **argv) {
  Provenance p;
  p.revision = dlcRevision();
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &utc);
  p.date = date;
  p.hostCpu = cpuModel();
  p.hostCores = static_cast<int64_t>(std::thread::hardware_concurrency());
  for (int i = 0; i < argc; ++i)
    p.command += (i ? " " : "") + shellWord(argv[i]);
  return p;
}

} // namespace dlc::bench
