// RELIABILITY.md promise 1 for SqliteStore: what a method returned OK for survives the
// writing process exiting or being SIGKILLed, concurrent writers, and a full disk.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <memory>
#include <thread>
#include <vector>

#include "controller/store/sqlite_store.h"
#include "controller/store/store_test_util.h"

namespace blkbench {
namespace {

using ::blkbench::testing::MakeExperiment;
using ::blkbench::testing::MakeResult;
using ::blkbench::testing::MakeSample;
using ::blkbench::testing::ProtoEq;
using ::blkbench::testing::QueryText;

class SqliteStoreDurabilityTest : public ::blkbench::testing::TempDirTest {};

constexpr int kSamples = 5;

// In a child process: writes an experiment, samples and a finished result; returns the
// exit code (0 = every write returned OK). The store is deliberately never closed.
int WriteInChild(const std::string& path) {
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  if (!store.ok()) return 10;
  SqliteStore* s = store->release();  // leaked: no destructor, no final checkpoint
  absl::StatusOr<uint64_t> id = s->CreateExperiment(MakeExperiment("child", 2, 1));
  if (!id.ok() || *id != 1) return 11;
  for (uint64_t seq = 1; seq <= kSamples; ++seq) {
    if (!s->AppendSample(1, 0, MakeSample(seq)).ok()) return 12;
  }
  const v1::RunResult result = MakeResult(4242);
  if (!s->FinishRun(1, 0, v1::RUN_DONE, "", 1234, &result).ok()) return 13;
  return 0;
}

// What WriteInChild acknowledged, seen through a fresh open.
void ExpectChildWrites(const std::string& path) {
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<v1::Experiment> e = (*store)->GetExperiment(1, /*with_results=*/true);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->name(), "child");
  ASSERT_EQ(e->runs_size(), 2);
  EXPECT_EQ(e->runs(0).state(), v1::RUN_DONE);
  EXPECT_EQ(e->runs(0).samples(), static_cast<uint64_t>(kSamples));
  EXPECT_TRUE(ProtoEq(e->runs(0).result(), MakeResult(4242)));
  absl::StatusOr<std::vector<v1::Sample>> samples = (*store)->ListSamples(1);
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), static_cast<size_t>(kSamples));
  EXPECT_TRUE(ProtoEq(samples->back(), MakeSample(kSamples)));
  EXPECT_EQ(QueryText(path, "PRAGMA integrity_check"), "ok");
}

TEST_F(SqliteStoreDurabilityTest, WritesSurviveTheWriterExiting) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(WriteInChild(DbPath()));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  ExpectChildWrites(DbPath());
}

TEST_F(SqliteStoreDurabilityTest, AcknowledgedWritesSurviveSigkill) {
  int acked[2];
  ASSERT_EQ(pipe(acked), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(acked[0]);
    const char code = static_cast<char>(WriteInChild(DbPath()));
    if (write(acked[1], &code, 1) != 1) _exit(1);
    pause();  // killed here, holding the connection open
    _exit(2);
  }
  close(acked[1]);
  char code = -1;
  ASSERT_EQ(read(acked[0], &code, 1), 1);
  close(acked[0]);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_EQ(code, 0);
  ExpectChildWrites(DbPath());
}

