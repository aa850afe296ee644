// Block tracepoints for one run (block_trace.h).
#include "agent/device/block_trace.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/device/sysfs.h"
#include "common/blktrace.h"

namespace blkbench {
namespace {

// The events read, each filtered to the device. Merges come from the elevator's and the
// plug's merge paths; insert is absent for requests that bypass the scheduler.
constexpr const char* kEvents[] = {"block_rq_insert", "block_rq_issue",      "block_rq_complete",
                                   "block_rq_merge",  "block_bio_backmerge", "block_bio_frontmerge",
                                   "block_split",     "block_rq_requeue"};
// The ring per CPU with the text trace on: five events per I/O instead of three, and the
// reader formats each one, so it falls behind sooner (docs/performance.md "Block trace cost").
constexpr uint32_t kTextBufferKb = 16384;
// Only for the text trace: one each per bio, and the summary does not read them.
constexpr const char* kTextEvents[] = {"block_bio_queue", "block_getrq"};

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // trace_clock "mono" is the same clock
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

bool IsWrite(absl::string_view rwbs) { return absl::StrContains(rwbs, "W"); }

absl::Status Write(const std::string& path, absl::string_view value) {
  return WriteAttribute(path, value);
}

// tracefs mounted by this process, shared by concurrent traces (runs on several devices):
// mounted by the first that needs it, unmounted when the last one stops.
struct MountUsers {
  absl::Mutex mu;
  int users ABSL_GUARDED_BY(mu) = 0;
  bool mounted_by_us ABSL_GUARDED_BY(mu) = false;
};
MountUsers& Mounts() {
  static auto* m = new MountUsers;
  return *m;
}

// Mounts tracefs at `path` unless it is mounted; counts a user either way.
absl::Status AcquireTracefs(const std::string& path) {
  MountUsers& m = Mounts();
  absl::MutexLock lock(&m.mu);
  struct stat st;
  if (stat(absl::StrCat(path, "/instances").c_str(), &st) != 0) {
    if (mount("nodev", path.c_str(), "tracefs", 0, nullptr) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("block trace: cannot mount tracefs at ", path, ": ", strerror(errno)));
    }
    m.mounted_by_us = true;
  }
  ++m.users;
  return absl::OkStatus();
}

// The last user of a tracefs this process mounted unmounts it: the host is left as found.
absl::Status ReleaseTracefs(const std::string& path) {
  MountUsers& m = Mounts();
  absl::MutexLock lock(&m.mu);
  if (--m.users > 0 || !m.mounted_by_us) return absl::OkStatus();
  m.mounted_by_us = false;
  if (umount(path.c_str()) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("block trace: umount ", path));
  }
  return absl::OkStatus();
}

}  // namespace

std::string BlockTraceJournalEntry(const std::string& instance) {
  return absl::StrCat("trace-", instance);
}

