// Status and StatusOr: the error currency of the stepscope core.
//
// The core never throws. Functions that can fail return Status or StatusOr<T>; the CLI maps a
// Status to one line on stderr and an exit code, the Python layer to an exception. Messages
// name the thing that failed and the next step ("cannot open run 'x': no manifest.json; pass
// the directory that `stepscope run` printed"). The recording hot path never returns errors:
// it counts drops instead.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace stepscope {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad flag, bad config value, bad user input
  kNotFound,         // file, run, metric, library absent
  kDataLoss,         // corrupt or truncated bytes on disk
  kUnavailable,      // platform facility missing (no GPU, no NVML, no perf)
  kIoError,          // the OS refused a read or write (full disk, permissions)
  kUnimplemented,    // a newer format version, a feature not built in
  kInternal,         // a bug in stepscope
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with context, e.g. the file being read: "run/x/log: <message>".
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status DataLossError(std::string message);
Status UnavailableError(std::string message);
Status IoError(std::string message);
// An IoError carrying strerror(errno_value), naming what was attempted ("open 'x'").
Status ErrnoError(std::string_view what, int errno_value);
Status UnimplementedError(std::string message);
Status InternalError(std::string message);

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) { assert(!status.ok()); }  // NOLINT
  StatusOr(Status&& status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT
  StatusOr(const T& value) : value_(value) {}  // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace stepscope

#define STEPSCOPE_INTERNAL_CONCAT2(a, b) a##b
#define STEPSCOPE_INTERNAL_CONCAT(a, b) STEPSCOPE_INTERNAL_CONCAT2(a, b)

#define STEPSCOPE_RETURN_IF_ERROR(expr)                 \
  do {                                                  \
    ::stepscope::Status stepscope_status_ = (expr);     \
    if (!stepscope_status_.ok()) return stepscope_status_; \
  } while (0)

#define STEPSCOPE_INTERNAL_ASSIGN_OR_RETURN(tmp, lhs, expr) \
  auto tmp = (expr);                                       \
  if (!tmp.ok()) return tmp.status();                      \
  lhs = std::move(tmp).value()

#define STEPSCOPE_ASSIGN_OR_RETURN(lhs, expr) \
  STEPSCOPE_INTERNAL_ASSIGN_OR_RETURN(STEPSCOPE_INTERNAL_CONCAT(stepscope_or_, __LINE__), lhs, expr)
