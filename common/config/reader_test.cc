// Tests for the table-driven configuration reader (reader.h, fields.h): every field kind read, and
// every kind of mistake reported at its file:line:col with its key path, all at once.
#include "common/config/reader.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/config/fields.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

struct Disk {
  std::string kind;
  uint64_t size_bytes = uint64_t{1} << 30;
  std::string serial;
};

struct Cache {
  bool present = false;
  std::string dir = "/var/cache/x";
};

struct Settings {
  std::string name;
  std::string note = "default";
  std::string home;
  bool fast = false;
  int cpus = 2;
  int64_t timeout_ms = 1000;
  uint64_t limit = 7;
  uint64_t size_bytes = 0;
  std::string accel = "auto";
  std::vector<std::string> tags = {"a", "b"};
  std::vector<Disk> disks;
  Cache cache;
  int custom = 0;
};

Table<Disk> DiskTable() {
  return Table<Disk>("a disk like {kind: nvme, size: 1G}",
                     {Enum("kind", &Disk::kind, {"nvme", "hdd", "virtio"}).Required(),
                      Bytes("size", "a size like 1G, at least 1M", &Disk::size_bytes, 1 << 20),
                      String("serial", "up to 4 letters", &Disk::serial, Empty::kAllowed)
                          .Checked([](const std::string& s) { return s.size() <= 4; })});
}

const Table<Settings>& SettingsTable() {
  static const Table<Settings> table(
      "a map of settings (name, home, ...)",
      {
          String("name", "a name", &Settings::name).Required(),
          String("note", "any text", &Settings::note, Empty::kAllowed),
          Path("home", "an absolute path", &Settings::home),
          Bool("fast", "true or false", &Settings::fast),
          Int("cpus", "an integer from 1 to 64", &Settings::cpus, 1, 64),
          Int("timeout_ms", "milliseconds > 0", &Settings::timeout_ms, 1),
          Int("limit", "a count", &Settings::limit, 0),
          Bytes("size", "a size like 1G", &Settings::size_bytes, 0),
          Enum("accel", &Settings::accel, {"auto", "kvm", "tcg"}),
          ScalarList("tags", "a list of tags like [a, b]", &Settings::tags, "a tag of a to z",
                     [](const std::string& t) {
                       return t.size() == 1 ? absl::OkStatus()
                                            : absl::InvalidArgumentError("one letter");
                     }),
          MapList("disks", "a list of disks", &Settings::disks, DiskTable(),
                  UniqueKey<Disk>{"serial", &Disk::serial}),
          Map("cache", &Settings::cache,
              Table<Cache>("a map like {dir: /var/cache/x}",
                           {Path("dir", "an absolute path", &Cache::dir)},
                           [](Cache& c, const yaml::Node&, Context&) { c.present = true; })),
          Custom<Settings>("custom", "an even number",
                           [](const yaml::Node& v, Settings& s, Context& c) {
                             std::optional<int64_t> n = ReadInt(v, "an even number", 0, 100, c);
                             if (n && *n % 2 != 0) c.Expected(v, "an even number");
                             if (n) s.custom = static_cast<int>(*n);
                           }),
      },
      [](Settings& s, const yaml::Node& map, Context& c) {
        if (s.fast && s.cpus < 2) c.Error(map, "fast needs cpus >= 2");
        if (s.name == "old") c.Warning(map["name"], "'old' is deprecated");
      });
  return table;
}

struct Read {
  Settings settings;
  absl::Status status;
  std::vector<std::string> warnings;
};

Read ReadText(const std::string& text) {
  Read r;
  absl::StatusOr<yaml::Node> root = yaml::ParseOrStatus(text, "s.yaml");
  if (!root.ok()) {
    r.status = root.status();
    return r;
  }
  Diagnostics diagnostics("s.yaml");
  ReadDocument(*root, SettingsTable(), r.settings, diagnostics);
  r.status = diagnostics.ToStatus();
  r.warnings = diagnostics.Warnings();
  return r;
}