bool ParseBlockEvent(absl::string_view line, BlockEvent* out) {
  const size_t at = line.find(": block_");
  if (at == absl::string_view::npos) return false;
  // The timestamp is the token just before ": block_" ("31509.948078").
  const size_t ts_start = line.rfind(' ', at);
  if (ts_start == absl::string_view::npos) return false;
  absl::string_view ts = line.substr(ts_start + 1, at - ts_start - 1);
  const size_t dot = ts.find('.');
  uint64_t sec = 0, frac = 0;
  if (dot == absl::string_view::npos || !absl::SimpleAtoi(ts.substr(0, dot), &sec) ||
      !absl::SimpleAtoi(ts.substr(dot + 1), &frac)) {
    return false;
  }
  uint64_t scale = 1'000'000'000;
  for (size_t i = 0; i < ts.size() - dot - 1; ++i) scale /= 10;
  const size_t name_end = line.find(':', at + 2);
  if (name_end == absl::string_view::npos) return false;
  BlockEvent e;
  e.ts_ns = sec * 1'000'000'000 + frac * scale;
  // "<comm>-<pid> [<cpu>] <flags> <ts>": the flags hold no '[', the comm may hold '-'.
  if (const size_t open = line.rfind('[', ts_start); open != absl::string_view::npos) {
    const size_t close = line.find(']', open);
    if (close != absl::string_view::npos && close < ts_start) {
      if (!absl::SimpleAtoi(line.substr(open + 1, close - open - 1), &e.cpu)) e.cpu = 0;
    }
    absl::string_view task = absl::StripTrailingAsciiWhitespace(line.substr(0, open));
    if (const size_t dash = task.rfind('-'); dash != absl::string_view::npos) {
      if (!absl::SimpleAtoi(task.substr(dash + 1), &e.pid)) e.pid = 0;
    }
  }
  if (const size_t open = line.rfind('['), close = line.rfind(']');
      open != absl::string_view::npos && close != absl::string_view::npos && open > name_end &&
      close > open) {
    e.tail = std::string(line.substr(open + 1, close - open - 1));
  }
  e.event = std::string(line.substr(at + 2, name_end - at - 2));
  std::vector<absl::string_view> t =
      absl::StrSplit(line.substr(name_end + 1), ' ', absl::SkipEmpty());
  if (t.size() < 5) return false;
  std::vector<absl::string_view> dev = absl::StrSplit(t[0], ',');
  if (dev.size() != 2 || !absl::SimpleAtoi(dev[0], &e.major) ||
      !absl::SimpleAtoi(dev[1], &e.minor)) {
    return false;
  }
  e.rwbs = std::string(t[1]);
  // block_split: "8,0 R 2048 / 2304 [fio]" (the bio's sector, then where the cut is).
  if (t[3] == "/") {
    if (!absl::SimpleAtoi(t[2], &e.sector) || !absl::SimpleAtoi(t[4], &e.split_at)) return false;
    *out = std::move(e);
    return true;
  }
  for (size_t k = 3; k + 1 < t.size(); ++k) {
    if (t[k] == "+") {
      if (!absl::SimpleAtoi(t[k - 1], &e.sector) || !absl::SimpleAtoi(t[k + 1], &e.nr_sectors)) {
        return false;
      }
      *out = std::move(e);
      return true;
    }
  }
  return false;
}

std::map<std::string, double> BlockTraceSummary::Internals() const {
  auto d = [](uint64_t v) { return static_cast<double>(v); };
  return {{"seq_ratio", seq_ratio()},
          {"device.inflight_mean", inflight_mean()},
          {"dispatch.requests", d(issued)},
          {"dispatch.requeues", d(requeues)},
          {"trace_issued", d(issued)},
          {"trace_completed", d(completed)},
          {"trace_merged", d(merged)},
          {"trace_lost_events", d(lost_events)},
          {"trace_q2d_p50_ns", d(insert_to_issue.Percentile(50))},
          {"trace_d2c_p50_ns", d(issue_to_complete.Percentile(50))},
          {"trace_d2c_p99_ns", d(issue_to_complete.Percentile(99))},
          {"trace.inflight_max", d(inflight_max)},
          {"trace.inversions", d(inversions)},
          {"trace.inversion_ratio", issued == 0 ? 0.0 : d(inversions) / d(issued)},
          {"trace.merges.rq", d(rq_merges)},
          {"trace.merges.back", d(back_merges)},
          {"trace.merges.front", d(front_merges)},
          {"trace.splits", d(splits)}};
}

void BlockTraceAccumulator::Advance(uint64_t ts_ns) {
  if (!any_issue_ || ts_ns <= last_change_ns_) return;
  summary_.inflight_area +=
      static_cast<double>(inflight_) * static_cast<double>(ts_ns - last_change_ns_);
  last_change_ns_ = ts_ns;
  summary_.inflight_span_ns = ts_ns - first_issue_ns_;
}

