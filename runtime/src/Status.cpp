//===- Status.cpp - status values of the dlc runtime ----------------------===//

#include "dlc/runtime/Status.h"

namespace dlc::rt {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::kOk:
    return "ok";
  case StatusCode::kInvalidArgument:
    return "invalid argument";
  case StatusCode::kUnavailable:
    return "unavailable";
  case StatusCode::kResourceExhausted:
    return "resource exhausted";
  case StatusCode::kDataLoss:
    return "data loss";
  case StatusCode::kInternal:
    return "internal";
  }
  return "unknown";
}

std::string Status::toString() const {
  if (isOk())
    return "ok";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

} // namespace dlc::rt
