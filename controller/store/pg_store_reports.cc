// PgStore::CommitReports, the group commit of agents' samples and results (a batch from
// every agent in one transaction, so one WAL flush covers them all), and progress counts.
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/states.h"
#include "controller/store/pg_rows.h"
#include "controller/store/pg_store.h"
#include "controller/store/sqlite_rows.h"

namespace blkbench {

using pg::Result;
using pg::Transaction;

namespace {

// Refusals of one report for its content: rolled back to its savepoint, the batch goes
// on. Anything else (a lost connection, a full disk) fails the whole batch.
bool IsReportRefusal(const absl::Status& s) {
  return absl::IsNotFound(s) || absl::IsFailedPrecondition(s) || absl::IsInvalidArgument(s);
}

}  // namespace

absl::Status PgStore::WriteReport(const AgentReport& r, v1::Run* run) {
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
  if (r.samples_through > 0 && !IsFinalRunState(run->state())) {
    // The first seq in 1..samples_through not stored, if any (0 = all there).
    absl::StatusOr<Result> gap = conn_->Query(
        "find missing sample",
        "SELECT COALESCE(MIN(g), 0) FROM generate_series(1::bigint, $3::bigint) g WHERE NOT"
        " EXISTS (SELECT 1 FROM samples s WHERE s.run_id = $1 AND s.attempt = $2 AND s.seq = g)",
        static_cast<int64_t>(r.run_id), r.attempt, r.samples_through);
    if (!gap.ok()) return gap.status();
    if (const uint64_t first = gap->U64(0, 0); first != 0) return MissingSamples(r, first);
  }
  if (IsFinalRunState(run->state())) return absl::OkStatus();  // WriteFinish's idempotence
  if (absl::Status s = WriteFinish(*run, r.attempt, r.state, r.error, r.finished_unix_ms,
                                   r.has_result ? &r.result : nullptr);
      !s.ok()) {
    return s;
  }
  run->set_state(r.state);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<absl::Status>> PgStore::CommitReports(
    const std::vector<AgentReport>& reports) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  // Every run of the batch in one query. The copies follow what this batch writes (a
  // report's changes only once it is stored), and nothing else writes meanwhile: the
  // store's one connection is ours until the commit.
  std::unordered_map<uint64_t, v1::Run> runs;
  {
    std::vector<std::string> ids;
    for (const AgentReport& r : reports) ids.push_back(absl::StrCat(r.run_id));
    absl::StatusOr<Result> rows = conn_->Query(
        "read the batch's runs",
        absl::StrCat("SELECT ", sqlite::kRunColumns, " FROM runs r WHERE r.id = ANY($1::bigint[])"),
        absl::StrCat("{", absl::StrJoin(ids, ","), "}"));
    if (!rows.ok()) return rows.status();
    for (int i = 0; i < rows->rows(); ++i) {
      absl::StatusOr<v1::Run> run = pg::RunFromRow(*rows, i);
      if (!run.ok()) return run.status();
      runs[run->id()] = *std::move(run);
    }
  }
  std::vector<absl::Status> out;
  out.reserve(reports.size());
  for (const AgentReport& r : reports) {
    // One round trip: release the previous report's savepoint and open this one's (COMMIT
    // releases the last).
    if (absl::Status s =
            conn_->Exec("savepoint", out.empty() ? "SAVEPOINT report"
                                                 : "RELEASE SAVEPOINT report; SAVEPOINT report");
        !s.ok()) {
      return s;
    }
    auto it = runs.find(r.run_id);
    v1::Run copy;  // the report's changes reach `runs` only if it is stored
    if (it != runs.end()) copy = it->second;
    absl::Status s = WriteReport(r, it != runs.end() ? &copy : nullptr);
    if (!s.ok() && !IsReportRefusal(s)) return s;  // the guard rolls everything back
    if (!s.ok()) {
      if (absl::Status u = conn_->Exec("rollback report", "ROLLBACK TO SAVEPOINT report");
          !u.ok()) {
        return u;
      }
    } else if (it != runs.end()) {
      it->second = std::move(copy);
    }
    out.push_back(std::move(s));
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  return out;
}

absl::StatusOr<ExperimentProgress> PgStore::GetExperimentProgress(uint64_t id) {
  absl::MutexLock lock(&mu_);
  const char* op = "count runs by state";
  if (absl::Status s = conn_->EnsureConnected(op); !s.ok()) return s;
  // One statement (one snapshot): the experiment's state, then one row per run state
  // (counted on the (experiment_id, cell_index, repeat) index).
  absl::StatusOr<Result> r =
      conn_->Query(op,
                   "SELECT e.state, r.state, COUNT(r.id) FROM experiments e LEFT JOIN runs r ON"
                   " r.experiment_id = e.id WHERE e.id = $1 GROUP BY e.state, r.state",
                   static_cast<int64_t>(id));
  if (!r.ok()) return r.status();
  if (r->rows() == 0) return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  ExperimentProgress p;
  absl::StatusOr<v1::ExperimentState> state = sqlite::ParseExperimentState(r->Text(0, 0));
  if (!state.ok()) return state.status();
  p.state = *state;
  for (int i = 0; i < r->rows(); ++i) {
    if (r->IsNull(i, 1)) continue;  // an experiment without runs
    absl::StatusOr<v1::RunState> run_state = sqlite::ParseRunState(r->Text(i, 1));
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
