// Tests for building, placing into and removing cgroup layouts on fake v1 and v2 trees:
// the directories, weight files, task files and journal entries are checked as files.
#include "agent/cgroup/cgroup_manager.h"

#include <fstream>
#include <memory>
#include <string>

#include "agent/cgroup/fake_cgroupfs.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/cgroup_layout.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ReadFileOr;

v1::CgroupLayout Layout(const std::string& text, uint32_t numjobs) {
  absl::StatusOr<v1::CgroupLayout> layout = workloads::ParseCgroupLayout(text);
  EXPECT_TRUE(layout.ok()) << layout.status();
  workloads::FillCgroupGroups(numjobs, *layout);
  return *layout;
}

class CgroupManagerTest : public ::testing::Test {
 protected:
  void Init(testing::FakeCgroupOptions options) {
    fs_ = std::make_unique<testing::FakeCgroupFs>(tmp_.path(), options);
    auto journal = SettingsJournal::Open(tmp_.path() + "/state", {tmp_.path()}, fs_->paths(),
                                         &testing::FakeCgroupFs::RemoveDir);
    ASSERT_TRUE(journal.ok()) << journal.status();
    journal_ = std::move(*journal);
    const testing::FakeCgroupFs* fs = fs_.get();
    manager_ = std::make_unique<CgroupManager>(
        *journal_,
        CgroupOptions{.parent = "blkbench",
                      .paths = fs_->paths(),
                      .make_dir = [fs](const std::string& p) { return fs->MakeDir(p); }});
  }
  std::string Dir(const std::string& rel) const { return fs_->mount_point() + "/" + rel; }
  std::vector<std::string> Entries() { return *journal_->List(); }

  testing::TempDir tmp_{"cgroup_manager"};
  std::unique_ptr<testing::FakeCgroupFs> fs_;
  std::unique_ptr<SettingsJournal> journal_;
  std::unique_ptr<CgroupManager> manager_;
};

