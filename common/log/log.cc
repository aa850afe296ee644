// Structured log lines; see log.h.
#include "common/log/log.h"

#include <cstdio>
#include <ctime>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace blkbench {
namespace {

absl::Mutex& LogMutex() {
  static absl::Mutex mu(absl::kConstInit);
  return mu;
}

LogSink*& Sink() ABSL_EXCLUSIVE_LOCKS_REQUIRED(LogMutex()) {
  static LogSink* sink = nullptr;
  return sink;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

int64_t MonotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

bool NeedsQuotes(absl::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20 ||
        static_cast<unsigned char>(c) >= 0x7f) {
      return true;
    }
  }
  return false;
}

}  // namespace

LogSink* SetLogSink(LogSink* sink) {
  absl::MutexLock lock(&LogMutex());
  LogSink* previous = Sink();
  Sink() = sink;
  return previous;
}

LogEvent::LogEvent(LogLevel level, absl::string_view component, absl::string_view event)
    : level_(level) {
  line_ = absl::StrCat(
      "ts=", absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
      " mono_ms=", MonotonicMs(), " level=", LevelName(level), " comp=", component,
      " event=", event);
}

LogEvent::~LogEvent() {
  absl::MutexLock lock(&LogMutex());
  if (Sink() != nullptr) {
    Sink()->Write(level_, line_);
  } else {
    fprintf(stderr, "%s\n", line_.c_str());
  }
}

LogEvent& LogEvent::Field(absl::string_view key, absl::string_view value) {
  if (NeedsQuotes(value)) {
    absl::StrAppend(&line_, " ", key, "=\"", absl::CEscape(value), "\"");
  } else {
    absl::StrAppend(&line_, " ", key, "=", value);
  }
  return *this;
}

LogEvent& LogEvent::Field(absl::string_view key, int64_t value) {
  absl::StrAppend(&line_, " ", key, "=", value);
  return *this;
}

LogEvent& LogEvent::Field(absl::string_view key, uint64_t value) {
  absl::StrAppend(&line_, " ", key, "=", value);
  return *this;
}

std::string LogField(absl::string_view line, absl::string_view key) {
  const std::string needle = absl::StrCat(" ", key, "=");
  size_t at = absl::StrCat(" ", line).find(needle);
  if (at == std::string::npos) return "";
  absl::string_view rest = line.substr(at + needle.size() - 1);
  if (!rest.empty() && rest.front() == '"') {
    // A quoted value ends at the first unescaped quote.
    size_t end = 1;
    while (end < rest.size() && rest[end] != '"') end += rest[end] == '\\' ? 2 : 1;
    std::string out;
    absl::CUnescape(rest.substr(1, end - 1), &out);
    return out;
  }
  return std::string(rest.substr(0, rest.find(' ')));
}

}  // namespace blkbench