TEST_F(SqliteStoreDurabilityTest, ConcurrentAppendsFromThreadsAndConnections) {
  // Two connections to one file (as two processes would have), four threads each.
  absl::StatusOr<std::unique_ptr<SqliteStore>> first = SqliteStore::Open(DbPath());
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<SqliteStore>> second = SqliteStore::Open(DbPath());
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE((*first)->CreateExperiment(MakeExperiment("x", 2, 1)).ok());

  constexpr int kThreads = 8;
  constexpr uint64_t kPerThread = 40;
  std::vector<absl::Status> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Threads t and t+4 write the same run and seqs through different connections, so
      // half of all appends are duplicates racing each other.
      SqliteStore& store = t < 4 ? **first : **second;
      const uint64_t run = 1 + t % 2;
      const uint64_t base = static_cast<uint64_t>((t / 2) % 2) * kPerThread;
      for (uint64_t i = 1; i <= kPerThread && errors[t].ok(); ++i) {
        errors[t] = store.AppendSample(run, 0, MakeSample(base + i));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& s : errors) EXPECT_TRUE(s.ok()) << s;

  for (uint64_t run : {1, 2}) {
    absl::StatusOr<std::vector<v1::Sample>> samples = (*second)->ListSamples(run);
    ASSERT_TRUE(samples.ok()) << samples.status();
    ASSERT_EQ(samples->size(), 2 * kPerThread);
    for (uint64_t i = 0; i < samples->size(); ++i) EXPECT_EQ((*samples)[i].seq(), i + 1);
  }
  EXPECT_EQ(QueryText(DbPath(), "SELECT COUNT(*) FROM histograms"), std::to_string(4 * kPerThread));
}

TEST_F(SqliteStoreDurabilityTest, FullDiskIsResourceExhaustedAndWritesNothing) {
  SqliteStore::Options options;
  options.max_db_bytes = 256 << 10;  // the schema takes ~80 KiB
  absl::StatusOr<std::unique_ptr<SqliteStore>> opened = SqliteStore::Open(DbPath(), options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  SqliteStore& store = **opened;
  ASSERT_TRUE(store.CreateExperiment(MakeExperiment("fits", 1, 1)).ok());

  // An experiment too large to fit, failing part-way (its experiment row and first
  // cells were written): no row of it may remain.
  v1::Experiment big = MakeExperiment("too big", 50, 20);
  for (v1::CellSpec& cell : *big.mutable_cells()) {
    (*cell.mutable_device_params())["padding"] = std::string(8 << 10, 'x');
  }
  absl::StatusOr<uint64_t> id = store.CreateExperiment(big);
  ASSERT_EQ(id.status().code(), absl::StatusCode::kResourceExhausted) << id.status();
  EXPECT_NE(id.status().message().find("insert cell: database or disk is full"), std::string::npos)
      << id.status();
  absl::StatusOr<std::vector<v1::Experiment>> list = store.ListExperiments(0);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 1u);
  EXPECT_EQ(QueryText(DbPath(), "SELECT COUNT(*) FROM cells"), "1");
  EXPECT_EQ(QueryText(DbPath(), "SELECT COUNT(*) FROM runs"), "1");

  // Samples with large histograms until the disk is full: every acknowledged sample is
  // stored, the refused one is not, not even its sample row without the histogram.
  uint64_t acked = 0;
  absl::Status status;
  for (uint64_t seq = 1; seq < 1000 && status.ok(); ++seq) {
    v1::Sample sample = MakeSample(seq);
    *sample.mutable_lat() = ::blkbench::testing::MakeHistogram(seq, 1500);
    status = store.AppendSample(1, 0, sample);
    if (status.ok()) acked = seq;
  }
  ASSERT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  ASSERT_GT(acked, 0u);
  absl::StatusOr<std::vector<v1::Sample>> samples = store.ListSamples(1);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->size(), acked);
  EXPECT_EQ(QueryText(DbPath(), "SELECT COUNT(*) FROM samples"), std::to_string(acked));
  EXPECT_EQ(QueryText(DbPath(), "SELECT COUNT(*) FROM histograms"), std::to_string(acked));
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA integrity_check"), "ok");

  // With room again (no limit), the same store file takes the refused sample.
  opened->reset();
  absl::StatusOr<std::unique_ptr<SqliteStore>> roomy = SqliteStore::Open(DbPath());
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  EXPECT_TRUE((*roomy)->AppendSample(1, 0, MakeSample(acked + 1)).ok());
}

}  // namespace
}  // namespace blkbench
