// Tests for fio-style size, duration, integer, boolean and CPU-list parsing.
#include "common/units.h"

#include <cstdint>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSec = 1'000'000'000;

TEST(ParseSizeTest, PlainBytesAndBinarySuffixes) {
  EXPECT_EQ(*ParseSize("0"), 0u);
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("512b"), 512u);
  EXPECT_EQ(*ParseSize("4k"), 4096u);
  EXPECT_EQ(*ParseSize("4K"), 4096u);
  EXPECT_EQ(*ParseSize("512k"), 512u * 1024);
  EXPECT_EQ(*ParseSize("100m"), 100u * 1024 * 1024);
  EXPECT_EQ(*ParseSize("1g"), uint64_t{1} << 30);
  EXPECT_EQ(*ParseSize("1G"), uint64_t{1} << 30);
  EXPECT_EQ(*ParseSize("1t"), uint64_t{1} << 40);
  EXPECT_EQ(*ParseSize("2p"), uint64_t{2} << 50);
}

TEST(ParseSizeTest, LongSuffixesAreBinaryToo) {
  EXPECT_EQ(*ParseSize("4kb"), 4096u);
  EXPECT_EQ(*ParseSize("4KB"), 4096u);
  // fio's kb_base=1024 compat mode would read this as 4000; see units.h.
  EXPECT_EQ(*ParseSize("4KiB"), 4096u);
  EXPECT_EQ(*ParseSize("64MiB"), uint64_t{64} << 20);
  EXPECT_EQ(*ParseSize("1gib"), uint64_t{1} << 30);
  EXPECT_EQ(*ParseSize("3tb"), uint64_t{3} << 40);
}

TEST(ParseSizeTest, RejectsMalformedInput) {
  for (const char* bad :
       {"", "k", "4q", "-4k", "+4k", "4.5k", " 4k", "4k ", "4 k", "0x1000", "4kk"}) {
    EXPECT_FALSE(ParseSize(bad).ok()) << bad;
  }
  EXPECT_THAT(ParseSize("4q").status().message(), HasSubstr("unknown size suffix 'q'"));
}

TEST(ParseSizeTest, RejectsOverflow) {
  EXPECT_EQ(*ParseSize("16777215t"), uint64_t{16777215} << 40);
  EXPECT_THAT(ParseSize("16777216t").status().message(), HasSubstr("too large"));
  EXPECT_FALSE(ParseSize("99999999999999999999").ok());
}

TEST(ParseDurationTest, BareNumberIsSeconds) {
  EXPECT_EQ(*ParseDurationNs("0"), 0u);
  EXPECT_EQ(*ParseDurationNs("30"), 30 * kSec);
  EXPECT_EQ(*ParseDurationNs("1"), kSec);
}

TEST(ParseDurationTest, Units) {
  EXPECT_EQ(*ParseDurationNs("30s"), 30 * kSec);
  EXPECT_EQ(*ParseDurationNs("10sec"), 10 * kSec);
  EXPECT_EQ(*ParseDurationNs("2m"), 120 * kSec);
  EXPECT_EQ(*ParseDurationNs("2min"), 120 * kSec);
  EXPECT_EQ(*ParseDurationNs("500ms"), 500'000'000u);
  EXPECT_EQ(*ParseDurationNs("5msec"), 5'000'000u);
  EXPECT_EQ(*ParseDurationNs("100us"), 100'000u);
  EXPECT_EQ(*ParseDurationNs("7usec"), 7'000u);
  EXPECT_EQ(*ParseDurationNs("1h"), 3600 * kSec);
  EXPECT_EQ(*ParseDurationNs("1d"), 86400 * kSec);
  EXPECT_EQ(*ParseDurationNs("250ns"), 250u);
  EXPECT_EQ(*ParseDurationNs("2S"), 2 * kSec);
}

TEST(ParseDurationTest, RejectsMalformedInput) {
  for (const char* bad : {"", "s", "5x", "1.5s", "-1", "5 s", "5secs", "99999999999d"}) {
    EXPECT_FALSE(ParseDurationNs(bad).ok()) << bad;
  }
  EXPECT_THAT(ParseDurationNs("5x").status().message(), HasSubstr("unknown duration suffix 'x'"));
}

TEST(ParseUintTest, DecimalAndHex) {
  EXPECT_EQ(*ParseUint("0"), 0u);
  EXPECT_EQ(*ParseUint("42"), 42u);
  EXPECT_EQ(*ParseUint("0x89"), 0x89u);
  EXPECT_EQ(*ParseUint("0X1f"), 0x1fu);
  EXPECT_EQ(*ParseUint("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"", "+1", "-1", " 1", "1 ", "0x", "0xg", "1e3", "18446744073709551616"}) {
    EXPECT_FALSE(ParseUint(bad).ok()) << bad;
  }
}

TEST(ParseBoolTest, FioBooleans) {
  EXPECT_TRUE(*ParseBool("1"));
  EXPECT_TRUE(*ParseBool("true"));
  EXPECT_TRUE(*ParseBool("TRUE"));
  EXPECT_FALSE(*ParseBool("0"));
  EXPECT_FALSE(*ParseBool("false"));
  for (const char* bad : {"", "2", "yes", "on", "-1"}) EXPECT_FALSE(ParseBool(bad).ok()) << bad;
}

TEST(CheckCpuListTest, AcceptsFioCpuLists) {
  for (const char* good : {"0", "0-3", "0-3,6", "1,2,3", "0-0", "4095"}) {
    EXPECT_TRUE(CheckCpuList(good).ok()) << good;
  }
}

TEST(CheckCpuListTest, RejectsBadLists) {
  for (const char* bad : {"", "a", "0-", "-1", ",1", "1,", "1,,2", "0x1", "1-2-3", "4096"}) {
    EXPECT_FALSE(CheckCpuList(bad).ok()) << bad;
  }
  EXPECT_THAT(CheckCpuList("3-1").message(), HasSubstr("runs backwards"));
}

TEST(FormatTest, SizeUsesLargestExactUnit) {
  EXPECT_EQ(FormatSize(0), "0");
  EXPECT_EQ(FormatSize(512), "512");
  EXPECT_EQ(FormatSize(1000), "1000");
  EXPECT_EQ(FormatSize(4096), "4k");
  EXPECT_EQ(FormatSize(65536), "64k");
  EXPECT_EQ(FormatSize(1536 * 1024), "1536k");
  EXPECT_EQ(FormatSize(uint64_t{1} << 20), "1m");
  EXPECT_EQ(FormatSize(uint64_t{1} << 30), "1g");
  EXPECT_EQ(*ParseSize(FormatSize(uint64_t{3} << 40)), uint64_t{3} << 40);
}

TEST(FormatTest, DurationUsesLargestExactUnit) {
  EXPECT_EQ(FormatDurationNs(0), "0");
  EXPECT_EQ(FormatDurationNs(1), "1ns");
  EXPECT_EQ(FormatDurationNs(1500), "1500ns");
  EXPECT_EQ(FormatDurationNs(1'500'000), "1500us");
  EXPECT_EQ(FormatDurationNs(500'000'000), "500ms");
  EXPECT_EQ(FormatDurationNs(2 * kSec), "2s");
  EXPECT_EQ(FormatDurationNs(120 * kSec), "2m");
  EXPECT_EQ(FormatDurationNs(90 * kSec), "90s");
  EXPECT_EQ(FormatDurationNs(7200 * kSec), "2h");
  EXPECT_EQ(*ParseDurationNs(FormatDurationNs(1'500'000)), 1'500'000u);
}

}  // namespace
}  // namespace blkbench
