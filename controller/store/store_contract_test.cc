// The Store contract against every implementation (a real SQLite file, a real PostgreSQL
// server): each method's contract, one test per method group (experiments, runs, samples,
// results, agents).
#include "controller/store/store_contract.h"

#include <gtest/gtest.h>

#include <memory>

namespace blkbench {
namespace {

using ::blkbench::testing::MakeExperiment;
using ::blkbench::testing::MakeResult;
using ::blkbench::testing::MakeSample;
using ::blkbench::testing::ProtoEq;
using ::blkbench::testing::StoreKind;

// One PostgreSQL server for the whole binary (started by the first test that needs it).
[[maybe_unused]] ::testing::Environment* const kPgEnvironment =
    ::testing::AddGlobalTestEnvironment(new ::blkbench::testing::PgServerEnvironment);

class StoreTest : public ::blkbench::testing::StoreContractTest {
 protected:
  // Creates an experiment and returns its runs.
  v1::Experiment Create(const std::string& name, int cells, uint32_t repeats) {
    absl::StatusOr<uint64_t> id = store_->CreateExperiment(MakeExperiment(name, cells, repeats));
    EXPECT_TRUE(id.ok()) << id.status();
    absl::StatusOr<v1::Experiment> e = store_->GetExperiment(id.value_or(0), false);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.value_or(v1::Experiment());
  }
};

TEST_P(StoreTest, CreateAndGetExperimentRoundTrips) {
  const v1::Experiment in = MakeExperiment("dd-batch", 2, 3);
  absl::StatusOr<uint64_t> id = store_->CreateExperiment(in);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, 1u);

  absl::StatusOr<v1::Experiment> out = store_->GetExperiment(*id, /*with_results=*/false);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->id(), *id);
  EXPECT_EQ(out->name(), "dd-batch");
  EXPECT_EQ(out->file_name(), "dd-batch.yaml");
  EXPECT_EQ(out->matrix_text(), in.matrix_text());
  EXPECT_EQ(out->repeats(), 3u);
  EXPECT_EQ(out->state(), v1::EXPERIMENT_QUEUED);
  EXPECT_EQ(out->created_unix_ms(), in.created_unix_ms());
  ASSERT_EQ(out->cells_size(), 2);
  EXPECT_TRUE(ProtoEq(out->cells(0), in.cells(0)));
  EXPECT_TRUE(ProtoEq(out->cells(1), in.cells(1)));

  // cells × repeats runs, ids ascending, repeat-major.
  ASSERT_EQ(out->runs_size(), 6);
  for (int i = 0; i < 6; ++i) {
    const v1::Run& run = out->runs(i);
    if (i > 0) {
      EXPECT_GT(run.id(), out->runs(i - 1).id());
    }
    EXPECT_EQ(run.experiment_id(), *id);
    EXPECT_EQ(run.cell_index(), static_cast<uint32_t>(i % 2));
    EXPECT_EQ(run.repeat(), static_cast<uint32_t>(i / 2));
    EXPECT_EQ(run.attempt(), 0u);
    EXPECT_EQ(run.state(), v1::RUN_QUEUED);
    EXPECT_EQ(run.created_unix_ms(), in.created_unix_ms());
    EXPECT_EQ(run.samples(), 0u);
    EXPECT_FALSE(run.has_last_sample());
    EXPECT_FALSE(run.has_result());
  }

  // The label column is there for SQL users.
  EXPECT_EQ(Query("SELECT label FROM cells WHERE cell_index = 1"), "scheduler=s1");
}

