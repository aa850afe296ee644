// LogEvent's line format, quoting, and LogField reading it back.
#include "common/log/log.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace blkbench {
namespace {

class Capture : public LogSink {
 public:
  Capture() { previous_ = SetLogSink(this); }
  ~Capture() override { SetLogSink(previous_); }
  void Write(LogLevel, absl::string_view line) override { lines.emplace_back(line); }
  std::vector<std::string> lines;

 private:
  LogSink* previous_;
};

TEST(LogTest, OneLineWithTimesLevelComponentEventAndFields) {
  Capture cap;
  LogEvent(LogLevel::kWarning, "controller", "store_failed")
      .Field("run", uint64_t{12})
      .Field("attempt", 2)
      .Field("error", "RESOURCE_EXHAUSTED: disk \"full\"")
      .Field("ok", false);
  ASSERT_EQ(cap.lines.size(), 1u);
  const std::string& line = cap.lines[0];
  EXPECT_EQ(line.rfind("ts=", 0), 0u) << line;
  EXPECT_EQ(LogField(line, "level"), "warn");
  EXPECT_EQ(LogField(line, "comp"), "controller");
  EXPECT_EQ(LogField(line, "event"), "store_failed");
  EXPECT_EQ(LogField(line, "run"), "12");
  EXPECT_EQ(LogField(line, "attempt"), "2");
  EXPECT_EQ(LogField(line, "error"), "RESOURCE_EXHAUSTED: disk \"full\"");
  EXPECT_EQ(LogField(line, "ok"), "false");
  EXPECT_GT(std::stoll(LogField(line, "mono_ms")), 0);
  EXPECT_EQ(LogField(line, "missing"), "");
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(LogTest, EmptyAndControlCharactersAreQuoted) {
  Capture cap;
  LogEvent(LogLevel::kInfo, "agent", "x").Field("empty", "").Field("nl", "a\nb");
  ASSERT_EQ(cap.lines.size(), 1u);
  EXPECT_NE(cap.lines[0].find("empty=\"\""), std::string::npos);
  EXPECT_EQ(cap.lines[0].find('\n'), std::string::npos);
  EXPECT_EQ(LogField(cap.lines[0], "nl"), "a\nb");
}

}  // namespace
}  // namespace blkbench
