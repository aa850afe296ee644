// ReportBatcher: batches bounded by the window and by max_reports, flushed in Add order,
// everything queued flushed at destruction, and no batching with a window of 0.
#include "controller/report_batcher.h"

#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

// Records every flushed batch.
struct Flushed {
  absl::Mutex mu;
  std::vector<std::vector<int>> batches ABSL_GUARDED_BY(mu);
  size_t total ABSL_GUARDED_BY(mu) = 0;
  void Add(std::vector<int>& batch) {
    absl::MutexLock lock(&mu);
    total += batch.size();
    batches.push_back(batch);
  }
  void AwaitTotal(size_t n) {
    absl::MutexLock lock(&mu);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return total >= n; };
    mu.Await(absl::Condition(&reached));
  }
};

TEST(ReportBatcherTest, ABatchClosesAtMaxReportsBeforeTheWindow) {
  Flushed flushed;
  {
    // A window far longer than the test: only max_reports can close the first batches.
    ReportBatcher<int> b({.window_ms = 3'600'000, .max_reports = 3, .max_pending = 100},
                         [&](std::vector<int>& batch) { flushed.Add(batch); });
    for (int i = 0; i < 7; ++i) b.Add(i);
    flushed.AwaitTotal(6);
    absl::MutexLock lock(&flushed.mu);
    ASSERT_EQ(flushed.batches.size(), 2u);
    EXPECT_EQ(flushed.batches[0], (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(flushed.batches[1], (std::vector<int>{3, 4, 5}));
  }  // the destructor flushes the 7th
  absl::MutexLock lock(&flushed.mu);
  ASSERT_EQ(flushed.batches.size(), 3u);
  EXPECT_EQ(flushed.batches[2], (std::vector<int>{6}));
}

TEST(ReportBatcherTest, ABatchClosesAtTheWindowBeforeMaxReports) {
  Flushed flushed;
  constexpr int64_t kWindowMs = 30;
  ReportBatcher<int> b({.window_ms = kWindowMs, .max_reports = 1000, .max_pending = 2000},
                       [&](std::vector<int>& batch) { flushed.Add(batch); });
  const absl::Time start = absl::Now();
  b.Add(1);
  b.Add(2);
  flushed.AwaitTotal(2);
  const absl::Duration waited = absl::Now() - start;
  absl::MutexLock lock(&flushed.mu);
  // Far below max_reports, the batch still went out: closed by the window, not earlier.
  ASSERT_EQ(flushed.batches.size(), 1u);
  EXPECT_EQ(flushed.batches[0], (std::vector<int>{1, 2}));
  EXPECT_GE(waited, absl::Milliseconds(kWindowMs));
}

TEST(ReportBatcherTest, ReportsOfEachProducerAreFlushedInTheOrderAdded) {
  constexpr int kProducers = 4, kEach = 500;
  Flushed flushed;
  {
    ReportBatcher<int> b({.window_ms = 1, .max_reports = 7, .max_pending = 50},
                         [&](std::vector<int>& batch) { flushed.Add(batch); });
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([&b, p] {
        for (int i = 0; i < kEach; ++i) b.Add(p * kEach + i);
      });
    }
    for (std::thread& t : producers) t.join();
  }
  absl::MutexLock lock(&flushed.mu);
  std::vector<int> next(kProducers, 0);
  size_t total = 0;
  for (const std::vector<int>& batch : flushed.batches) {
    EXPECT_LE(batch.size(), 7u);
    for (int v : batch) {
      const int p = v / kEach;
      EXPECT_EQ(v % kEach, next[static_cast<size_t>(p)]) << "producer " << p;
      next[static_cast<size_t>(p)] = v % kEach + 1;
      ++total;
    }
  }
  EXPECT_EQ(total, static_cast<size_t>(kProducers * kEach));
}

TEST(ReportBatcherTest, AWindowOfZeroFlushesEachReportBeforeAddReturns) {
  Flushed flushed;
  ReportBatcher<int> b({.window_ms = 0, .max_reports = 512, .max_pending = 10},
                       [&](std::vector<int>& batch) { flushed.Add(batch); });
  b.Add(5);
  {
    absl::MutexLock lock(&flushed.mu);
    ASSERT_EQ(flushed.batches.size(), 1u);
    EXPECT_EQ(flushed.batches[0], (std::vector<int>{5}));
  }
  EXPECT_EQ(b.batches(), 1u);
}

}  // namespace
}  // namespace blkbench