TEST_P(StoreTest, CreateRejectsEmptyExperimentsAndStoresNothing) {
  EXPECT_EQ(store_->CreateExperiment(MakeExperiment("a", 2, 0)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateExperiment(MakeExperiment("a", 0, 2)).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::vector<v1::Experiment>> list = store_->ListExperiments(0);
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->empty());
}

TEST_P(StoreTest, ListExperimentsIsNewestFirstAndBounded) {
  Create("first", 1, 1);
  Create("second", 1, 1);
  Create("third", 2, 1);
  absl::StatusOr<std::vector<v1::Experiment>> all = store_->ListExperiments(0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].name(), "third");
  EXPECT_EQ((*all)[2].name(), "first");
  EXPECT_EQ((*all)[0].cells_size(), 0);
  EXPECT_EQ((*all)[0].runs_size(), 0);
  EXPECT_EQ((*all)[0].matrix_text(), "");
  EXPECT_EQ((*all)[0].repeats(), 1u);

  absl::StatusOr<std::vector<v1::Experiment>> two = store_->ListExperiments(2);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1].name(), "second");
}

TEST_P(StoreTest, UpdateExperimentState) {
  const v1::Experiment e = Create("x", 1, 1);
  ASSERT_TRUE(store_->UpdateExperimentState(e.id(), v1::EXPERIMENT_FAILED, "boom", 42).ok());
  absl::StatusOr<v1::Experiment> out = store_->GetExperiment(e.id(), false);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->state(), v1::EXPERIMENT_FAILED);
  EXPECT_EQ(out->error(), "boom");
  EXPECT_EQ(out->finished_unix_ms(), 42);
  EXPECT_EQ(Query("SELECT state FROM experiments"), "EXPERIMENT_FAILED");

  EXPECT_EQ(store_->UpdateExperimentState(99, v1::EXPERIMENT_DONE, "", 1).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetExperiment(99, false).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, UpdateRunWritesBookkeepingFields) {
  const v1::Experiment e = Create("x", 1, 2);
  v1::Run run = e.runs(1);
  run.set_state(v1::RUN_RUNNING);
  run.set_attempt(2);
  run.set_agent_id("host-a");
  run.set_device_path("/dev/nullb0");
  run.set_lease_id("lease-7");
  run.set_started_unix_ms(100);
  run.set_error("previous attempt lost");
  *run.mutable_result() = MakeResult(1);  // ignored: results come only from FinishRun
  ASSERT_TRUE(store_->UpdateRun(run).ok());

  absl::StatusOr<v1::Run> out = store_->GetRun(run.id());
  ASSERT_TRUE(out.ok()) << out.status();
  run.clear_result();
  EXPECT_TRUE(ProtoEq(*out, run));
  EXPECT_EQ(Query("SELECT COUNT(*) FROM results"), "0");

  run.set_id(999);
  EXPECT_EQ(store_->UpdateRun(run).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetRun(999).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, ListRunsInStatesSpansExperimentsInIdOrder) {
  const v1::Experiment a = Create("a", 2, 1);
  const v1::Experiment b = Create("b", 2, 1);
  v1::Run r = b.runs(0);
  r.set_state(v1::RUN_RUNNING);
  ASSERT_TRUE(store_->UpdateRun(r).ok());
  r = a.runs(1);
  r.set_state(v1::RUN_ASSIGNED);
  ASSERT_TRUE(store_->UpdateRun(r).ok());

  absl::StatusOr<std::vector<v1::Run>> live =
      store_->ListRunsInStates({v1::RUN_ASSIGNED, v1::RUN_RUNNING});
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_EQ(live->size(), 2u);
  EXPECT_EQ((*live)[0].id(), a.runs(1).id());
  EXPECT_EQ((*live)[0].state(), v1::RUN_ASSIGNED);
  EXPECT_EQ((*live)[1].id(), b.runs(0).id());

  absl::StatusOr<std::vector<v1::Run>> queued = store_->ListRunsInStates({v1::RUN_QUEUED});
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued->size(), 2u);
  absl::StatusOr<std::vector<v1::Run>> none = store_->ListRunsInStates({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(StoreTest, AppendSampleIsIdempotentPerRunAttemptSeq) {
  const v1::Experiment e = Create("x", 1, 1);
  const uint64_t run = e.runs(0).id();
  ASSERT_TRUE(store_->AppendSample(run, 0, MakeSample(1)).ok());
  ASSERT_TRUE(store_->AppendSample(run, 0, MakeSample(2)).ok());
  // A resend of seq 2 (even with different content) is ignored, and so is its histogram.
  ASSERT_TRUE(store_->AppendSample(run, 0, MakeSample(2, /*salt=*/5)).ok());
  ASSERT_TRUE(store_->AppendSample(run, 0, MakeSample(3)).ok());

  absl::StatusOr<std::vector<v1::Sample>> samples = store_->ListSamples(run);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_TRUE(ProtoEq((*samples)[i], MakeSample(i + 1)));
  EXPECT_EQ(Query("SELECT COUNT(*) FROM histograms WHERE owner_kind = 'sample'"), "3");

  absl::StatusOr<v1::Experiment> out = store_->GetExperiment(e.id(), false);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->runs(0).samples(), 3u);
  EXPECT_TRUE(ProtoEq(out->runs(0).last_sample(), MakeSample(3)));

  // A new attempt starts its own sequence; the old attempt's samples stop counting.
  v1::Run retry = e.runs(0);
  retry.set_attempt(1);
  ASSERT_TRUE(store_->UpdateRun(retry).ok());
  samples = store_->ListSamples(run);
  ASSERT_TRUE(samples.ok());
  EXPECT_TRUE(samples->empty());
  v1::Sample no_hist = MakeSample(1);
  no_hist.clear_lat();
  ASSERT_TRUE(store_->AppendSample(run, 1, no_hist).ok());
  absl::StatusOr<v1::Run> got = store_->GetRun(run);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->samples(), 1u);
  EXPECT_TRUE(ProtoEq(got->last_sample(), no_hist));

  EXPECT_EQ(store_->AppendSample(999, 0, MakeSample(1)).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListSamples(999).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, SamplesKeepTheDeviceCountersAndTheirAbsence) {
  const v1::Experiment e = Create("x", 1, 1);
  const uint64_t run = e.runs(0).id();
  v1::Sample with = MakeSample(1);
  v1::DiskStatsInterval& d = *with.mutable_device();
  d.set_reads(11);
  d.set_sectors_written(uint64_t{1} << 40);
  d.set_in_flight(7);
  d.set_io_ms(980);
  d.set_weighted_io_ms(7800);
  v1::Sample idle = MakeSample(2);
  idle.mutable_device();  // an interval in which the device did nothing: all zero, present
  const v1::Sample without = MakeSample(3);
  for (const v1::Sample* s : std::initializer_list<const v1::Sample*>{&with, &idle, &without}) {
    ASSERT_TRUE(store_->AppendSample(run, 0, *s).ok());
  }
  absl::StatusOr<std::vector<v1::Sample>> samples = store_->ListSamples(run);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 3u);
  EXPECT_TRUE(ProtoEq((*samples)[0], with));
  EXPECT_TRUE((*samples)[1].has_device());
  EXPECT_TRUE(ProtoEq((*samples)[1], idle));
  EXPECT_FALSE((*samples)[2].has_device());
  absl::StatusOr<v1::Run> got = store_->GetRun(run);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->last_sample().has_device());
}

