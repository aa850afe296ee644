// Crash safety of cgroup layouts: groups journaled by an agent that died (a forked child that
// exits or is SIGKILLed without removing them) are removed by the next agent's RecoverAll, on
// a fake tree and, where the machine has an I/O cgroup hierarchy and we are root, for real.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/cgroup/cgroup_manager.h"
#include "agent/cgroup/fake_cgroupfs.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/cgroup_layout.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

v1::CgroupLayout Layout(const std::string& text, uint32_t numjobs) {
  v1::CgroupLayout layout = *workloads::ParseCgroupLayout(text);
  workloads::FillCgroupGroups(numjobs, layout);
  return layout;
}

// Waits for `pid` and returns its exit code (-signal if killed).
int Reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST(CgroupRecoveryTest, GroupsOfAnAgentThatDiedAreRemovedAtTheNextStart) {
  testing::TempDir tmp("cgroup_recovery");
  testing::FakeCgroupFs fs(tmp.path(), {.version = CgroupVersion::kV1});
  const std::string state = tmp.path() + "/state";
  const pid_t agent = fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    // The "agent": builds the layout and dies without removing it (no destructors run).
    auto journal =
        SettingsJournal::Open(state, {tmp.path()}, fs.paths(), &testing::FakeCgroupFs::RemoveDir);
    if (!journal.ok()) _exit(2);
    CgroupManager manager(**journal,
                          {.parent = "blkbench",
                           .paths = fs.paths(),
                           .make_dir = [&fs](const std::string& p) { return fs.MakeDir(p); }});
    auto placed = manager.Build("run-20-1", Layout("heavy:1000*1,light:100*1", 2), 2, false);
    _exit(placed.ok() ? 0 : 3);
  }
  ASSERT_EQ(Reap(agent), 0);
  const std::string run = fs.mount_point() + "/blkbench/run-20-1";
  ASSERT_EQ(testing::ReadFileOr(run + "/heavy/blkio.bfq.weight"), "1000");

  auto journal =
      SettingsJournal::Open(state, {tmp.path()}, fs.paths(), &testing::FakeCgroupFs::RemoveDir);
  ASSERT_TRUE(journal.ok()) << journal.status();
  absl::StatusOr<RecoveryReport> report = (*journal)->RecoverAll();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->restored, ElementsAre("cgroup-run-20-1"));
  EXPECT_THAT(report->failed, IsEmpty());
  EXPECT_FALSE(PathExists(fs.mount_point() + "/blkbench"));
  EXPECT_TRUE(PathExists(fs.own_dir()));
  EXPECT_THAT(*(*journal)->List(), IsEmpty());
}

TEST(CgroupRecoveryTest, AnEntryRecordedBeforeAnyMkdirRecoversCleanly) {
  testing::TempDir tmp("cgroup_recovery");
  testing::FakeCgroupFs fs(tmp.path(), {.version = CgroupVersion::kV2});
  auto journal = SettingsJournal::Open(tmp.path() + "/state", {tmp.path()}, fs.paths(),
                                       &testing::FakeCgroupFs::RemoveDir);
  ASSERT_TRUE(journal.ok()) << journal.status();
  JournalEntry entry;
  entry.name = "cgroup-run-21-1";
  const std::string parent = fs.mount_point() + "/blkbench";
  entry.cgroups = {{parent + "/run-21-1/g0", "cgroup.procs", fs.own_dir()},
                   {parent + "/run-21-1", "cgroup.procs", fs.own_dir()},
                   {parent, "cgroup.procs", fs.own_dir(), true}};
  ASSERT_TRUE((*journal)->Record(entry).ok());
  absl::StatusOr<RecoveryReport> report = (*journal)->RecoverAll();
  ASSERT_TRUE(report.ok());
  EXPECT_THAT(report->restored, ElementsAre("cgroup-run-21-1"));
  // A journal naming paths outside its roots is refused, not followed.
  entry.name = "cgroup-evil";
  entry.cgroups = {{"/etc", "tasks", fs.own_dir()}};
  EXPECT_EQ((*journal)->Record(entry).code(), absl::StatusCode::kInvalidArgument);
  entry.cgroups = {{parent, "../../etc/passwd", fs.own_dir()}};
  EXPECT_EQ((*journal)->Record(entry).code(), absl::StatusCode::kInvalidArgument);
}

