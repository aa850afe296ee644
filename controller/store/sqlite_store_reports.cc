// SqliteStore::CommitReports: the group commit of agents' samples and results — a batch
// of reports from every agent in one durable transaction, so one fsync covers them all.
#include <string>

#include "absl/strings/str_cat.h"
#include "common/states.h"
#include "controller/store/sqlite_rows.h"
#include "controller/store/sqlite_store.h"

namespace blkbench {

using sqlite::Statement;
using sqlite::Transaction;

namespace {

// Refusals of one report for its content: rolled back to its savepoint, the batch goes
// on. Anything else (I/O, a full disk, a busy database) fails the whole batch.
bool IsReportRefusal(const absl::Status& s) {
  return absl::IsNotFound(s) || absl::IsFailedPrecondition(s) || absl::IsInvalidArgument(s);
}

}  // namespace

absl::Status SqliteStore::WriteReport(const AgentReport& r) {
  if (r.kind == AgentReport::Kind::kFinish && !IsFinalRunState(r.state)) {
    return absl::InvalidArgumentError(absl::StrCat("run ", r.run_id,
                                                   ": report of a final "
                                                   "outcome with a state that is not final"));
  }
  absl::StatusOr<v1::Run> run = ReadRun(r.run_id);
  if (!run.ok()) return run.status();
  if (absl::Status s = CheckReportLease(r, *run); !s.ok()) return s;
  if (r.kind == AgentReport::Kind::kSample) return WriteSample(r.run_id, r.attempt, r.sample);
  if (r.samples_through > 0 && !IsFinalRunState(run->state())) {
    // Samples 1..samples_through are distinct seqs: all there iff that many are stored.
    absl::StatusOr<Statement> count = db_->Prepare(
        "count samples",
        "SELECT COUNT(*) FROM samples WHERE run_id = ? AND attempt = ? AND seq BETWEEN 1 AND ?");
    if (!count.ok()) return count.status();
    absl::StatusOr<bool> row =
        count->BindAll(static_cast<int64_t>(r.run_id), r.attempt, r.samples_through).Step();
    if (!row.ok()) return row.status();
    if (count->U64(0) < r.samples_through) {
      // Which one is missing, for the log: the first gap.
      absl::StatusOr<Statement> gap = db_->Prepare(
          "find missing sample",
          "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM samples WHERE run_id = ?1 AND"
          " attempt = ?2 AND seq = 1) THEN 1 ELSE (SELECT MIN(s.seq + 1) FROM samples s"
          " WHERE s.run_id = ?1 AND s.attempt = ?2 AND s.seq < ?3 AND NOT EXISTS (SELECT 1"
          " FROM samples t WHERE t.run_id = ?1 AND t.attempt = ?2 AND t.seq = s.seq + 1))"
          " END");
      uint64_t first = 1;
      if (gap.ok()) {
        absl::StatusOr<bool> g =
            gap->BindAll(static_cast<int64_t>(r.run_id), r.attempt, r.samples_through).Step();
        if (g.ok() && *g) first = gap->U64(0);
      }
      return MissingSamples(r, first);
    }
  }
  return WriteFinish(*run, r.attempt, r.state, r.error, r.finished_unix_ms,
                     r.has_result ? &r.result : nullptr);
}

absl::StatusOr<std::vector<absl::Status>> SqliteStore::CommitReports(
    const std::vector<AgentReport>& reports) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  std::vector<absl::Status> out;
  out.reserve(reports.size());
  for (const AgentReport& r : reports) {
    if (absl::Status s = db_->Execute("savepoint", "SAVEPOINT report"); !s.ok()) return s;
    absl::Status s = WriteReport(r);
    if (!s.ok() && !IsReportRefusal(s)) return s;  // the guard rolls everything back
    if (!s.ok()) {
      if (absl::Status u = db_->Execute("rollback report", "ROLLBACK TO report"); !u.ok()) return u;
    }
    if (absl::Status u = db_->Execute("release report", "RELEASE report"); !u.ok()) return u;
    out.push_back(std::move(s));
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  return out;
}

absl::StatusOr<ExperimentProgress> SqliteStore::GetExperimentProgress(uint64_t id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<Statement> exp =
      db_->Prepare("get experiment state", "SELECT state FROM experiments WHERE id = ?");
  if (!exp.ok()) return exp.status();
  absl::StatusOr<bool> row = exp->BindAll(static_cast<int64_t>(id)).Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  ExperimentProgress p;
  absl::StatusOr<v1::ExperimentState> state = sqlite::ParseExperimentState(exp->Text(0));
  if (!state.ok()) return state.status();
  p.state = *state;
  // (experiment_id, cell_index, repeat) is UNIQUE: an index this count uses.
  absl::StatusOr<Statement> counts =
      db_->Prepare("count runs by state",
                   "SELECT state, COUNT(*) FROM runs WHERE experiment_id = ? GROUP BY state");
  if (!counts.ok()) return counts.status();
  counts->BindAll(static_cast<int64_t>(id));
  absl::Status s = counts->ForEachRow([&](Statement& r) -> absl::Status {
    absl::StatusOr<v1::RunState> run_state = sqlite::ParseRunState(r.Text(0));
    if (!run_state.ok()) return run_state.status();
    const uint64_t n = r.U64(1);
    p.runs += n;
    if (*run_state == v1::RUN_QUEUED) p.queued += n;
    if (IsFinalRunState(*run_state)) p.final_runs += n;
    if (*run_state == v1::RUN_FAILED) p.failed += n;
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return p;
}

}  // namespace blkbench
