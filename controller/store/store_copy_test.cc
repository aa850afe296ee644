// MigrateStore (`blkbench-controller migrate`): a populated SQLite store copied into a real
// PostgreSQL server reads back the same through the Store interface; a non-empty target
// is refused and left as it was.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "controller/store/store_contract.h"
#include "controller/store/store_factory.h"

namespace blkbench {
namespace {

using ::blkbench::testing::MakeExperiment;
using ::blkbench::testing::MakeResult;
using ::blkbench::testing::MakeSample;
using ::blkbench::testing::ProtoEq;
using ::blkbench::testing::StoreKind;

class MigrateTest : public ::blkbench::testing::StoreContractTest {
 protected:
  // A SQLite store with every kind of row: experiments in several states, runs queued,
  // assigned, running, re-queued, done with a result and failed, samples of current and
  // superseded attempts, added repeats, a cancel request and two agents with devices.
  void Populate(Store& s) {
    ASSERT_EQ(*s.CreateExperiment(MakeExperiment("first", 2, 2)), 1u);   // runs 1..4
    ASSERT_EQ(*s.CreateExperiment(MakeExperiment("second", 3, 1)), 2u);  // runs 5..7
    ASSERT_TRUE(s.AddRuns(2, {2, 0}, 1, 1700000005000).ok());            // runs 8, 9
    auto assign = [&](uint64_t id, uint32_t attempt, const std::string& agent) {
      v1::Run run = *s.GetRun(id);
      run.set_state(v1::RUN_ASSIGNED);
      run.set_attempt(attempt);
      run.set_agent_id(agent);
      run.set_device_path("/dev/nullb0");
      run.set_lease_id(absl::StrCat("lease-", id, "-", attempt));
      run.set_started_unix_ms(1700000001000 + static_cast<int64_t>(id));
      ASSERT_TRUE(s.UpdateRun(run).ok());
    };
    assign(1, 1, "host-a");
    for (uint64_t seq = 1; seq <= 3; ++seq) ASSERT_TRUE(s.AppendSample(1, 1, MakeSample(seq)).ok());
    const v1::RunResult result = MakeResult(250000.25);
    ASSERT_TRUE(s.FinishRun(1, 1, v1::RUN_DONE, "", 1700000009000, &result).ok());
    assign(2, 2, "host-a");
    ASSERT_TRUE(s.AppendSample(2, 2, MakeSample(1, 9)).ok());  // RUNNING
    ASSERT_TRUE(s.AppendSample(3, 0, MakeSample(1)).ok());     // superseded by attempt 1:
    assign(3, 1, "host-b");                                    // ASSIGNED, no sample shown
    assign(5, 1, "host-b");
    ASSERT_TRUE(s.AppendSample(5, 1, MakeSample(1)).ok());
    ASSERT_TRUE(s.FinishRun(5, 1, v1::RUN_FAILED, "device vanished", 1700000010000, nullptr).ok());
    assign(6, 1, "host-a");
    ASSERT_TRUE(s.AppendSample(6, 1, MakeSample(1)).ok());
    v1::Run requeued = *s.GetRun(6);  // lease lost: back in the queue, samples gone
    requeued.set_state(v1::RUN_QUEUED);
    requeued.set_agent_id("");
    requeued.set_lease_id("");
    requeued.set_error("lease expired");
    ASSERT_TRUE(s.UpdateRun(requeued).ok());
    ASSERT_TRUE(s.UpdateExperimentState(1, v1::EXPERIMENT_RUNNING, "", 0).ok());
    ASSERT_TRUE(s.RecordCancel(2, "alice").ok());
    v1::AgentInfo a;
    a.set_agent_id("host-a");
    a.mutable_host()->set_hostname("host-a.lab");
    a.set_connected(true);
    a.set_last_seen_unix_ms(1700000011000);
    a.add_devices()->set_path("/dev/nvme0n1");
    a.mutable_devices(0)->set_device_class("ssd");
    a.add_devices()->set_path("/dev/loop0");
    ASSERT_TRUE(s.UpsertAgent(a).ok());
    v1::AgentInfo b;
    b.set_agent_id("host-b");
    ASSERT_TRUE(s.UpsertAgent(b).ok());
  }

