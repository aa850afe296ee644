// PgStore's own behaviour on a real server, beyond the shared contract: lost connections
// and a restarted server are Unavailable naming the operation and then recovered from; a
// batch that cannot commit stores none of its reports; foreign and newer databases are
// refused; databases written before the dialect seam open.
#include "controller/store/pg_store.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "controller/store/store_contract.h"

namespace blkbench {
namespace {

using ::blkbench::testing::MakeExperiment;
using ::blkbench::testing::MakeSample;
using ::blkbench::testing::StoreKind;

class PgStoreTest : public ::blkbench::testing::StoreContractTest {
 protected:
  // Opens another PgStore on this test's database.
  absl::StatusOr<std::unique_ptr<PgStore>> OpenAgain() { return PgStore::Open(pg_->Uri(pg_db_)); }
};

TEST_P(PgStoreTest, AKilledSessionIsUnavailableNamingTheOperationThenReconnects) {
  ASSERT_TRUE(store_->CreateExperiment(MakeExperiment("e", 1, 1)).ok());
  // The server ends the store's session, as an administrator or a failover would (the
  // call returns once the session is gone).
  ASSERT_EQ(Query("SELECT COUNT(*) FILTER (WHERE pg_terminate_backend(pid, 60000)) FROM "
                  "pg_stat_activity WHERE datname ="
                  " current_database() AND pid <> pg_backend_pid()"),
            "1");
  absl::StatusOr<v1::Run> run = store_->GetRun(1);
  EXPECT_EQ(run.status().code(), absl::StatusCode::kUnavailable) << run.status();
  EXPECT_TRUE(absl::StrContains(run.status().message(), "begin read transaction")) << run.status();
  run = store_->GetRun(1);  // re-connected
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->state(), v1::RUN_QUEUED);
  ASSERT_TRUE(store_->AppendSample(1, 0, MakeSample(1)).ok());  // statements prepared again
}

TEST_P(PgStoreTest, AStoppedServerIsUnavailableAndARestartedOneServesAgain) {
  ASSERT_TRUE(store_->CreateExperiment(MakeExperiment("e", 1, 1)).ok());
  ASSERT_TRUE(pg_->Stop().ok());
  absl::Status down = store_->AppendSample(1, 0, MakeSample(1));
  EXPECT_EQ(down.code(), absl::StatusCode::kUnavailable) << down;
  // While it is down, re-connecting fails too, naming what was being done.
  down = store_->UpdateExperimentState(1, v1::EXPERIMENT_RUNNING, "", 0);
  EXPECT_EQ(down.code(), absl::StatusCode::kUnavailable) << down;
  EXPECT_TRUE(absl::StrContains(down.message(), "update experiment state")) << down;
  ASSERT_TRUE(pg_->Start().ok());
  ASSERT_TRUE(store_->AppendSample(1, 0, MakeSample(1)).ok());
  absl::StatusOr<std::vector<v1::Sample>> samples = store_->ListSamples(1);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->size(), 1u);
}

TEST_P(PgStoreTest, ABatchThatCannotCommitStoresNoneOfItsReports) {
  // Another client holds the histograms table; the store's lock wait is bounded.
  ASSERT_TRUE(
      pg_->Exec(pg_db_, absl::StrCat("ALTER DATABASE ", pg_db_, " SET lock_timeout = '200ms'"))
          .ok());
  absl::StatusOr<std::unique_ptr<PgStore>> store = OpenAgain();  // picks the setting up
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->CreateExperiment(MakeExperiment("e", 1, 1)).ok());
  v1::Run run = *(*store)->GetRun(1);
  run.set_state(v1::RUN_ASSIGNED);
  run.set_attempt(1);
  run.set_lease_id("L1");
  ASSERT_TRUE((*store)->UpdateRun(run).ok());
  std::vector<AgentReport> batch(2);
  for (uint64_t seq : {1, 2}) {
    AgentReport& r = batch[seq - 1];
    r.run_id = 1;
    r.attempt = 1;
    r.lease_id = "L1";
    r.sample = MakeSample(seq);
  }
  batch[0].sample.clear_lat();  // stored without touching histograms; the second blocks

  PGconn* holder = PQconnectdb(pg_->Uri(pg_db_).c_str());
  ASSERT_EQ(PQstatus(holder), CONNECTION_OK) << PQerrorMessage(holder);
  PGresult* locked = PQexec(holder, "BEGIN; LOCK TABLE histograms IN ACCESS EXCLUSIVE MODE");
  ASSERT_EQ(PQresultStatus(locked), PGRES_COMMAND_OK) << PQresultErrorMessage(locked);
  PQclear(locked);
  absl::StatusOr<std::vector<absl::Status>> got = (*store)->CommitReports(batch);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable) << got.status();
  PQclear(PQexec(holder, "COMMIT"));
  PQfinish(holder);

  // Whole batches only: the first report, though written, was rolled back with the rest.
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples"), "0");
  EXPECT_EQ(Query("SELECT state FROM runs WHERE id = 1"), "RUN_ASSIGNED");
  got = (*store)->CommitReports(batch);  // the agents' resend
  ASSERT_TRUE(got.ok()) << got.status();
  for (const absl::Status& s : *got) EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples"), "2");
  EXPECT_EQ(Query("SELECT state FROM runs WHERE id = 1"), "RUN_RUNNING");
}

