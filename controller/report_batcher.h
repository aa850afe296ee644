// ReportBatcher: the controller's group commit queue. Agents' samples and results from
// every stream are queued in arrival order and handed to one flush call per batch — a
// batch closes `window_ms` after its first report or at `max_reports`, whichever comes
// first — so one durable transaction (one fsync) covers many agents' reports, and the
// controller's mutex is never held while the disk syncs.
//
// Why a window at all: with synchronous=FULL a commit costs one fsync (1–10 ms on the
// lab's disks), and per-report commits under one lock cap the controller at a few
// hundred reports per second however many cores it has. A short window (a few ms,
// against agents' 1 s sample interval) lets a batch fill while the previous one syncs:
// the fsync cost is paid once per batch, not per report.
#ifndef BLKBENCH_CONTROLLER_REPORT_BATCHER_H_
#define BLKBENCH_CONTROLLER_REPORT_BATCHER_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace blkbench {

struct ReportBatcherOptions {
  // A batch is flushed this long after its first report arrived (0: no batching — every
  // Add flushes its report at once, in the caller's thread; the unit tests' mode).
  int64_t window_ms = 5;
  size_t max_reports = 512;    // ... or as soon as it holds this many
  size_t max_pending = 20000;  // Add blocks while this many wait (back-pressure on agents)
};

// Thread-safe. Flushes are serialized and in Add order: reports of one stream (one
// caller thread) are flushed in the order it added them, and a report is flushed only
// after every report added before it. The destructor flushes what is still queued.
template <typename Report>
class ReportBatcher {
 public:
  using Flush = std::function<void(std::vector<Report>&)>;

  ReportBatcher(ReportBatcherOptions options, Flush flush)
      : options_(options), flush_(std::move(flush)) {
    if (options_.max_reports == 0) options_.max_reports = 1;
    if (options_.window_ms > 0) thread_ = std::thread([this] { Run(); });
  }
  ~ReportBatcher() {
    if (!thread_.joinable()) return;
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    thread_.join();
  }
  ReportBatcher(const ReportBatcher&) = delete;
  ReportBatcher& operator=(const ReportBatcher&) = delete;

  void Add(Report report) {
    if (!thread_.joinable()) {
      // Serialized like the batching thread's flushes, so the order promise holds.
      absl::MutexLock lock(&inline_mu_);
      std::vector<Report> one;
      one.push_back(std::move(report));
      flush_(one);
      ++batches_;
      return;
    }
    absl::MutexLock lock(&mu_);
    auto has_room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return queue_.size() < options_.max_pending || stopping_;
    };
    mu_.Await(absl::Condition(&has_room));
    queue_.emplace_back(absl::Now(), std::move(report));
  }

  // Batches flushed so far (for tests and metrics).
  uint64_t batches() const { return batches_.load(); }

 private:
  void Run() {
    while (true) {
      std::vector<Report> batch;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || queue_.size() >= options_.max_reports;
        };
        auto nonempty = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || !queue_.empty();
        };
        mu_.Await(absl::Condition(&nonempty));
        // The window runs from the first queued report: a report waits at most window_ms
        // (plus the flush before it) however slowly the batch fills.
        mu_.AwaitWithDeadline(absl::Condition(&ready),
                              queue_.front().first + absl::Milliseconds(options_.window_ms));
        if (queue_.empty() && stopping_) return;
        const size_t n = std::min(queue_.size(), options_.max_reports);
        batch.reserve(n);
        for (size_t i = 0; i < n; ++i) {
          batch.push_back(std::move(queue_.front().second));
          queue_.pop_front();
        }
      }
      flush_(batch);
      ++batches_;
    }
  }

  ReportBatcherOptions options_;
  const Flush flush_;
  absl::Mutex inline_mu_;
  absl::Mutex mu_;
  std::deque<std::pair<absl::Time, Report>> queue_ ABSL_GUARDED_BY(mu_);  // with arrival
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> batches_{0};
  std::thread thread_;  // last: started after everything it uses
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_REPORT_BATCHER_H_