  // Both stores read the same through every Store read method.
  void ExpectSameContents(Store& want, Store& got) {
    absl::StatusOr<std::vector<v1::Experiment>> list = want.ListExperiments(0);
    absl::StatusOr<std::vector<v1::Experiment>> got_list = got.ListExperiments(0);
    ASSERT_TRUE(list.ok() && got_list.ok());
    ASSERT_EQ(list->size(), got_list->size());
    for (size_t i = 0; i < list->size(); ++i) {
      EXPECT_TRUE(ProtoEq((*got_list)[i], (*list)[i]));
      const uint64_t id = (*list)[i].id();
      for (bool with_results : {false, true}) {
        absl::StatusOr<v1::Experiment> e = want.GetExperiment(id, with_results);
        absl::StatusOr<v1::Experiment> g = got.GetExperiment(id, with_results);
        ASSERT_TRUE(e.ok() && g.ok()) << g.status();
        EXPECT_TRUE(ProtoEq(*g, *e));
        for (const v1::Run& run : e->runs()) {
          absl::StatusOr<std::vector<v1::Sample>> ws = want.ListSamples(run.id());
          absl::StatusOr<std::vector<v1::Sample>> gs = got.ListSamples(run.id());
          ASSERT_TRUE(ws.ok() && gs.ok()) << gs.status();
          ASSERT_EQ(gs->size(), ws->size()) << "run " << run.id();
          for (size_t k = 0; k < ws->size(); ++k) EXPECT_TRUE(ProtoEq((*gs)[k], (*ws)[k]));
        }
      }
      absl::StatusOr<ExperimentProgress> wp = want.GetExperimentProgress(id);
      absl::StatusOr<ExperimentProgress> gp = got.GetExperimentProgress(id);
      ASSERT_TRUE(wp.ok() && gp.ok());
      EXPECT_EQ(gp->state, wp->state);
      EXPECT_EQ(gp->runs, wp->runs);
      EXPECT_EQ(gp->queued, wp->queued);
      EXPECT_EQ(gp->final_runs, wp->final_runs);
      EXPECT_EQ(gp->failed, wp->failed);
    }
    absl::StatusOr<std::vector<v1::AgentInfo>> wa = want.ListAgents();
    absl::StatusOr<std::vector<v1::AgentInfo>> ga = got.ListAgents();
    ASSERT_TRUE(wa.ok() && ga.ok()) << ga.status();
    ASSERT_EQ(ga->size(), wa->size());
    for (size_t i = 0; i < wa->size(); ++i) EXPECT_TRUE(ProtoEq((*ga)[i], (*wa)[i]));
    absl::StatusOr<std::vector<v1::Run>> wl =
        want.ListRunsInStates({v1::RUN_ASSIGNED, v1::RUN_RUNNING});
    absl::StatusOr<std::vector<v1::Run>> gl =
        got.ListRunsInStates({v1::RUN_ASSIGNED, v1::RUN_RUNNING});
    ASSERT_TRUE(wl.ok() && gl.ok());
    ASSERT_EQ(gl->size(), wl->size());
    for (size_t i = 0; i < wl->size(); ++i) EXPECT_TRUE(ProtoEq((*gl)[i], (*wl)[i]));
  }
};

TEST_P(MigrateTest, APopulatedSqliteStoreReadsBackTheSameFromPostgres) {
  const std::string sqlite_path = (dir_ / "old.db").string();
  {
    absl::StatusOr<std::unique_ptr<Store>> old = OpenStore("sqlite:" + sqlite_path);
    ASSERT_TRUE(old.ok()) << old.status();
    ASSERT_NO_FATAL_FAILURE(Populate(**old));
  }
  store_.reset();  // the target is this test's (empty, migrated) database
  absl::StatusOr<MigrateSummary> summary = MigrateStore("sqlite:" + sqlite_path, pg_->Uri(pg_db_));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->experiments, 2u);
  EXPECT_EQ(summary->runs, 9u);
  EXPECT_EQ(summary->samples, 3u + 1u + 1u);  // runs 1, 2 and 5 (run 6's were re-queued away)
  EXPECT_EQ(summary->results, 1u);
  EXPECT_EQ(summary->agents, 2u);

