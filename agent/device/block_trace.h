// The block layer's own evidence for one run, from its tracepoints: what blktrace would
// have recorded, summarised as the seeds' authors read their logs — the share of
// dispatches that continue the previous one (seed 001's "ratio of sequential io
// calculated from log by blktrace"), requests merged, time in the scheduler (insert →
// issue) and in the device (issue → complete).
//
// A private tracefs instance (<tracefs>/instances/<name>) keeps the host's own tracing
// untouched; its events are filtered to the run's device (dev == major << 20 | minor) and
// read from trace_pipe while the run goes, so memory stays bounded however long it is.
// The instance is journaled (a ConfigfsItem: removed by rmdir) before it is made, so a
// crash leaves nothing once RecoverAll runs. tracefs is mounted at
// /sys/kernel/tracing if it is not mounted yet, and unmounted when the process's last
// trace stops (concurrent runs on several devices share the mount).
// Kernel: include/trace/events/block.h; Documentation/trace/events.rst.
#ifndef BLKBENCH_AGENT_DEVICE_BLOCK_TRACE_H_
#define BLKBENCH_AGENT_DEVICE_BLOCK_TRACE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "agent/device/settings_journal.h"
#include "common/histogram.h"

namespace blkbench {

// One parsed tracepoint line ("dd-123 [000] ..... 31509.948: block_rq_issue: 7,0 WS 4096 ()
// 0 + 8 be,0,4 [dd]").
struct BlockEvent {
  uint64_t ts_ns = 0;
  std::string event;  // "block_rq_issue"
  uint32_t major = 0, minor = 0;
  std::string rwbs;  // "WS", "R", "FWS", ...
  uint64_t sector = 0;
  uint32_t nr_sectors = 0;
  uint64_t split_at = 0;  // block_split: the sector where the bio was cut
  int cpu = 0;            // "[000]"
  int pid = 0;            // the task the event fired in ("dd-123"; 0 for <idle>)
  std::string tail;       // the last bracket: the process name, the error for a complete
};

// Parses one line of `trace`/`trace_pipe` for the block events; false for anything else
// (headers, other events, lost-event markers).
bool ParseBlockEvent(absl::string_view line, BlockEvent* out);

// What the events say about one run. "Issue" is block_rq_issue with data (blkparse's
// D); a flush without data is not counted anywhere.
struct BlockTraceSummary {
  uint64_t inserted = 0;           // block_rq_insert: requests handed to the scheduler
  uint64_t issued = 0;             // block_rq_issue: dispatched to the driver (blkparse 'D')
  uint64_t completed = 0;          // block_rq_complete ('C')
  uint64_t merged = 0;             // rq_merges + back_merges + front_merges
  uint64_t rq_merges = 0;          // block_rq_merge: requests merged into others
  uint64_t back_merges = 0;        // block_bio_backmerge: a bio appended to a request
  uint64_t front_merges = 0;       // block_bio_frontmerge: a bio prepended to a request
  uint64_t splits = 0;             // block_split: a bio split in two (one event per cut)
  uint64_t requeues = 0;           // block_rq_requeue: an issued request put back
  uint64_t sequential_issues = 0;  // issue whose sector is the previous issue's end
  // Issues whose start sector is below the start of the previous issue in the same
  // direction (reads against reads, writes against writes): the device is sent the
  // stream out of ascending order. The first issue of each direction is not compared.
  uint64_t inversions = 0;
  uint32_t inflight_max = 0;           // most requests issued and not completed or requeued
  double inflight_area = 0;            // ∫ in-flight dt, in request·ns, from the first issue
  uint64_t inflight_span_ns = 0;       // from the first issue to the last complete/requeue/issue
  uint64_t lost_events = 0;            // the kernel's ring overran: the summary is partial
  LatencyHistogram insert_to_issue;    // Q2D-like: time in the scheduler
  LatencyHistogram issue_to_complete;  // D2C: time in the driver and device
  double seq_ratio() const {
    return issued == 0 ? 0.0 : static_cast<double>(sequential_issues) / issued;
  }
  // Time-weighted mean of the requests at the device (issued, not yet completed).
  double inflight_mean() const {
    return inflight_span_ns == 0 ? 0.0 : inflight_area / static_cast<double>(inflight_span_ns);
  }
  // The engine's internals keys for the same quantities (engine/model/engine_runner.cc
  // "seq_ratio", "device.inflight_mean", "dispatch.requests", "dispatch.requeues"), so real
  // and simulated runs compare by name; what the engine has no same-named counter for is
  // under "trace.*" (docs/engines.md lists both).
  std::map<std::string, double> Internals() const;
};

// Folds events into a summary in order; requests are matched by (sector, direction).
class BlockTraceAccumulator {
 public:
  void Add(const BlockEvent& e);
  void AddLost(uint64_t n) { summary_.lost_events += n; }
  const BlockTraceSummary& summary() const { return summary_; }