TEST(ConfigReaderTest, ReadsEveryKindOfField) {
  Read r = ReadText(R"(name: box
note: ""
home: /srv/box
fast: true
cpus: 8
timeout_ms: 5000
limit: 18446744073709551615
size: 512M
accel: kvm
tags: [x, y, z]
disks:
  - {kind: nvme, size: 2G, serial: n0}
  - kind: hdd
cache: {dir: /tmp/c}
custom: 42
)");
  ASSERT_TRUE(r.status.ok()) << r.status;
  const Settings& s = r.settings;
  EXPECT_EQ(s.name, "box");
  EXPECT_EQ(s.note, "");
  EXPECT_EQ(s.home, "/srv/box");
  EXPECT_TRUE(s.fast);
  EXPECT_EQ(s.cpus, 8);
  EXPECT_EQ(s.timeout_ms, 5000);
  EXPECT_EQ(s.limit, UINT64_MAX);
  EXPECT_EQ(s.size_bytes, 512u << 20);
  EXPECT_EQ(s.accel, "kvm");
  EXPECT_THAT(s.tags, ElementsAre("x", "y", "z"));
  ASSERT_EQ(s.disks.size(), 2u);
  EXPECT_EQ(s.disks[0].kind, "nvme");
  EXPECT_EQ(s.disks[0].size_bytes, uint64_t{2} << 30);
  EXPECT_EQ(s.disks[0].serial, "n0");
  EXPECT_EQ(s.disks[1].kind, "hdd");
  EXPECT_EQ(s.disks[1].size_bytes, uint64_t{1} << 30);  // the struct's default
  EXPECT_TRUE(s.cache.present);
  EXPECT_EQ(s.cache.dir, "/tmp/c");
  EXPECT_EQ(s.custom, 42);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(ConfigReaderTest, MissingKeysKeepDefaultsAndAnEmptySectionIsItsDefaults) {
  Read r = ReadText("name: box\ntags: []\ncache:\n");
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.settings.note, "default");
  EXPECT_EQ(r.settings.cpus, 2);
  EXPECT_TRUE(r.settings.tags.empty());  // a list replaces the default
  EXPECT_TRUE(r.settings.cache.present);
  EXPECT_EQ(r.settings.cache.dir, "/var/cache/x");
  EXPECT_FALSE(ReadText("name: box\n").settings.cache.present);
}

