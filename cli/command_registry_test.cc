// The command table as registered: every command once, in --help order, each with what
// --help, completion and the man page are generated from; flags parsed by their owner.
#include "cli/command_registry.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

TEST(CommandRegistryTest, EveryCommandOnceInHelpOrder) {
  std::vector<std::string> names;
  for (const CommandSpec& c : Commands()) names.push_back(c.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "validate", "submit", "list",   "show",      "watch",      "results",    "report",
                "cancel",   "agents", "tls",    "gate",      "history",    "gate-proof", "import",
                "sim",      "run",    "bisect", "calibrate", "completion", "man",        "help"}));
}

TEST(CommandRegistryTest, EachCommandCanRunAndSaysWhatItDoes) {
  const std::string man = ManPage(Commands(), "test");
  for (const CommandSpec& c : Commands()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(c.run != nullptr);
    EXPECT_FALSE(c.summary.empty());
    EXPECT_NE(c.summary.back(), '.');  // the usage adds it
    std::set<std::string> flags;
    for (const FlagSpec& f : c.flags) {
      EXPECT_TRUE(flags.insert(f.name).second) << "--" << f.name << " declared twice";
      EXPECT_FALSE(f.help.empty()) << "--" << f.name;
    }
    // Everything declared shows in the usage and the man page (roff escapes '-').
    const std::string usage = CommandUsage(c);
    for (const FlagSpec& f : c.flags) {
      EXPECT_TRUE(absl::StrContains(usage, "--" + f.name)) << f.name;
      EXPECT_TRUE(absl::StrContains(
          man, absl::StrCat(".B \\-\\-", absl::StrReplaceAll(f.name, {{"-", "\\-"}}))))
          << f.name;
    }
  }
}

TEST(CommandRegistryTest, OnlyTheControllerCommandsDialIt) {
  std::vector<std::string> dialing;
  for (const CommandSpec& c : Commands()) {
    if (c.needs_controller) dialing.push_back(c.name);
  }
  EXPECT_EQ(dialing, (std::vector<std::string>{"submit", "list", "show", "watch", "results",
                                               "report", "cancel", "agents", "gate", "history"}));
}

TEST(CommandRegistryTest, MatrixCommandsCheckTheirFileBeforeRunning) {
  for (const char* name : {"validate", "submit", "sim", "run", "bisect"}) {
    const CommandSpec* c = FindCommand(Commands(), name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->check != nullptr) << name;
    EXPECT_EQ(c->args, (std::vector<std::string>{"FILE"})) << name;
  }
}

TEST(CommandRegistryTest, CommandsThatCannotRunSayItWithTheirOwnExitCode) {
  for (const CommandSpec& c : Commands()) {
    const bool own = c.name == "gate" || c.name == "bisect";
    EXPECT_EQ(c.usage_exit, own ? 3 : 2) << c.name;
  }
}

TEST(CommandRegistryTest, AFlagBelongsToTheCommandsThatDeclareIt) {
  auto a = ParseCommandLine({"sim", "m.yaml", "--device", "/dev/x"}, Commands());
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("'--device' is for 'blkbench run'"));
  auto b =
      ParseCommandLine({"run", "m.yaml", "--device", "/dev/x", "--device", "/dev/y"}, Commands());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->All("device"), (std::vector<std::string>{"/dev/x", "/dev/y"}));
  EXPECT_EQ(b->Get("device"), "/dev/y");
  EXPECT_TRUE(b->Has("device"));
  EXPECT_FALSE(b->Has("trace"));
  EXPECT_EQ(b->Get("trace", "none"), "none");
  EXPECT_TRUE(b->All("trace").empty());
}

TEST(CommandRegistryTest, ASpecWithNamedFieldsHasTheDefaultsOfAnythingLeftOut) {
  const CommandSpec c = {.name = "x", .summary = "does x"};
  EXPECT_TRUE(c.args.empty());
  EXPECT_TRUE(c.flags.empty());
  EXPECT_FALSE(c.needs_controller);
  EXPECT_TRUE(c.check == nullptr);
  EXPECT_EQ(c.usage_exit, 2);
  EXPECT_EQ(Synopsis(c), "blkbench x");
}

}  // namespace
}  // namespace blkbench