 private:
  // Moves the in-flight integral to `ts_ns` before the count changes.
  void Advance(uint64_t ts_ns);

  BlockTraceSummary summary_;
  uint64_t last_issue_end_ = UINT64_MAX;
  uint64_t last_issue_start_[2] = {UINT64_MAX, UINT64_MAX};  // [read, write]
  uint32_t inflight_ = 0;
  uint64_t first_issue_ns_ = 0, last_change_ns_ = 0;
  bool any_issue_ = false;
  std::map<std::pair<uint64_t, bool>, uint64_t> inserted_at_, issued_at_;  // → ts_ns
};

// The blkparse-format text of a run's events (common/blktrace.h, the same lines as
// `blkbench sim --trace`), streamed to `out` as they are read: Q/G/I/D/C, M/F (bio back
// and front merges), X (splits) and R (requeues); times from `start_ns` (trace_clock mono,
// the trace's start), sequence numbers per CPU. The first `max_events` lines are written,
// the rest counted; a ring overrun is a "# lost N events" comment where it happened.
class BlockTraceText {
 public:
  BlockTraceText(std::ostream& out, uint64_t start_ns, uint64_t max_events)
      : out_(out), start_ns_(start_ns), max_events_(max_events) {}
  void Add(const BlockEvent& e);
  void AddLost(uint64_t n);
  uint64_t written() const { return written_; }
  uint64_t dropped() const { return dropped_; }  // beyond max_events

 private:
  std::ostream& out_;
  const uint64_t start_ns_;
  const uint64_t max_events_;
  uint64_t written_ = 0, dropped_ = 0;
  std::map<int, uint64_t> seq_;  // per CPU
};

// Lines a run's text trace holds at most: 2^24 (about 1.4 GB of text; at 100k IOPS with
// the five Q/G/I/D/C lines per I/O, 33 s of a run).
constexpr uint64_t kBlockTraceTextMaxEvents = uint64_t{1} << 24;

struct BlockTraceOptions {
  std::string tracefs = "/sys/kernel/tracing";
  std::string instance;  // instance name, e.g. "blkbench-run-42"
  uint32_t major = 0, minor = 0;
  uint32_t buffer_kb = 4096;  // per CPU
  // Non-null: the blkparse text too (BlockTraceText), which also turns on block_bio_queue
  // and block_getrq (Q and G: two more events per I/O, not needed by the summary). Written
  // from the reader's thread until Stop returns; a "# ..." comment line says what was cut.
  std::ostream* text = nullptr;
  uint64_t text_max_events = kBlockTraceTextMaxEvents;
};

class BlockTrace {
 public:
  // Journals and makes the instance, sets the filter and the events, starts the reader.
  // FailedPrecondition when tracefs cannot be mounted or has no block events.
  static absl::StatusOr<std::unique_ptr<BlockTrace>> Start(const BlockTraceOptions& options,
                                                           SettingsJournal& journal);
  // Stops tracing, drains what is left, removes the instance (and the mount if Start made
  // it) and returns the summary.
  absl::StatusOr<BlockTraceSummary> Stop();
  ~BlockTrace();  // Stop() if not called

  BlockTrace(const BlockTrace&) = delete;
  BlockTrace& operator=(const BlockTrace&) = delete;

 private:
  BlockTrace(BlockTraceOptions options, SettingsJournal& journal, std::string dir);
  void ReadLoop();

  BlockTraceOptions options_;
  SettingsJournal& journal_;
  const std::string dir_;  // the instance directory
  int pipe_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread reader_;
  absl::Mutex mu_;
  BlockTraceAccumulator acc_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<BlockTraceText> text_;  // used by the reader thread only, then by Stop
  bool stopped_ = false;
};

// The journal entry name of the trace instance `instance` ("trace-<instance>").
std::string BlockTraceJournalEntry(const std::string& instance);

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_DEVICE_BLOCK_TRACE_H_
