// Structured logging for the daemons: one line per event, logfmt-style key=value pairs,
// so operators can grep and tests can parse what happened and when.
//
//   LogEvent(LogLevel::kWarning, "controller", "sample_store_failed")
//       .Field("run", 12).Field("seq", 7).Field("error", status.ToString());
//
// writes, when the temporary is destroyed:
//
//   ts=2026-12-01T14:09:41.123Z mono_ms=81234567 level=warn comp=controller
//   event=sample_store_failed run=12 seq=7 error="RESOURCE_EXHAUSTED: disk full"
//
// (one line). mono_ms is CLOCK_MONOTONIC in milliseconds: the same clock in every
// process of one host, so chaos tests can order the events of a controller and its
// agents. Values with spaces, quotes or '=' are quoted with C escapes.
//
// Thread-safe: lines from different threads never interleave.
#ifndef BLKBENCH_COMMON_LOG_LOG_H_
#define BLKBENCH_COMMON_LOG_LOG_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace blkbench {

enum class LogLevel { kInfo, kWarning, kError };

// Where lines go. The default writes them to stderr.
class LogSink {
 public:
  virtual ~LogSink() = default;
  // `line` has no trailing newline. Called with the logging lock held: must not log.
  virtual void Write(LogLevel level, absl::string_view line) = 0;
};

// Replaces the process's sink (null: back to stderr); returns the previous one (null for
// stderr). The sink must outlive its use. For tests and daemons' main().
LogSink* SetLogSink(LogSink* sink);

// One event, written when the object is destroyed. Build it as a temporary.
class LogEvent {
 public:
  LogEvent(LogLevel level, absl::string_view component, absl::string_view event);
  ~LogEvent();
  LogEvent(const LogEvent&) = delete;
  LogEvent& operator=(const LogEvent&) = delete;

  LogEvent& Field(absl::string_view key, absl::string_view value);
  LogEvent& Field(absl::string_view key, const char* value) {
    return Field(key, absl::string_view(value));
  }
  LogEvent& Field(absl::string_view key, const std::string& value) {
    return Field(key, absl::string_view(value));
  }
  LogEvent& Field(absl::string_view key, int64_t value);
  LogEvent& Field(absl::string_view key, uint64_t value);
  LogEvent& Field(absl::string_view key, int value) { return Field(key, int64_t{value}); }
  LogEvent& Field(absl::string_view key, unsigned value) { return Field(key, uint64_t{value}); }
  LogEvent& Field(absl::string_view key, long long value) {
    return Field(key, static_cast<int64_t>(value));
  }
  LogEvent& Field(absl::string_view key, unsigned long long value) {
    return Field(key, static_cast<uint64_t>(value));
  }
  LogEvent& Field(absl::string_view key, bool value) {
    return Field(key, absl::string_view(value ? "true" : "false"));
  }

 private:
  LogLevel level_;
  std::string line_;
};

// The value of `key` in a logged line ("" if absent), unquoting it; for tests that read
// daemons' logs.
std::string LogField(absl::string_view line, absl::string_view key);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_LOG_LOG_H_
