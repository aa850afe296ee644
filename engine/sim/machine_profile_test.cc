// Tests for machine profile loading, validation errors and topology distances.
#include "engine/sim/machine_profile.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "common/sim_vocabulary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using ::testing::HasSubstr;

TEST(MachineProfileTest, ShippedProfilesLoad) {
  for (const char* name : {"small-vm", "kvm-2vcpu", "desktop-16", "server-128-4node"}) {
    absl::StatusOr<MachineProfile> p = LoadMachineProfile(name);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->name, name);
    EXPECT_GT(p->stage.submit, 0u);
    // Every built-in scheduler has its costs, under its own name.
    const SchedulerCosts* dd = p->CostsOf("mq-deadline");
    const SchedulerCosts* bfq = p->CostsOf("bfq");
    const SchedulerCosts* kyber = p->CostsOf("kyber");
    ASSERT_TRUE(dd != nullptr && bfq != nullptr && kyber != nullptr) << name;
    ASSERT_TRUE(dd->lock && bfq->lock);
    EXPECT_FALSE(kyber->lock);  // per-ctx and per-hctx locks only
    EXPECT_GT(dd->lock->missed_lines, 0);
    EXPECT_GT(bfq->lock->missed_lines, dd->lock->missed_lines);
    EXPECT_GT(bfq->dispatch, dd->dispatch);
  }
}

// The matrix parser checks machine names against common/sim_vocabulary's list: it must be
// exactly the shipped profiles (the directory installed binaries read), each loading under
// its own name with the description the docs show.
TEST(MachineProfileTest, VocabularyListsExactlyTheShippedProfiles) {
  std::vector<std::string> shipped;
  for (const auto& entry : std::filesystem::directory_iterator(MachineProfilesDir())) {
    if (entry.path().extension() == ".yaml") shipped.push_back(entry.path().stem().string());
  }
  std::sort(shipped.begin(), shipped.end());
  std::vector<std::string> listed;
  for (const MachineProfileDef& m : MachineProfiles()) {
    listed.emplace_back(m.name);
    absl::StatusOr<MachineProfile> p = LoadMachineProfile(std::string(m.name));
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->description, m.description) << m.name;
  }
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, shipped);
  EXPECT_TRUE(IsMachineProfilePath("./my.yaml"));
  EXPECT_TRUE(IsMachineProfilePath("lab.yaml"));
  EXPECT_FALSE(IsMachineProfilePath("desktop-16"));
}

TEST(MachineProfileTest, DesktopTopologyAndDistances) {
  absl::StatusOr<MachineProfile> p = LoadMachineProfile("desktop-16");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->cpus(), 32);
  EXPECT_EQ(p->ccxs(), 2);
  EXPECT_EQ(p->numa_nodes(), 1);
  EXPECT_EQ(p->CcxOf(7), 0);
  EXPECT_EQ(p->CcxOf(8), 1);
  EXPECT_EQ(p->CcxOf(16 + 8), 1);  // SMT sibling of CPU 8
  EXPECT_EQ(p->LineTransferNs(3, 3), 0u);
  EXPECT_EQ(p->LineTransferNs(3, 19), p->coherence.same_core);
  EXPECT_EQ(p->LineTransferNs(0, 7), 17u);
  EXPECT_EQ(p->LineTransferNs(0, 8), 80u);
}

TEST(MachineProfileTest, ServerNodeDistanceMatrix) {
  absl::StatusOr<MachineProfile> p = LoadMachineProfile("server-128-4node");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->cpus(), 128);
  EXPECT_EQ(p->numa_nodes(), 4);
  EXPECT_EQ(p->NodeOf(31), 0);
  EXPECT_EQ(p->NodeOf(32), 1);
  EXPECT_EQ(p->LineTransferNs(0, 3), p->coherence.same_ccx);
  EXPECT_EQ(p->LineTransferNs(0, 4), p->coherence.same_node);
  EXPECT_EQ(p->LineTransferNs(0, 40), 120u);   // other die, same socket
  EXPECT_EQ(p->LineTransferNs(0, 100), 250u);  // other socket
  EXPECT_GE(p->LineTransferNs(0, 100), 100u);
  EXPECT_LE(p->LineTransferNs(0, 100), 300u);
}

// A path never reaches open(): a profile file travels with the matrix instead
// (target.machine_profile), so a matrix cannot make an agent read /etc/shadow or
// /dev/zero, a FIFO or a device outside its allowlist.
TEST(MachineProfileTest, RefusesPathsAndReportsMissingName) {
  for (const std::string& bad :
       {MachineProfilesDir() + "/small-vm.yaml", std::string("/etc/shadow"),
        std::string("/dev/zero"), std::string("../small-vm"), std::string("small-vm.yaml"),
        std::string(".hidden"), std::string("a b"), std::string(100, 'x')}) {
    absl::StatusOr<MachineProfile> p = LoadMachineProfile(bad);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(p.status().message(), HasSubstr("expected a profile name")) << bad;
  }
  absl::StatusOr<MachineProfile> missing = LoadMachineProfile("no-such-machine");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("no-such-machine"));
}