// One mistake of each kind, each at its place with its key path and what was expected.
TEST(ConfigReaderTest, EachBadValueNamesItsPlaceAndWhatWasExpected) {
  Read r = ReadText(R"(name: ""
home: srv/box
fast: maybe
cpus: 0
timeout_ms: 0
limit: -1
size: 1Q
accel: kvn
tags: [x, yy, {a: 1}]
disks:
  - {kind: floppy, size: 4k, serial: toolong}
  - 7
cache: [a]
custom: 3
)");
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(r.status.message());
  EXPECT_THAT(msg, HasSubstr("s.yaml:1:7: name: expected a name, got ''"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:2:7: home: expected an absolute path, got 'srv/box'"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:3:7: fast: expected true or false, got 'maybe'"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:4:7: cpus: expected an integer from 1 to 64, got '0'"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:5:13: timeout_ms: expected milliseconds > 0, got '0'"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:6:8: limit: expected a count, got '-1'"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:7:7: size: expected a size like 1G, got '1Q'; '1Q' has an "
                             "unknown size suffix 'q'"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:8:8: accel: expected auto, kvm or tcg, got 'kvn' (did you "
                             "mean 'kvm'?)"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:9:11: tags[1]: expected a tag of a to z, got 'yy'; one "
                             "letter"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:9:15: tags[2]: expected a tag of a to z, got a map"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:11:12: disks[0].kind: expected nvme, hdd or virtio, got "
                             "'floppy'"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:11:26: disks[0].size: expected a size like 1G, at least "
                             "1M, got '4k'"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:11:38: disks[0].serial: expected up to 4 letters, got "
                             "'toolong'"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:12:5: disks[1]: expected a disk like {kind: nvme, size: "
                             "1G}, got '7'"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:13:8: cache: expected a map like {dir: /var/cache/x}, got "
                             "a list"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:14:9: custom: expected an even number, got '3'"));
  // All of them, one line each, in file order.
  const std::vector<std::string> lines = absl::StrSplit(msg, '\n');
  EXPECT_EQ(lines.size(), 16u) << msg;
  EXPECT_THAT(lines.front(), HasSubstr("s.yaml:1:7:"));
  EXPECT_THAT(lines.back(), HasSubstr("s.yaml:14:9:"));
}

TEST(ConfigReaderTest, UnknownKeysGetDidYouMeanAndTheValidKeys) {
  Read r = ReadText("name: box\ncpu: 4\ndisks:\n  - {kind: nvme, sise: 1G}\ncolour: red\n");
  const std::string msg(r.status.message());
  EXPECT_THAT(msg, HasSubstr("s.yaml:2:1: unknown key 'cpu' (did you mean 'cpus'?); valid keys: "
                             "name, note, home, fast, cpus, timeout_ms, limit, size, accel, tags, "
                             "disks, cache, custom"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:4:18: disks[0]: unknown key 'sise' (did you mean 'size'?); "
                             "valid keys: kind, size, serial"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:5:1: unknown key 'colour'; valid keys: name,"));
}

TEST(ConfigReaderTest, RequiredRepeatedAndNonScalarKeys) {
  Read r = ReadText("cpus: 4\ncpus: 5\n[a]: 1\ndisks:\n  - {size: 1G}\n");
  const std::string msg(r.status.message());
  EXPECT_THAT(msg, HasSubstr("s.yaml:1:1: key 'name' is required (expected a name)"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:2:1: key 'cpus' appears twice (first at line 1)"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:3:1: keys must be plain names, got a list"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:5:5: disks[0]: key 'kind' is required (expected nvme, hdd "
                             "or virtio)"));
}

TEST(ConfigReaderTest, AMissingValueIsReportedAtItsKey) {
  Read r = ReadText("name: box\ncpus:\nhome:\n");
  const std::string msg(r.status.message());
  EXPECT_THAT(msg, HasSubstr("s.yaml:2:1: cpus: expected an integer from 1 to 64, got nothing"));
  EXPECT_THAT(msg, HasSubstr("s.yaml:3:1: home: expected an absolute path, got nothing"));
}

TEST(ConfigReaderTest, RepeatedItemKeysAreErrors) {
  Read r = ReadText(R"(name: box
disks:
  - {kind: nvme, serial: a}
  - {kind: nvme}
  - {kind: nvme}
  - {kind: hdd, serial: a}
)");
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("s.yaml:6:25: disks[3].serial: 'a' is listed twice (first at line 3)"));
  // Empty values (the default serial) are not compared.
  EXPECT_THAT(std::string(r.status.message()), Not(HasSubstr("disks[2]")));
}

TEST(ConfigReaderTest, HooksReportAndWarningsAreKeptApart) {
  Read bad = ReadText("name: box\nfast: true\ncpus: 1\n");
  EXPECT_THAT(std::string(bad.status.message()), HasSubstr("s.yaml:1:1: fast needs cpus >= 2"));
  Read old = ReadText("name: old\n");
  ASSERT_TRUE(old.status.ok()) << old.status;
  EXPECT_THAT(old.warnings, ElementsAre("s.yaml:1:7: 'old' is deprecated"));
}

TEST(ConfigReaderTest, TheDocumentMustBeAMap) {
  EXPECT_EQ(ReadText("- a\n").status.message(),
            "s.yaml:1:1: expected a map of settings (name, home, ...), got a list");
  EXPECT_EQ(ReadText("").status.message(),
            "s.yaml: expected a map of settings (name, home, ...), got nothing");
}

TEST(ConfigReaderTest, LongOrControlCharacterValuesAreCutAndEscaped) {
  const std::string msg(
      ReadText(absl::StrCat("name: box\nhome: ", std::string(100, 'x'), "\naccel: \"k\\tv\"\n"))
          .status.message());
  EXPECT_THAT(msg, HasSubstr(absl::StrCat("got '", std::string(60, 'x'), "...'")));
  EXPECT_THAT(msg, HasSubstr("got 'k\\tv'"));
}

TEST(ConfigReaderTest, ManyErrorsAreCounted) {
  std::string text = "name: box\n";
  for (int i = 0; i < 60; ++i) absl::StrAppend(&text, "k", i, ": 1\n");
  const std::string msg(ReadText(text).status.message());
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 50);
  EXPECT_THAT(msg, HasSubstr("... and 10 more errors"));
}

TEST(ConfigReaderTest, WordListReadsLikeASentence) {
  EXPECT_EQ(WordList({"a"}), "a");
  EXPECT_EQ(WordList({"a", "b"}), "a or b");
  EXPECT_EQ(WordList({"a", "b", "c"}), "a, b or c");
}

}  // namespace
}  // namespace blkbench::config
