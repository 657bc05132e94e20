//===- Status.h - status values of the dlc runtime --------------*- C++ -*-===//
//
// The runtime reports failures as values, never by exceptions across library
// boundaries: every vendor call is wrapped and turned into a Status that
// names what failed and why.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_STATUS_H
#define DLC_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace dlc::rt {

enum class StatusCode {
  kOk,
  kInvalidArgument,    // the caller's input is wrong (a plan, a shape, a flag)
  kUnavailable,        // a device, driver or library is missing
  kResourceExhausted,  // out of device or host memory
  kDataLoss,           // a file is truncated or corrupt
  kInternal,           // a vendor library failed unexpectedly
};

/// Returns "ok", "invalid argument", ... for messages.
const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool isOk() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  /// "unavailable: no CUDA device (cudaGetDeviceCount: ...)".
  std::string toString() const;

private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
public:
  StatusOr(T value) : value_(std::move(value)) {}
  StatusOr(Status status) : status_(std::move(status)) {
    assert(!status_.isOk() && "an ok StatusOr needs a value");
  }

  bool isOk() const { return status_.isOk(); }
  const Status &status() const { return status_; }
  T &value() { assert(isOk()); return *value_; }
  const T &value() const { assert(isOk()); return *value_; }
  T *operator->() { return &value(); }
  T &operator*() { return value(); }

private:
  Status status_;
  std::optional<T> value_;
};

} // namespace dlc::rt

/// Returns the Status of `expr` from the enclosing function when it fails.
#define DLC_RETURN_IF_ERROR(expr)                                              \
  do {                                                                         \
    if (::dlc::rt::Status dlc_status_ = (expr); !dlc_status_.isOk())           \
      return dlc_status_;                                                      \
  } while (0)

#endif // DLC_RUNTIME_STATUS_H
