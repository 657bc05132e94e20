//===- NcclWait.cpp - the host's bounded wait on NCCL work ----------------===//

#include "dlc/runtime/cuda/NcclWait.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace dlc::rt::cuda {

namespace {

std::string seconds(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

} // namespace

StatusOr<double> parseNcclTimeout(const char *text) {
  if (!text || !*text)
    return kDefaultNcclTimeoutSeconds;
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text, &end);
  if (end == text || *end || errno == ERANGE || !std::isfinite(value) || value < 0)
    return Status(StatusCode::kInvalidArgument,
                  std::string(kNcclTimeoutVariable) + "='" + text +
                      "': expected the seconds a rank waits for NCCL (0: no limit)");
  return value;
}

StatusOr<double> ncclTimeoutSeconds() {
  return parseNcclTimeout(std::getenv(kNcclTimeoutVariable));
}

Status waitPolling(const NcclWaitQueries &queries, int rank, const std::string &what,
                   const NcclWaitLimits &limits) {
  std::string who = "rank " + std::to_string(rank) + ": ";
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    // CUDA first: when the work is done, the NCCL state read after it
    // still says whether it ended in an error.
    bool done = false;
    if (queries.cudaDone) {
      auto finished = queries.cudaDone();
      if (!finished.isOk())
        return Status(finished.status().code(), who + finished.status().message());
      done = *finished;
    }
    auto state = queries.ncclState();
    if (!state.isOk())
      return Status(state.status().code(), who + state.status().message());
    if (*state != kNcclSuccess && *state != kNcclInProgress) {
      queries.abort();
      return Status(StatusCode::kInternal,
                    who + "NCCL: " + queries.describe(*state) + " (NCCL error " +
                        std::to_string(*state) + ") while waiting for " + what +
                        "; its communicator was aborted");
    }
    if (queries.cudaDone ? done : *state == kNcclSuccess)
      return Status::ok();
    std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
    if (limits.timeoutSeconds > 0 && waited.count() >= limits.timeoutSeconds) {
      queries.abort();
      return Status(StatusCode::kUnavailable,
                    who + what + " did not finish within " + seconds(limits.timeoutSeconds) +
                        " (" + kNcclTimeoutVariable +
                        "): another rank failed, stopped or never joined; its communicator "
                        "was aborted");
    }
    std::this_thread::sleep_for(limits.interval);
  }
}

} // namespace dlc::rt::cuda