TEST_F(CgroupManagerTest, V1BuildsWeightedGroupsPlacesProcessesAndRemovesEverything) {
  Init({.version = CgroupVersion::kV1});
  auto placed = manager_->Build("run-7-1", Layout("heavy:1000*1,light:100*2", 3), 3, false);
  ASSERT_TRUE(placed.ok()) << placed.status();
  CgroupPlacement& p = **placed;
  EXPECT_EQ(p.version(), CgroupVersion::kV1);
  EXPECT_THAT(p.group_dirs(),
              ElementsAre(Dir("blkbench/run-7-1/heavy"), Dir("blkbench/run-7-1/light")));
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-7-1/heavy/blkio.bfq.weight")), "1000");
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-7-1/light/blkio.bfq.weight")), "100");

  // Journaled: groups first, then the run's directory, then the parent this agent made.
  absl::StatusOr<JournalEntry> entry = journal_->Load("cgroup-run-7-1");
  ASSERT_TRUE(entry.ok()) << entry.status();
  const std::string own = fs_->own_dir();
  EXPECT_THAT(entry->cgroups,
              ElementsAre(CgroupDir{Dir("blkbench/run-7-1/heavy"), "tasks", own, false},
                          CgroupDir{Dir("blkbench/run-7-1/light"), "tasks", own, false},
                          CgroupDir{Dir("blkbench/run-7-1"), "tasks", own, false},
                          CgroupDir{Dir("blkbench"), "tasks", own, true}));

  ASSERT_TRUE(p.Place(0, 1111).ok());
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-7-1/heavy/cgroup.procs")), "1111");
  ASSERT_TRUE(p.Place(2, 3333).ok());
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-7-1/light/cgroup.procs")), "3333");
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-7-1/light/tasks")), "");
  EXPECT_EQ(p.Place(3, 4444).code(), absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(p.Remove().ok());
  EXPECT_FALSE(PathExists(Dir("blkbench")));
  EXPECT_TRUE(PathExists(own));
  EXPECT_TRUE(Entries().empty());
  EXPECT_TRUE(p.Remove().ok());  // idempotent
}

TEST_F(CgroupManagerTest, V1ThreadsArePlacedOneByOneThroughTasks) {
  Init({.version = CgroupVersion::kV1});
  auto placed = manager_->Build("run-1-1", Layout("per-job", 2), 2, /*threads=*/true);
  ASSERT_TRUE(placed.ok()) << placed.status();
  ASSERT_TRUE((*placed)->Place(1, 2222).ok());
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-1-1/j1/tasks")), "2222");
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-1-1/j1/cgroup.procs")), "");
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-1-1/j0/tasks")), "");
}

TEST_F(CgroupManagerTest, V2EnablesIoDownTheTreeAndPrefersBfqWeight) {
  Init({.version = CgroupVersion::kV2});
  auto placed = manager_->Build("run-2-1", Layout("one:500", 2), 2, false);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ((*placed)->version(), CgroupVersion::kV2);
  EXPECT_EQ(ReadFileOr(Dir("blkbench/cgroup.subtree_control")), "+io");
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-2-1/cgroup.subtree_control")), "+io");
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-2-1/g0/io.bfq.weight")), "500");
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-2-1/g0/io.weight")), "default 100");
  EXPECT_EQ(journal_->Load("cgroup-run-2-1")->cgroups[0].tasks_file, "cgroup.procs");
  ASSERT_TRUE((*placed)->Place(1, 777).ok());
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-2-1/g0/cgroup.procs")), "777");
  ASSERT_TRUE((*placed)->Remove().ok());
  EXPECT_FALSE(PathExists(Dir("blkbench")));
}

TEST_F(CgroupManagerTest, V2WithoutBfqUsesIoWeight) {
  Init({.version = CgroupVersion::kV2, .bfq_weight = false});
  auto placed = manager_->Build("run-3-1", Layout("a:50*1,b:900*1", 2), 2, false);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-3-1/a/io.weight")), "50");
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-3-1/b/io.weight")), "900");
}

TEST_F(CgroupManagerTest, V2RefusesThreadsBeforeCreatingAnything) {
  Init({.version = CgroupVersion::kV2});
  auto placed = manager_->Build("run-4-1", Layout("per-job", 2), 2, /*threads=*/true);
  EXPECT_EQ(placed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(placed.status().message(), HasSubstr("not threaded"));
  EXPECT_THAT(placed.status().message(), HasSubstr("thread=0"));
  EXPECT_FALSE(PathExists(Dir("blkbench")));
  EXPECT_TRUE(Entries().empty());
}

TEST_F(CgroupManagerTest, V2ExistingParentWithoutIoIsRefusedAndKept) {
  Init({.version = CgroupVersion::kV2});
  ASSERT_EQ(fs_->MakeDir(Dir("blkbench")), 0);
  auto placed = manager_->Build("run-5-1", Layout("one", 1), 1, false);
  EXPECT_EQ(placed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(placed.status().message(), HasSubstr("exists without io"));
  EXPECT_TRUE(PathExists(Dir("blkbench")));
  EXPECT_FALSE(PathExists(Dir("blkbench/run-5-1")));
}

TEST_F(CgroupManagerTest, ExistingParentIsNeverRemoved) {
  Init({.version = CgroupVersion::kV1});
  ASSERT_EQ(fs_->MakeDir(Dir("blkbench")), 0);
  auto placed = manager_->Build("run-6-1", Layout("one", 1), 1, false);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(journal_->Load("cgroup-run-6-1")->cgroups.size(), 2u);  // g0 and the run's dir
  ASSERT_TRUE((*placed)->Remove().ok());
  EXPECT_TRUE(PathExists(Dir("blkbench")));
  EXPECT_FALSE(PathExists(Dir("blkbench/run-6-1")));
}

TEST_F(CgroupManagerTest, ConcurrentRunsShareTheParentUntilTheLastOneEnds) {
  Init({.version = CgroupVersion::kV1});
  auto a = manager_->Build("run-8-1", Layout("one", 1), 1, false);
  auto b = manager_->Build("run-9-1", Layout("one:10", 1), 1, false);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_TRUE(journal_->Load("cgroup-run-9-1")->cgroups.back().shared);
  ASSERT_TRUE((*a)->Remove().ok());
  EXPECT_FALSE(PathExists(Dir("blkbench/run-8-1")));
  EXPECT_EQ(ReadFileOr(Dir("blkbench/run-9-1/g0/blkio.bfq.weight")), "10");
  ASSERT_TRUE((*b)->Remove().ok());
  EXPECT_FALSE(PathExists(Dir("blkbench")));
  EXPECT_TRUE(Entries().empty());
}

TEST_F(CgroupManagerTest, LeftoverTasksGoBackToTheAgentsCgroup) {
  Init({.version = CgroupVersion::kV1});
  auto placed = manager_->Build("run-10-1", Layout("one", 1), 1, false);
  ASSERT_TRUE(placed.ok()) << placed.status();
  // What the kernel would list for a job that is still alive.
  std::ofstream(Dir("blkbench/run-10-1/g0/tasks")) << "4242\n";
  ASSERT_TRUE((*placed)->Remove().ok());
  EXPECT_EQ(ReadFileOr(fs_->own_dir() + "/tasks"), "4242");
  EXPECT_FALSE(PathExists(Dir("blkbench")));
}

TEST_F(CgroupManagerTest, UnsettableWeightFailsAndLeavesNothing) {
  Init({.version = CgroupVersion::kV1, .weights = false});
  auto placed = manager_->Build("run-11-1", Layout("one:500", 1), 1, false);
  EXPECT_EQ(placed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(placed.status().message(), HasSubstr("blkio.bfq.weight"));
  EXPECT_FALSE(PathExists(Dir("blkbench")));
  EXPECT_TRUE(Entries().empty());
  // The default weight needs no weight file: plain grouping still works.
  auto grouping = manager_->Build("run-11-2", Layout("per-job", 2), 2, false);
  ASSERT_TRUE(grouping.ok()) << grouping.status();
}

TEST_F(CgroupManagerTest, UntrustedLayoutsAndTagsAreRefused) {
  Init({.version = CgroupVersion::kV1});
  v1::CgroupLayout evil = Layout("a:100*1", 1);
  evil.mutable_groups(0)->set_name("../../../etc");
  EXPECT_EQ(manager_->Build("run-12-1", evil, 1, false).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->Build("run-12-1", Layout("a:100*1", 1), 2, false).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->Build("../x", Layout("one", 1), 1, false).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->Build("run-12-1", Layout("root", 1), 1, false).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(PathExists(Dir("blkbench")));
  EXPECT_TRUE(Entries().empty());
}

TEST_F(CgroupManagerTest, ARunDirectoryThatExistsIsNotTakenOver) {
  Init({.version = CgroupVersion::kV1});
  ASSERT_EQ(fs_->MakeDir(Dir("blkbench")), 0);
  ASSERT_EQ(fs_->MakeDir(Dir("blkbench/run-13-1")), 0);
  EXPECT_EQ(manager_->Build("run-13-1", Layout("one", 1), 1, false).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(PathExists(Dir("blkbench/run-13-1")));
  EXPECT_TRUE(Entries().empty());
}

TEST_F(CgroupManagerTest, DestructorRemovesWhatRemoveWasNotCalledFor) {
  Init({.version = CgroupVersion::kV2});
  {
    auto placed = manager_->Build("run-14-1", Layout("per-job", 3), 3, false);
    ASSERT_TRUE(placed.ok()) << placed.status();
    EXPECT_TRUE(PathExists(Dir("blkbench/run-14-1/j2")));
  }
  EXPECT_FALSE(PathExists(Dir("blkbench")));
  EXPECT_TRUE(Entries().empty());
}

}  // namespace
}  // namespace blkbench