void BlockTraceAccumulator::Add(const BlockEvent& e) {
  const bool write = IsWrite(e.rwbs);
  const std::pair<uint64_t, bool> key{e.sector, write};
  if (e.event == "block_rq_insert") {
    ++summary_.inserted;
    inserted_at_[key] = e.ts_ns;
  } else if (e.event == "block_rq_issue") {
    // A data-less flush has no sector range of its own: not a dispatch of data.
    if (e.nr_sectors == 0) return;
    ++summary_.issued;
    if (e.sector == last_issue_end_) ++summary_.sequential_issues;
    last_issue_end_ = e.sector + e.nr_sectors;
    uint64_t& last_start = last_issue_start_[write ? 1 : 0];
    if (last_start != UINT64_MAX && e.sector < last_start) ++summary_.inversions;
    last_start = e.sector;
    if (auto it = inserted_at_.find(key); it != inserted_at_.end()) {
      if (e.ts_ns >= it->second) summary_.insert_to_issue.Add(e.ts_ns - it->second);
      inserted_at_.erase(it);
    }
    if (!any_issue_) {
      any_issue_ = true;
      first_issue_ns_ = last_change_ns_ = e.ts_ns;
    }
    Advance(e.ts_ns);
    // A request issued again (after a requeue whose event was lost) is counted once.
    if (issued_at_.emplace(key, e.ts_ns).second) {
      summary_.inflight_max = std::max(summary_.inflight_max, ++inflight_);
    } else {
      issued_at_[key] = e.ts_ns;
    }
  } else if (e.event == "block_rq_complete" || e.event == "block_rq_requeue") {
    if (e.nr_sectors == 0) return;
    const bool requeue = e.event == "block_rq_requeue";
    ++(requeue ? summary_.requeues : summary_.completed);
    // Only requests seen issued leave the in-flight count: one issued before the trace
    // started is not in it.
    if (auto it = issued_at_.find(key); it != issued_at_.end()) {
      Advance(e.ts_ns);
      --inflight_;
      if (!requeue && e.ts_ns >= it->second) {
        summary_.issue_to_complete.Add(e.ts_ns - it->second);
      }
      issued_at_.erase(it);
    }
  } else if (e.event == "block_rq_merge") {
    ++summary_.rq_merges;
    ++summary_.merged;
  } else if (e.event == "block_bio_backmerge") {
    ++summary_.back_merges;
    ++summary_.merged;
  } else if (e.event == "block_bio_frontmerge") {
    ++summary_.front_merges;
    ++summary_.merged;
  } else if (e.event == "block_split") {
    ++summary_.splits;
  }
}

void BlockTraceText::Add(const BlockEvent& e) {
  const char action = BlktraceAction(e.event);
  if (action == 0) return;
  if (written_ == max_events_) {
    ++dropped_;
    return;
  }
  ++written_;
  BlktraceEvent b;
  b.major = static_cast<int>(e.major);
  b.minor = static_cast<int>(e.minor);
  b.cpu = e.cpu;
  b.seq = ++seq_[e.cpu];
  b.time_ns = e.ts_ns > start_ns_ ? e.ts_ns - start_ns_ : 0;
  b.pid = e.pid;
  b.action = action;
  b.rwbs = e.rwbs;
  b.sector = e.sector;
  b.sectors = e.nr_sectors;
  b.split_at = e.split_at;
  b.tail = e.tail;
  out_ << BlktraceLine(b) << '\n';
}

void BlockTraceText::AddLost(uint64_t n) { out_ << "# lost " << n << " events\n"; }

BlockTrace::BlockTrace(BlockTraceOptions options, SettingsJournal& journal, std::string dir)
    : options_(std::move(options)), journal_(journal), dir_(std::move(dir)) {}

