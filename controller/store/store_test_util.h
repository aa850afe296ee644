// Test helpers for the store tests: a fresh temporary directory (and SQLite store) per
// test and builders for experiments, samples and results.
#ifndef BLKBENCH_CONTROLLER_STORE_STORE_TEST_UTIL_H_
#define BLKBENCH_CONTROLLER_STORE_STORE_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "blkbench/v1/controller.pb.h"
#include "blkbench/v1/metrics.pb.h"
#include "controller/store/sqlite_store.h"
#include "google/protobuf/util/message_differencer.h"

namespace blkbench::testing {

// A test whose files live in a directory created for it and removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "store_test.XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string DbPath() const { return (dir_ / "blkbench.db").string(); }

  std::filesystem::path dir_;
};

// A TempDirTest with a SqliteStore opened on DbPath() in SetUp.
class SqliteStoreTestBase : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  std::unique_ptr<SqliteStore> store_;
};

inline ::testing::AssertionResult ProtoEq(const google::protobuf::Message& a,
                                          const google::protobuf::Message& b) {
  if (google::protobuf::util::MessageDifferencer::Equals(a, b)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "\n"
                                       << a.DebugString() << "differs from\n"
                                       << b.DebugString();
}

// An experiment of `cells` cells (axis scheduler=s<i>) repeated `repeats` times.
inline v1::Experiment MakeExperiment(const std::string& name, int cells, uint32_t repeats) {
  v1::Experiment e;
  e.set_name(name);
  e.set_file_name(name + ".yaml");
  e.set_matrix_text(absl::StrCat("name: ", name, "\n"));
  e.set_repeats(repeats);
  e.set_created_unix_ms(1700000000000);
  for (int i = 0; i < cells; ++i) {
    v1::CellSpec& cell = *e.add_cells();
    cell.set_index(static_cast<uint32_t>(i));
    v1::AxisValue& axis = *cell.add_axes();
    axis.set_key("scheduler");
    axis.set_value(absl::StrCat("s", i));
    cell.mutable_job()->set_rw(v1::RANDWRITE);
    cell.mutable_job()->set_bs(4096);
    cell.mutable_job()->set_iodepth(32);
    cell.mutable_target()->set_device_class("sim:null_blk");
    (*cell.mutable_device_params())["submit_queues"] = "128";
  }
  return e;
}

inline v1::Histogram MakeHistogram(uint64_t seed, int buckets = 3) {
  v1::Histogram h;
  for (int i = 0; i < buckets; ++i) {
    h.add_bucket_index(static_cast<uint32_t>(seed + 7 * static_cast<uint64_t>(i)));
    h.add_bucket_count(seed + static_cast<uint64_t>(i) + 1);
    h.set_count(h.count() + seed + static_cast<uint64_t>(i) + 1);
  }
  h.set_min_ns(1000 + seed);
  h.set_max_ns(900000 + seed);
  h.set_sum_ns(12345.5 * static_cast<double>(seed + 1));
  return h;
}

inline v1::Sample MakeSample(uint64_t seq, uint64_t salt = 0) {
  v1::Sample s;
  s.set_seq(seq);
  s.set_offset_ns(seq * 1000000000);
  s.set_interval_ns(1000000000);
  s.mutable_io()->set_write_ios(1000 * seq + salt);
  s.mutable_io()->set_write_bytes(4096 * (1000 * seq + salt));
  *s.mutable_lat() = MakeHistogram(seq + salt);
  return s;
}

// Run 1 of a new one-cell experiment in `store`, assigned: attempt 1 under lease "L1".
// Use under ASSERT_NO_FATAL_FAILURE.
inline void AssignRunOne(Store& store) {
  ASSERT_TRUE(store.CreateExperiment(MakeExperiment("e", 1, 1)).ok());
  absl::StatusOr<v1::Run> run = store.GetRun(1);
  ASSERT_TRUE(run.ok()) << run.status();
  run->set_state(v1::RUN_ASSIGNED);
  run->set_attempt(1);
  run->set_agent_id("a1");
  run->set_device_path("/dev/x");
  run->set_lease_id("L1");
  ASSERT_TRUE(store.UpdateRun(*run).ok());
}

// A CommitReports sample report: sample `seq` of attempt 1 of `run_id` under `lease`.
inline AgentReport SampleReport(uint64_t run_id, uint64_t seq, const std::string& lease = "L1") {
  AgentReport r;
  r.run_id = run_id;
  r.attempt = 1;
  r.lease_id = lease;
  r.sample = MakeSample(seq);
  return r;
}

// Run 1's attempt 1 under "L1" finishing DONE (IOPS 1234) after samples 1..samples_through.
inline AgentReport FinishReport(uint64_t samples_through) {
  AgentReport r;
  r.kind = AgentReport::Kind::kFinish;
  r.run_id = 1;
  r.attempt = 1;
  r.lease_id = "L1";
  r.state = v1::RUN_DONE;
  r.finished_unix_ms = 1700000001000;
  r.has_result = true;
  r.result.set_iops(1234);
  r.samples_through = samples_through;
  return r;
}

inline v1::RunResult MakeResult(double iops) {
  v1::RunResult r;
  r.set_duration_ns(30000000000);
  r.mutable_io()->set_write_ios(static_cast<uint64_t>(iops) * 30);
  r.set_iops(iops);
  r.set_bw_bytes_per_sec(iops * 4096);
  *r.mutable_lat() = MakeHistogram(5, 10);
  *r.mutable_write_lat() = MakeHistogram(6, 4);
  r.mutable_lat_summary()->set_p50_ns(20000);
  r.mutable_lat_summary()->set_p99_ns(80000);
  r.mutable_lat_summary()->set_p999_ns(150000);
  r.mutable_lat_summary()->set_mean_ns(23000.5);
  r.set_runner("engine");
  (*r.mutable_internals())["tag_waits"] = 12;
  r.mutable_applied()->set_scheduler("mq-deadline");
  return r;
}

#ifdef BLKBENCH_STORE_TESTDATA
// The text of testdata/`name`: a store as the code before the dialect seam wrote it.
inline std::string TestdataFile(const std::string& name) {
  std::ifstream in(std::string(BLKBENCH_STORE_TESTDATA "/") + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
#endif

// What the testdata stores hold, read through `store` (use under ASSERT_NO_FATAL_FAILURE):
// experiment 1 by alice, its one run DONE with samples 1 and 2 and a result, agent a1
// connected with one device; then new rows continue after the old ones (experiment 2,
// whose run 2 takes a sample with device counters).
inline void ExpectOldStoreServes(Store& store) {
  absl::StatusOr<v1::Experiment> e = store.GetExperiment(1, /*with_results=*/true);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->name(), "old");
  EXPECT_EQ(e->submitted_by(), "alice");
  ASSERT_EQ(e->runs_size(), 1);
  EXPECT_EQ(e->runs(0).state(), v1::RUN_DONE);
  EXPECT_EQ(e->runs(0).samples(), 2u);
  EXPECT_EQ(e->runs(0).last_sample().io().write_ios(), 2000u);
  EXPECT_TRUE(e->runs(0).has_result());
  absl::StatusOr<std::vector<v1::AgentInfo>> agents = store.ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_TRUE((*agents)[0].connected());
  EXPECT_EQ((*agents)[0].devices_size(), 1);
  absl::StatusOr<uint64_t> id = store.CreateExperiment(MakeExperiment("new", 1, 1));
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, 2u);
  v1::Sample with_device = MakeSample(1);
  with_device.mutable_device()->set_reads(7);
  ASSERT_TRUE(store.AppendSample(2, 0, with_device).ok());
  absl::StatusOr<std::vector<v1::Sample>> samples = store.ListSamples(2);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ((*samples)[0].device().reads(), 7u);
}

// Runs a one-value query on a separate raw connection (as an SQL user would).
inline std::string QueryText(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out = "<error>";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_ROW) {
        const unsigned char* text = sqlite3_column_text(stmt, 0);
        out = text != nullptr ? reinterpret_cast<const char*>(text) : "<null>";
      } else if (rc == SQLITE_DONE) {
        out = "<no row>";
      }
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return out;
}

}  // namespace blkbench::testing

#endif  // BLKBENCH_CONTROLLER_STORE_STORE_TEST_UTIL_H_
