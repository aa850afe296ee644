// SqlStore::CommitReports, the group commit of agents' samples and results (a batch from
// every agent in one transaction, so one fsync / WAL flush covers them all), and progress
// counts.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/states.h"
#include "controller/store/sql_rows.h"
#include "controller/store/sql_store.h"

namespace blkbench {

using sql::Result;

namespace {

// Refusals of one report for its content: rolled back to its savepoint, the batch goes
// on. Anything else (I/O, a full disk, a busy database, a lost connection) fails the
// whole batch.
bool IsReportRefusal(const absl::Status& s) {
  return absl::IsNotFound(s) || absl::IsFailedPrecondition(s) || absl::IsInvalidArgument(s);
}

// Run ids are read this many at a time: one statement text (prepared once) for any batch.
constexpr size_t kRunsPerRead = 32;

}  // namespace

absl::StatusOr<std::unordered_map<uint64_t, v1::Run>> SqlStore::ReadRuns(
    const std::vector<AgentReport>& reports) {
  std::string placeholders = "?";
  for (size_t i = 1; i < kRunsPerRead; ++i) absl::StrAppend(&placeholders, ", ?");
  const std::string select =
      absl::StrCat("SELECT ", sql::kRunColumns, " FROM runs r WHERE r.id IN (", placeholders, ")");
  std::unordered_map<uint64_t, v1::Run> runs;
  for (size_t first = 0; first < reports.size(); first += kRunsPerRead) {
    sql::Params ids;
    for (size_t i = first; i < first + kRunsPerRead; ++i) {
      // The last chunk repeats its last id: IN ignores duplicates.
      ids.Add(reports[std::min(i, reports.size() - 1)].run_id);
    }
    absl::StatusOr<Result> rows = conn_->Query("read the batch's runs", select, ids);
    if (!rows.ok()) return rows.status();
    for (int i = 0; i < rows->rows(); ++i) {
      absl::StatusOr<v1::Run> run = sql::RunFromRow(*rows, i);
      if (!run.ok()) return run.status();
      const uint64_t id = run->id();
      runs[id] = *std::move(run);
    }
  }
  return runs;
}

absl::Status SqlStore::WriteReport(const AgentReport& r, v1::Run* run) {
  if (r.kind == AgentReport::Kind::kFinish && !IsFinalRunState(r.state)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "run ", r.run_id, ": report of a final outcome with a state that is not final"));
  }
  if (run == nullptr) return absl::NotFoundError(absl::StrCat("run ", r.run_id, " not found"));
  if (absl::Status s = CheckReportLease(r, *run); !s.ok()) return s;
  if (r.kind == AgentReport::Kind::kSample) {
    // Start the run only on its first sample; a running run's sample is one INSERT.
    if (run->state() != v1::RUN_ASSIGNED) return InsertSample(r.run_id, r.attempt, r.sample);
    if (absl::Status s = WriteSample(r.run_id, r.attempt, r.sample); !s.ok()) return s;
    run->set_state(v1::RUN_RUNNING);  // as WriteSample's UPDATE (the lease check fixed the attempt)
    return absl::OkStatus();
  }
  if (IsFinalRunState(run->state())) return absl::OkStatus();  // WriteFinish's idempotence
  if (r.samples_through > 0) {
    // Samples 1..samples_through are distinct seqs: all there iff that many are stored.
    const auto id = static_cast<int64_t>(r.run_id);
    absl::StatusOr<Result> count = conn_->Run(
        "count samples",
        "SELECT COUNT(*) FROM samples WHERE run_id = ? AND attempt = ? AND seq BETWEEN 1 AND ?", id,
        r.attempt, r.samples_through);
    if (!count.ok()) return count.status();
    if (count->U64(0, 0) < r.samples_through) {
      // Which one is missing, for the log: the first gap.
      absl::StatusOr<Result> gap = conn_->Run(
          "find missing sample",
          "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM samples WHERE run_id = ?1 AND"
          " attempt = ?2 AND seq = 1) THEN 1 ELSE (SELECT MIN(s.seq + 1) FROM samples s"
          " WHERE s.run_id = ?1 AND s.attempt = ?2 AND s.seq < ?3 AND NOT EXISTS (SELECT 1"
          " FROM samples t WHERE t.run_id = ?1 AND t.attempt = ?2 AND t.seq = s.seq + 1))"
          " END",
          id, r.attempt, r.samples_through);
      if (!gap.ok()) return gap.status();
      return MissingSamples(r, gap->rows() > 0 ? gap->U64(0, 0) : 1);
    }
  }
  if (absl::Status s = WriteFinish(*run, r.attempt, r.state, r.error, r.finished_unix_ms,
                                   r.has_result ? &r.result : nullptr);
      !s.ok()) {
    return s;
  }
  run->set_state(r.state);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<absl::Status>> SqlStore::CommitReports(
    const std::vector<AgentReport>& reports) {
  absl::MutexLock lock(&mu_);
  std::vector<absl::Status> out;
  out.reserve(reports.size());
  absl::Status status = InWriteTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    // Every run of the batch read up front. The copies follow what this batch writes (a
    // report's changes only once it is stored), and nothing else writes meanwhile: the
    // store's one connection is ours, and the database's write lock, until the commit.
    absl::StatusOr<std::unordered_map<uint64_t, v1::Run>> runs = ReadRuns(reports);
    if (!runs.ok()) return runs.status();
    for (const AgentReport& r : reports) {
      if (absl::Status s = conn_->Savepoint(/*release_previous=*/!out.empty()); !s.ok()) {
        return s;
      }
      auto it = runs->find(r.run_id);
      v1::Run copy;  // the report's changes reach `runs` only if it is stored
      if (it != runs->end()) copy = it->second;
      absl::Status s = WriteReport(r, it != runs->end() ? &copy : nullptr);
      if (!s.ok() && !IsReportRefusal(s)) return s;  // the transaction rolls everything back
      if (!s.ok()) {
        if (absl::Status u = conn_->RollbackToSavepoint(); !u.ok()) return u;
      } else if (it != runs->end()) {
        it->second = std::move(copy);
      }
      out.push_back(std::move(s));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<ExperimentProgress> SqlStore::GetExperimentProgress(uint64_t id) {
  absl::MutexLock lock(&mu_);
  // One statement (one snapshot): the experiment's state, then one row per run state
  // (counted on the (experiment_id, cell_index, repeat) index).
  absl::StatusOr<Result> r =
      conn_->Run("count runs by state",
                 "SELECT e.state, r.state, COUNT(r.id) FROM experiments e LEFT JOIN runs r ON"
                 " r.experiment_id = e.id WHERE e.id = ? GROUP BY e.state, r.state",
                 static_cast<int64_t>(id));
  if (!r.ok()) return r.status();
  if (r->rows() == 0) return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  ExperimentProgress p;
  absl::StatusOr<v1::ExperimentState> state = sql::ParseExperimentState(r->Text(0, 0));
  if (!state.ok()) return state.status();
  p.state = *state;
  for (int i = 0; i < r->rows(); ++i) {
    if (r->IsNull(i, 1)) continue;  // an experiment without runs
    absl::StatusOr<v1::RunState> run_state = sql::ParseRunState(r->Text(i, 1));
    if (!run_state.ok()) return run_state.status();
    const uint64_t n = r->U64(i, 2);
    p.runs += n;
    if (*run_state == v1::RUN_QUEUED) p.queued += n;
    if (IsFinalRunState(*run_state)) p.final_runs += n;
    if (*run_state == v1::RUN_FAILED) p.failed += n;
  }
  return p;
}

}  // namespace blkbench