TEST_P(StoreTest, SamplesKeepTheirJobIntervalsAndTheirAbsence) {
  const v1::Experiment e = Create("x", 1, 1);
  const uint64_t run = e.runs(0).id();
  v1::Sample with = MakeSample(1);
  for (uint32_t k = 0; k < 2; ++k) {
    v1::JobInterval& j = *with.add_jobs();
    j.set_index(k);
    j.set_name(k == 0 ? "reader" : "writer");
    j.mutable_io()->set_read_ios(10 + k);
    j.mutable_io()->set_write_bytes(4096 * k);
    j.mutable_read_lat()->set_count(10 + k);
    j.mutable_read_lat()->add_bucket_index(100);
    j.mutable_read_lat()->add_bucket_count(10 + k);
  }
  const v1::Sample without = MakeSample(2);
  ASSERT_TRUE(store_->AppendSample(run, 0, with).ok());
  ASSERT_TRUE(store_->AppendSample(run, 0, without).ok());
  absl::StatusOr<std::vector<v1::Sample>> samples = store_->ListSamples(run);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_TRUE(ProtoEq((*samples)[0], with));
  EXPECT_EQ((*samples)[1].jobs_size(), 0);
  absl::StatusOr<v1::Run> got = store_->GetRun(run);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->last_sample().jobs_size(), 0);
}