TEST_P(PgStoreTest, OpeningTwiceMigratesOnceAndForeignOrNewerDatabasesAreRefused) {
  ASSERT_TRUE(store_->CreateExperiment(MakeExperiment("e", 1, 1)).ok());
  absl::StatusOr<std::unique_ptr<PgStore>> again = OpenAgain();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->GetExperiment(1, false)->name(), "e");
  EXPECT_EQ(Query("SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_version"),
            "1,2,3");

  ASSERT_TRUE(pg_->Exec(pg_db_,
                        "INSERT INTO schema_version (version, description) VALUES "
                        "(99, 'from the future')")
                  .ok());
  absl::StatusOr<std::unique_ptr<PgStore>> newer = OpenAgain();
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kFailedPrecondition) << newer.status();
  EXPECT_TRUE(absl::StrContains(newer.status().message(), "newer")) << newer.status();

  absl::StatusOr<std::string> other = pg_->CreateDatabase();
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(pg_->Exec(*other, "CREATE TABLE invoices (id INT)").ok());
  absl::StatusOr<std::unique_ptr<PgStore>> foreign = PgStore::Open(pg_->Uri(*other));
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kFailedPrecondition) << foreign.status();
  EXPECT_TRUE(pg_->DropDatabase(*other).ok());

  absl::StatusOr<std::unique_ptr<PgStore>> nowhere =
      PgStore::Open("postgresql:///blkbench?host=/nonexistent-socket-dir");
  EXPECT_EQ(nowhere.status().code(), absl::StatusCode::kUnavailable) << nowhere.status();
}

TEST_P(PgStoreTest, ADatabaseWrittenBeforeTheDialectSeamOpensAndServes) {
  // Its version 1 (no device counters yet) and its version 2 (no job intervals yet) are
  // migrated to the current 3.
  for (const bool version_one : {true, false}) {
    // testdata/pg_store_v2.sql: a database as PgStore wrote it before the dialect seam.
    SCOPED_TRACE(version_one ? "version 1" : "version 2");
    absl::StatusOr<std::string> db = pg_->CreateDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(pg_->Exec(*db, ::blkbench::testing::TestdataFile("pg_store_v2.sql")).ok());
    if (version_one) {
      ASSERT_TRUE(pg_->Exec(*db,
                            "ALTER TABLE samples DROP COLUMN device;"
                            " DELETE FROM schema_version WHERE version = 2")
                      .ok());
    }
    absl::StatusOr<std::unique_ptr<PgStore>> store = PgStore::Open(pg_->Uri(*db));
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ(pg_->QueryText(*db,
                             "SELECT string_agg(version::text, ',' ORDER BY version)"
                             " FROM schema_version"),
              "1,2,3");
    ASSERT_NO_FATAL_FAILURE(::blkbench::testing::ExpectOldStoreServes(**store));
    store->reset();
    EXPECT_TRUE(pg_->DropDatabase(*db).ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Postgres, PgStoreTest, ::testing::Values(StoreKind::kPostgres),
                         ::blkbench::testing::StoreKindName);

}  // namespace
}  // namespace blkbench