TEST(MachineProfileTest, EnvironmentOverridesProfilesDir) {
  const std::string shipped = MachineProfilesDir();
  ASSERT_EQ(setenv("BLKBENCH_ENGINE_PROFILES_DIR", "/nonexistent-profiles", 1), 0);
  absl::StatusOr<MachineProfile> p = LoadMachineProfile("desktop-16");
  unsetenv("BLKBENCH_ENGINE_PROFILES_DIR");
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(p.status().message(), HasSubstr("/nonexistent-profiles/desktop-16.yaml"));
  EXPECT_EQ(MachineProfilesDir(), shipped);
}

// An installed agent (or one unpacked from the .deb anywhere) finds the profiles beside
// its prefix; a build-tree binary uses the source tree's.
TEST(MachineProfileTest, SearchPathFollowsTheExecutable) {
  std::vector<std::string> installed = MachineProfileSearchPath("/opt/lab/bin/blkbench-agent");
  ASSERT_EQ(installed.size(), 2u);
  EXPECT_EQ(installed[0], "/opt/lab/share/blkbench/profiles");
  EXPECT_THAT(installed[1], ::testing::EndsWith("/share/blkbench/profiles"));
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  std::vector<std::string> build = MachineProfileSearchPath(self);
  ASSERT_EQ(build.size(), 1u);
  EXPECT_THAT(build[0], ::testing::EndsWith("/engine/profiles"));
  EXPECT_TRUE(std::filesystem::exists(build[0] + "/desktop-16.yaml"));
  EXPECT_EQ(MachineProfilesDir(), build[0]);
}

// A complete minimal profile with one substitution applied.
std::string MinimalWith(const std::string& from, const std::string& to) {
  std::string text = R"(name: t
topology:
  cores: 4
  threads_per_core: 1
  cores_per_ccx: 4
  cores_per_node: 4
stage_ns:
  submit: 1
  request_alloc: 1
  tag_get_single: 1
  tag_get_batch_base: 1
  tag_get_batch_per_request: 1
  plug_flush: 1
  elevator_bio_merge: 1
  elevator_insert: 1
  driver_queue_rq: 1
  completion: 1
coherence_ns:
  same_core: 1
  same_ccx: 1
  same_node: 1
  remote_node: 1
  lock_uncontended: 1
locks:
  handoff_transfers: 1
  generic: {missed_lines: 2}
schedulers:
  mq-deadline: {dispatch_ns: 1, lock_missed_lines: 8}
  bfq: {dispatch_ns: 1, lock_missed_lines: 15}
  kyber: {dispatch_ns: 1}
collapse:
  rho_onset: 0.8
  max_multiplier: 2
  half_waiters: 4
  window_ns: 1000
wakeup_ns:
  median: 20000
  p90: 27000
)";
  return absl::StrReplaceAll(text, {{from, to}});
}

TEST(MachineProfileTest, MinimalTextParses) {
  absl::StatusOr<MachineProfile> p = ParseMachineProfile(MinimalWith("", ""), "t.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->collapse.window_ns, 1000u);
  EXPECT_EQ(p->wakeup.median, 20000u);
  EXPECT_EQ(p->wakeup.p90, 27000u);
}

TEST(MachineProfileTest, ErrorsNameFileLineAndKey) {
  struct Case {
    std::string from, to, want;
  };
  for (const Case& c : std::vector<Case>{
           {"  completion: 1\n", "", "t.yaml:7: stage_ns.completion: missing"},
           {"  submit: 1", "  submit: fast", "t.yaml:8: stage_ns.submit: expected an integer"},
           {"  submit: 1", "  submit: -5", "t.yaml:8: stage_ns.submit: must be in"},
           {"  submit: 1", "  submit: 1\n  sumbit: 2", "t.yaml:9: stage_ns.sumbit: unknown key"},
           {"cores_per_node: 4", "cores_per_node: 3",
            "t.yaml:6: topology.cores_per_node: must divide cores"},
           {"rho_onset: 0.8", "rho_onset: 1.5", "t.yaml:32: collapse.rho_onset: must be in"},
           {"bfq: {dispatch_ns: 1,", "bfq: {dispatch: 1,",
            "t.yaml:29: schedulers.bfq.dispatch_ns: missing"},
           {"kyber: {dispatch_ns: 1}", "kyber: {dispatch_ns: 1, lock: 2}",
            "t.yaml:30: schedulers.kyber.lock: unknown key"},
           {"kyber: {dispatch_ns: 1}", "kyber: 1",
            "t.yaml:30: schedulers.kyber: expected a mapping"},
           {"  p90: 27000", "  p90: 15000", "t.yaml:38: wakeup_ns.p90: must be >= median"},
           {"  median: 20000\n", "", "wakeup_ns.median: missing"},
           {"name: t", "name: [t", "t.yaml:"},
       }) {
    absl::StatusOr<MachineProfile> p = ParseMachineProfile(MinimalWith(c.from, c.to), "t.yaml");
    ASSERT_FALSE(p.ok()) << c.to;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(p.status().message(), HasSubstr(c.want)) << p.status();
  }
}

}  // namespace
}  // namespace blkbench::engine