TEST_P(StoreTest, FinishRunIsIdempotentAndFencedByAttempt) {
  const v1::Experiment e = Create("x", 1, 1);
  const uint64_t run = e.runs(0).id();
  const v1::RunResult result = MakeResult(250000);
  ASSERT_TRUE(store_->FinishRun(run, 0, v1::RUN_DONE, "", 77, &result).ok());
  // A resend, even a different one, changes nothing.
  const v1::RunResult other = MakeResult(1);
  ASSERT_TRUE(store_->FinishRun(run, 0, v1::RUN_FAILED, "late", 88, &other).ok());

  absl::StatusOr<v1::Run> got = store_->GetRun(run);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->state(), v1::RUN_DONE);
  EXPECT_EQ(got->error(), "");
  EXPECT_EQ(got->finished_unix_ms(), 77);
  EXPECT_TRUE(ProtoEq(got->result(), result));

  EXPECT_EQ(store_->FinishRun(run, 1, v1::RUN_DONE, "", 1, &result).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->FinishRun(run, 0, v1::RUN_RUNNING, "", 1, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->FinishRun(999, 0, v1::RUN_DONE, "", 1, nullptr).code(),
            absl::StatusCode::kNotFound);
}

// A run of a cell with named jobs keeps each job's share, histograms included.
TEST_P(StoreTest, NamedJobResultsRoundTrip) {
  const v1::Experiment e = Create("x", 1, 1);
  v1::RunResult result = MakeResult(1000);
  for (const char* name : {"reader", "writer"}) {
    v1::JobResult* j = result.add_jobs();
    j->set_name(name);
    j->mutable_io()->set_write_ios(15000);
    j->set_iops(500);
    *j->mutable_lat() = testing::MakeHistogram(5, 5);
    *j->mutable_write_lat() = testing::MakeHistogram(6, 2);
    j->mutable_lat_summary()->set_p99_ns(80000);
  }
  ASSERT_TRUE(store_->FinishRun(e.runs(0).id(), 0, v1::RUN_DONE, "", 5, &result).ok());
  absl::StatusOr<v1::Run> got = store_->GetRun(e.runs(0).id());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->result().jobs_size(), 2);
  EXPECT_TRUE(ProtoEq(got->result(), result));
}

TEST_P(StoreTest, ResultsAreAttachedOnlyWithResultsAndForTheCurrentAttempt) {
  const v1::Experiment e = Create("x", 2, 1);
  const v1::RunResult result = MakeResult(123456.5);
  ASSERT_TRUE(store_->FinishRun(e.runs(1).id(), 0, v1::RUN_DONE, "", 5, &result).ok());
  ASSERT_TRUE(store_->FinishRun(e.runs(0).id(), 0, v1::RUN_FAILED, "io error", 6, nullptr).ok());

  absl::StatusOr<v1::Experiment> without = store_->GetExperiment(e.id(), false);
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(without->runs(1).has_result());
  EXPECT_EQ(without->runs(1).state(), v1::RUN_DONE);
  EXPECT_EQ(without->runs(0).state(), v1::RUN_FAILED);
  EXPECT_EQ(without->runs(0).error(), "io error");

  absl::StatusOr<v1::Experiment> with = store_->GetExperiment(e.id(), true);
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_FALSE(with->runs(0).has_result());
  EXPECT_TRUE(ProtoEq(with->runs(1).result(), result));

  // Queryable columns and the dashboard view.
  EXPECT_EQ(Query("SELECT p99_ns FROM results"), "80000");
  EXPECT_EQ(Query("SELECT cell || ' ' || iops FROM run_results"), "scheduler=s1 123456.5");

  // Re-queued for another attempt: the old result no longer belongs to the run.
  v1::Run retry = with->runs(1);
  retry.clear_result();
  retry.set_attempt(1);
  retry.set_state(v1::RUN_QUEUED);
  ASSERT_TRUE(store_->UpdateRun(retry).ok());
  with = store_->GetExperiment(e.id(), true);
  ASSERT_TRUE(with.ok());
  EXPECT_FALSE(with->runs(1).has_result());
  const v1::RunResult second = MakeResult(99);
  ASSERT_TRUE(store_->FinishRun(retry.id(), 1, v1::RUN_DONE, "", 9, &second).ok());
  absl::StatusOr<v1::Run> got = store_->GetRun(retry.id());
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(ProtoEq(got->result(), second));
  EXPECT_EQ(Query("SELECT COUNT(*) FROM histograms WHERE owner_kind = 'result'"), "2");
}