  absl::StatusOr<std::unique_ptr<Store>> old = OpenStore(sqlite_path);  // a plain path
  absl::StatusOr<std::unique_ptr<Store>> migrated = OpenStore(pg_->Uri(pg_db_));
  ASSERT_TRUE(old.ok() && migrated.ok()) << migrated.status();
  ASSERT_NO_FATAL_FAILURE(ExpectSameContents(**old, **migrated));
  EXPECT_EQ(Query("SELECT cell || ' ' || iops FROM run_results"), "scheduler=s0 250000.25");

  // New ids continue after the copied ones, in both tables.
  absl::StatusOr<uint64_t> next = (*migrated)->CreateExperiment(MakeExperiment("third", 1, 1));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(*next, 3u);
  EXPECT_EQ((*migrated)->GetExperiment(3, false)->runs(0).id(), 10u);

  // A second migrate into the now non-empty database is refused and changes nothing.
  absl::StatusOr<MigrateSummary> again = MigrateStore(sqlite_path, pg_->Uri(pg_db_));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition) << again.status();
  EXPECT_TRUE(absl::StrContains(again.status().message(), "not empty")) << again.status();
  EXPECT_EQ(Query("SELECT COUNT(*) FROM experiments"), "3");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples"), "5");

  EXPECT_EQ(MigrateStore(sqlite_path, sqlite_path).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A directory of its own: a fixed name in /tmp is shared with every other run on the
// host, and SQLite's -wal and -shm files left there by root make it read-only to others.
class StoreFactoryTest : public ::blkbench::testing::TempDirTest {};

TEST_F(StoreFactoryTest, SchemesPickTheStoreAndLogsNeverShowAPassword) {
  const std::string path = DbPath();
  absl::StatusOr<std::unique_ptr<Store>> prefixed = OpenStore("sqlite:" + path);
  ASSERT_TRUE(prefixed.ok()) << prefixed.status();
  EXPECT_NE(dynamic_cast<SqliteStore*>(prefixed->get()), nullptr);
  prefixed->reset();
  absl::StatusOr<std::unique_ptr<Store>> plain = OpenStore(path);  // the same file
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_NE(dynamic_cast<SqliteStore*>(plain->get()), nullptr);
  EXPECT_EQ(OpenStore("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenStore("sqlite:").status().code(), absl::StatusCode::kInvalidArgument);
  // A PostgreSQL URI goes to PgStore: here, a server that is not there.
  EXPECT_EQ(OpenStore("postgres:///x?host=/nonexistent-dir").status().code(),
            absl::StatusCode::kUnavailable);

  EXPECT_EQ(RedactedStoreName("postgresql://bb:s3cret@db.lab:5432/blkbench"),
            "postgresql://bb:***@db.lab:5432/blkbench");
  EXPECT_EQ(RedactedStoreName("postgres://db.lab/blkbench?user=bb&password=s3cret&sslmode=require"),
            "postgres://db.lab/blkbench?user=bb&password=***&sslmode=require");
  EXPECT_EQ(RedactedStoreName("postgresql://bb@db.lab/blkbench"),
            "postgresql://bb@db.lab/blkbench");
  EXPECT_EQ(RedactedStoreName("/var/lib/blkbench/blkbench.db"), "/var/lib/blkbench/blkbench.db");
}

INSTANTIATE_TEST_SUITE_P(Postgres, MigrateTest, ::testing::Values(StoreKind::kPostgres),
                         ::blkbench::testing::StoreKindName);

}  // namespace
}  // namespace blkbench