// The blkio (v1) or io (v2) cgroup path of task `pid`, from /proc/<pid>/cgroup.
std::string TaskCgroup(pid_t pid, CgroupVersion version) {
  const std::string text = testing::ReadFileOr(absl::StrCat("/proc/", pid, "/cgroup"));
  absl::StatusOr<std::string> path = OwnCgroupPath(text, version);
  return path.ok() ? *path : "?";
}

// On the machine's own cgroupfs: an agent that placed itself and a child process in its
// groups is SIGKILLed; recovery moves the surviving child back and removes every group.
TEST(RealCgroupRecoveryTest, KilledAgentsGroupsAndSurvivingTaskAreCleanedUp) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
  const std::string parent = absl::StrCat("blkbench-test-", getpid());
  absl::StatusOr<IoHierarchy> h = FindIoHierarchy(SystemPaths(), parent);
  if (!h.ok()) GTEST_SKIP() << "no I/O cgroup hierarchy here: " << h.status().message();
  testing::TempDir state("cgroup_recovery_state");
  const std::string own_before = TaskCgroup(getpid(), h->version);
  // The surviving child is re-parented to us when its agent dies, so we can reap it.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);

  int ready[2], hold[2], child_pid[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(hold), 0);
  ASSERT_EQ(pipe(child_pid), 0);
  const pid_t agent = fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    close(ready[0]);
    close(hold[1]);
    close(child_pid[0]);
    const pid_t survivor = fork();
    if (survivor == 0) {  // blocks until the test closes `hold`
      char c;
      close(ready[1]);
      while (read(hold[0], &c, 1) < 0 && errno == EINTR) {
      }
      _exit(0);
    }
    auto journal = SettingsJournal::Open(state.path() + "/j", {"/sys"});
    if (!journal.ok()) _exit(2);
    CgroupManager manager(**journal, {.parent = parent});
    auto placed = manager.Build("run-30-1", Layout("a:100*1,b:100*1", 2), 2, false);
    if (!placed.ok() || !(*placed)->Place(0, getpid()).ok() ||
        !(*placed)->Place(1, survivor).ok()) {
      _exit(3);
    }
    if (write(child_pid[1], &survivor, sizeof(survivor)) != sizeof(survivor)) _exit(4);
    char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(4);
    while (read(hold[0], &c, 1) < 0 && errno == EINTR) {  // until SIGKILLed
    }
    _exit(5);
  }
  close(ready[1]);
  close(hold[0]);
  close(child_pid[1]);
  char c;
  pid_t survivor = -1;
  const bool built = read(ready[0], &c, 1) == 1 &&
                     read(child_pid[0], &survivor, sizeof(survivor)) == sizeof(survivor);
  const std::string run = absl::StrCat("/", parent, "/run-30-1");
  if (built) {
    EXPECT_EQ(TaskCgroup(agent, h->version), run + "/a");
    EXPECT_EQ(TaskCgroup(survivor, h->version), run + "/b");
  }
  kill(agent, SIGKILL);
  EXPECT_EQ(Reap(agent), built ? -SIGKILL : 3);
  ASSERT_TRUE(built) << "the agent could not build its layout";
  EXPECT_TRUE(PathExists(h->mount_point + run + "/b"));

  auto journal = SettingsJournal::Open(state.path() + "/j", {"/sys"});
  ASSERT_TRUE(journal.ok()) << journal.status();
  absl::StatusOr<RecoveryReport> report = (*journal)->RecoverAll();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->restored, ElementsAre("cgroup-run-30-1"));
  EXPECT_THAT(report->failed, IsEmpty());
  EXPECT_FALSE(PathExists(absl::StrCat(h->mount_point, "/", parent)));
  EXPECT_EQ(TaskCgroup(survivor, h->version), own_before);

  close(hold[1]);
  EXPECT_EQ(Reap(survivor), 0);
  close(ready[0]);
  close(child_pid[0]);
}

}  // namespace
}  // namespace blkbench