TEST_P(StoreTest, AgentsUpsertReplaceAndList) {
  v1::AgentInfo a;
  a.set_agent_id("host-a");
  a.mutable_host()->set_hostname("host-a.lab");
  a.mutable_host()->set_kernel_release("6.16.0");
  a.set_connected(true);
  a.set_last_seen_unix_ms(10);
  a.add_devices()->set_path("/dev/nvme0n1");
  a.mutable_devices(0)->set_device_class("ssd");
  a.add_devices()->set_path("/dev/loop0");
  v1::AgentInfo b;
  b.set_agent_id("host-b");
  ASSERT_TRUE(store_->UpsertAgent(b).ok());
  ASSERT_TRUE(store_->UpsertAgent(a).ok());

  const v1::Experiment e = Create("x", 1, 2);
  v1::Run run = e.runs(1);
  run.set_agent_id("host-a");
  run.set_state(v1::RUN_RUNNING);
  ASSERT_TRUE(store_->UpdateRun(run).ok());

  absl::StatusOr<std::vector<v1::AgentInfo>> agents = store_->ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  ASSERT_EQ(agents->size(), 2u);
  EXPECT_EQ((*agents)[0].agent_id(), "host-a");
  EXPECT_TRUE(ProtoEq((*agents)[0].host(), a.host()));
  EXPECT_TRUE((*agents)[0].connected());
  ASSERT_EQ((*agents)[0].devices_size(), 2);  // by path
  EXPECT_TRUE(ProtoEq((*agents)[0].devices(0), a.devices(1)));
  EXPECT_TRUE(ProtoEq((*agents)[0].devices(1), a.devices(0)));
  ASSERT_EQ((*agents)[0].running_run_ids_size(), 1);
  EXPECT_EQ((*agents)[0].running_run_ids(0), run.id());
  EXPECT_EQ((*agents)[1].agent_id(), "host-b");

  // Replace: fewer devices, disconnected.
  a.set_connected(false);
  a.set_last_seen_unix_ms(20);
  a.mutable_devices()->RemoveLast();
  ASSERT_TRUE(store_->UpsertAgent(a).ok());
  // A bad upsert changes nothing.
  v1::AgentInfo dup = a;
  *dup.add_devices() = a.devices(0);
  dup.set_last_seen_unix_ms(30);
  EXPECT_EQ(store_->UpsertAgent(dup).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->UpsertAgent(v1::AgentInfo()).code(), absl::StatusCode::kInvalidArgument);

  agents = store_->ListAgents();
  ASSERT_TRUE(agents.ok());
  ASSERT_EQ(agents->size(), 2u);
  EXPECT_FALSE((*agents)[0].connected());
  EXPECT_EQ((*agents)[0].last_seen_unix_ms(), 20);
  ASSERT_EQ((*agents)[0].devices_size(), 1);
  EXPECT_EQ((*agents)[0].devices(0).path(), "/dev/nvme0n1");
}

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreTest, ::testing::Values(StoreKind::kSqlite),
                         ::blkbench::testing::StoreKindName);
INSTANTIATE_TEST_SUITE_P(Postgres, StoreTest, ::testing::Values(StoreKind::kPostgres),
                         ::blkbench::testing::StoreKindName);

}  // namespace
}  // namespace blkbench