absl::StatusOr<std::unique_ptr<BlockTrace>> BlockTrace::Start(const BlockTraceOptions& options,
                                                              SettingsJournal& journal) {
  const std::string instances = absl::StrCat(options.tracefs, "/instances");
  if (absl::Status s = AcquireTracefs(options.tracefs); !s.ok()) return s;
  auto unmount = [&] { ReleaseTracefs(options.tracefs).IgnoreError(); };
  struct stat st;
  if (stat(absl::StrCat(options.tracefs, "/events/block/block_rq_issue").c_str(), &st) != 0) {
    unmount();
    return absl::FailedPreconditionError(
        absl::StrCat("block trace: ", options.tracefs, " has no block:block_rq_issue event"));
  }
  const std::string dir = absl::StrCat(instances, "/", options.instance);
  JournalEntry entry;
  entry.name = BlockTraceJournalEntry(options.instance);
  entry.configfs_items.push_back({dir, ""});  // rmdir removes an instance whole
  if (absl::Status s = journal.Record(std::move(entry)); !s.ok()) {
    unmount();
    return s;
  }
  std::unique_ptr<BlockTrace> t(new BlockTrace(options, journal, dir));
  auto fail = [&](absl::Status why) -> absl::Status {
    if (t->pipe_fd_ >= 0) close(t->pipe_fd_);
    t->pipe_fd_ = -1;
    t->stopped_ = true;
    absl::Status undo = journal.Restore(BlockTraceJournalEntry(options.instance));
    unmount();
    if (!undo.ok()) {
      return absl::Status(why.code(),
                          absl::StrCat(why.message(), "; and undoing: ", undo.message()));
    }
    return why;
  };
  if (mkdir(dir.c_str(), 0755) != 0) {
    return fail(absl::ErrnoToStatus(errno, absl::StrCat("block trace: mkdir ", dir)));
  }
  const std::string filter =
      absl::StrCat("dev == ", (static_cast<uint64_t>(options.major) << 20) | options.minor);
  for (const auto& [file, value] : std::vector<std::pair<std::string, std::string>>{
           {"tracing_on", "0"},
           {"trace_clock", "mono"},
           {"buffer_size_kb",
            absl::StrCat(options.text != nullptr ? std::max(options.buffer_kb, kTextBufferKb)
                                                 : options.buffer_kb)}}) {
    if (absl::Status s = Write(absl::StrCat(dir, "/", file), value); !s.ok()) return fail(s);
  }
  std::vector<const char*> events(std::begin(kEvents), std::end(kEvents));
  if (options.text != nullptr)
    events.insert(events.end(), std::begin(kTextEvents), std::end(kTextEvents));
  for (const char* event : events) {
    const std::string base = absl::StrCat(dir, "/events/block/", event);
    if (stat(base.c_str(), &st) != 0) continue;  // an older kernel without this event
    if (absl::Status s = Write(base + "/filter", filter); !s.ok()) return fail(s);
    if (absl::Status s = Write(base + "/enable", "1"); !s.ok()) return fail(s);
  }
  t->pipe_fd_ = open(absl::StrCat(dir, "/trace_pipe").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (t->pipe_fd_ < 0) {
    return fail(absl::ErrnoToStatus(errno, absl::StrCat("block trace: open ", dir, "/trace_pipe")));
  }
  if (options.text != nullptr) {
    t->text_ =
        std::make_unique<BlockTraceText>(*options.text, MonotonicNs(), options.text_max_events);
  }
  if (absl::Status s = Write(dir + "/tracing_on", "1"); !s.ok()) return fail(s);
  t->reader_ = std::thread([p = t.get()] { p->ReadLoop(); });
  return t;
}

void BlockTrace::ReadLoop() {
  std::string pending;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(pipe_fd_, buf, sizeof buf);
    if (n > 0) {
      pending.append(buf, static_cast<size_t>(n));
      size_t start = 0;
      // One lock per read, not per line: at ~100k IOPS the reader must keep up with the ring.
      absl::MutexLock lock(&mu_);
      for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        absl::string_view line(pending.data() + start, nl - start);
        BlockEvent e;
        if (ParseBlockEvent(line, &e)) {
          acc_.Add(e);
          if (text_ != nullptr) text_->Add(e);
        } else if (size_t lost = line.find("[LOST "); lost != absl::string_view::npos) {
          uint64_t count = 0;
          absl::string_view rest = line.substr(lost + 6);
          if (absl::SimpleAtoi(rest.substr(0, rest.find(' ')), &count)) {
            acc_.AddLost(count);
            if (text_ != nullptr) text_->AddLost(count);
          }
        }
      }
      pending.erase(0, start);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return;
    // Empty: done once Stop has turned tracing off (nothing more can arrive).
    if (stop_.load()) return;
    pollfd p{pipe_fd_, POLLIN, 0};
    poll(&p, 1, 50);  // wakes on data; the timeout only re-checks stop_
  }
}

absl::StatusOr<BlockTraceSummary> BlockTrace::Stop() {
  if (stopped_) return absl::FailedPreconditionError("block trace: stopped already");
  stopped_ = true;
  std::vector<std::string> errors;
  if (absl::Status s = Write(dir_ + "/tracing_on", "0"); !s.ok()) {
    errors.emplace_back(s.message());
  }
  stop_.store(true);
  if (reader_.joinable()) reader_.join();
  if (pipe_fd_ >= 0) close(pipe_fd_);
  pipe_fd_ = -1;
  if (text_ != nullptr && text_->dropped() > 0) {
    *options_.text << "# " << text_->dropped() << " more events not written (the first "
                   << options_.text_max_events << " are)\n";
  }
  if (absl::Status s = journal_.Restore(BlockTraceJournalEntry(options_.instance)); !s.ok()) {
    errors.emplace_back(s.message());
  }
  if (absl::Status s = ReleaseTracefs(options_.tracefs); !s.ok()) errors.emplace_back(s.message());
  if (!errors.empty()) {
    return absl::InternalError(absl::StrCat("block trace: ", absl::StrJoin(errors, "; ")));
  }
  absl::MutexLock lock(&mu_);
  return acc_.summary();
}

// Not stopped by its owner (an early return): stop anyway, so the instance goes now and not
// only at the next RecoverAll; there is no caller left to hear of an error.
BlockTrace::~BlockTrace() {
  if (!stopped_) Stop().IgnoreError();
}

}  // namespace blkbench
