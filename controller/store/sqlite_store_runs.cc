// SqliteStore: runs, samples and results — the paths that acknowledge agents' data, so
// each write is one durable transaction and duplicates collapse on (run, attempt, seq).
#include <string>

#include "absl/strings/str_cat.h"
#include "common/states.h"
#include "controller/store/sqlite_rows.h"
#include "controller/store/sqlite_store.h"

namespace blkbench {

using sqlite::BlobArg;
using sqlite::Statement;
using sqlite::Transaction;

absl::StatusOr<v1::Run> SqliteStore::ReadRun(uint64_t run_id) {
  absl::StatusOr<Statement> select = db_->Prepare(
      "get run", absl::StrCat("SELECT ", sqlite::kRunColumns, " FROM runs r WHERE r.id = ?"));
  if (!select.ok()) return select.status();
  absl::StatusOr<bool> row = select->BindAll(static_cast<int64_t>(run_id)).Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  return sqlite::RunFromRow(*select);
}

absl::Status SqliteStore::FillRunDetails(const std::unordered_map<uint64_t, v1::Run*>& runs,
                                         absl::string_view where, int64_t key, bool with_results) {
  {
    // Per run of the current attempt: the number of samples and the last one.
    absl::StatusOr<Statement> select = db_->Prepare(
        "get sample counts and last samples",
        absl::StrCat("SELECT agg.run_id, agg.n, ", sqlite::kSampleColumns,
                     " FROM (SELECT s.run_id AS run_id, COUNT(*) AS n, MAX(s.seq) AS last_seq"
                     " FROM runs r JOIN samples s ON s.run_id = r.id AND s.attempt = r.attempt"
                     " WHERE ",
                     where,
                     " GROUP BY s.run_id) agg"
                     " JOIN runs r ON r.id = agg.run_id"
                     " JOIN samples s ON s.run_id = r.id AND s.attempt = r.attempt"
                     " AND s.seq = agg.last_seq",
                     sqlite::kSampleHistogramJoin));
    if (!select.ok()) return select.status();
    select->BindAll(key);
    while (true) {
      absl::StatusOr<bool> row = select->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      auto it = runs.find(select->U64(0));
      if (it == runs.end()) continue;
      it->second->set_samples(select->U64(1));
      absl::StatusOr<v1::Sample> sample = sqlite::SampleFromRow(*select, 2);
      if (!sample.ok()) return sample.status();
      *it->second->mutable_last_sample() = *std::move(sample);
    }
  }
  if (!with_results) return absl::OkStatus();

  // A result counts only for the attempt it was recorded for; one row per histogram.
  absl::StatusOr<Statement> select = db_->Prepare(
      "get results",
      absl::StrCat("SELECT r.id, res.result, h.name, h.histogram FROM runs r"
                   " JOIN results res ON res.run_id = r.id AND res.attempt = r.attempt"
                   " LEFT JOIN histograms h ON h.owner_kind = 'result' AND h.owner_id = r.id"
                   " WHERE ",
                   where));
  if (!select.ok()) return select.status();
  select->BindAll(key);
  while (true) {
    absl::StatusOr<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    auto it = runs.find(select->U64(0));
    if (it == runs.end()) continue;
    v1::Run& run = *it->second;
    const std::string what = absl::StrCat("result of run ", run.id());
    if (!run.has_result()) {
      if (absl::Status s = sqlite::ParseBlob(select->Blob(1), what, *run.mutable_result());
          !s.ok()) {
        return s;
      }
    }
    if (select->IsNull(2)) continue;
    const std::string name = select->Text(2);
    v1::Histogram* histogram = name == "lat"         ? run.mutable_result()->mutable_lat()
                               : name == "read_lat"  ? run.mutable_result()->mutable_read_lat()
                               : name == "write_lat" ? run.mutable_result()->mutable_write_lat()
                                                     : nullptr;
    if (histogram == nullptr) continue;  // a histogram a newer schema added; not ours
    if (absl::Status s =
            sqlite::ParseBlob(select->Blob(3), absl::StrCat(what, " ", name), *histogram);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Run> SqliteStore::GetRun(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<v1::Run> run = ReadRun(run_id);
  if (!run.ok()) return run.status();
  if (absl::Status s = FillRunDetails({{run->id(), &*run}}, "r.id = ?1",
                                      static_cast<int64_t>(run_id), /*with_results=*/true);
      !s.ok()) {
    return s;
  }
  return run;
}

absl::StatusOr<std::vector<v1::Run>> SqliteStore::ListRunsInStates(
    const std::vector<v1::RunState>& states) {
  if (states.empty()) return std::vector<v1::Run>{};
  // One placeholder per state; the states themselves are bound, never spliced in.
  std::string placeholders;
  for (size_t i = 0; i < states.size(); ++i) absl::StrAppend(&placeholders, i ? ", ?" : "?");

  absl::MutexLock lock(&mu_);
  absl::StatusOr<Statement> select =
      db_->Prepare("list runs in states",
                   absl::StrCat("SELECT ", sqlite::kRunColumns, " FROM runs r WHERE r.state IN (",
                                placeholders, ") ORDER BY r.id"));
  if (!select.ok()) return select.status();
  for (v1::RunState state : states) select->BindText(sqlite::RunStateName(state));
  return select->Collect<v1::Run>(sqlite::RunFromRow);
}

absl::Status SqliteStore::UpdateRun(const v1::Run& run) {
  if (!v1::RunState_IsValid(run.state())) {
    return absl::InvalidArgumentError(absl::StrCat("UpdateRun: bad state ", run.state()));
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  if (absl::Status s = WriteRun(run); !s.ok()) return s;
  return txn->Commit();
}

RunsWritten SqliteStore::UpdateRuns(const std::vector<v1::Run>& runs) {
  for (const v1::Run& run : runs) {
    if (!v1::RunState_IsValid(run.state())) {
      return {0, absl::InvalidArgumentError(absl::StrCat("UpdateRuns: bad state ", run.state()))};
    }
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kWrite);
  if (!txn.ok()) return {0, txn.status()};
  for (const v1::Run& run : runs) {
    if (absl::Status s = WriteRun(run); !s.ok()) return {0, s};
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return {0, s};
  return {runs.size(), absl::OkStatus()};
}

absl::Status SqliteStore::WriteRun(const v1::Run& run) {
  const auto id = static_cast<int64_t>(run.id());
  if (absl::Status s = db_->Execute(
          "update run",
          "UPDATE runs SET state = ?, attempt = ?, agent_id = ?, device_path = ?, lease_id = ?,"
          " started_unix_ms = ?, finished_unix_ms = ?, error = ? WHERE id = ?",
          sqlite::RunStateName(run.state()), run.attempt(), run.agent_id(), run.device_path(),
          run.lease_id(), run.started_unix_ms(), run.finished_unix_ms(), run.error(), id);
      !s.ok()) {
    return s;
  }
  if (db_->Changes() == 0) return absl::NotFoundError(absl::StrCat("run ", run.id(), " not found"));
  if (run.state() == v1::RUN_QUEUED) {
    // Re-queued: the samples of every attempt so far are superseded.
    if (absl::Status s =
            db_->Execute("delete superseded sample histograms",
                         "DELETE FROM histograms WHERE owner_kind = 'sample' AND owner_id IN"
                         " (SELECT id FROM samples WHERE run_id = ?)",
                         id);
        !s.ok()) {
      return s;
    }
    if (absl::Status s =
            db_->Execute("delete superseded samples", "DELETE FROM samples WHERE run_id = ?", id);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::WriteHistogram(const char* owner_kind, int64_t owner_id, const char* name,
                                         const v1::Histogram& histogram) {
  absl::StatusOr<std::string> bytes = sqlite::Serialize(histogram, name);
  if (!bytes.ok()) return bytes.status();
  return db_->Execute(absl::StrCat("insert ", owner_kind, " histogram ", name),
                      "INSERT INTO histograms (owner_kind, owner_id, name, count, min_ns, max_ns,"
                      " sum_ns, histogram) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                      owner_kind, owner_id, name, histogram.count(), histogram.min_ns(),
                      histogram.max_ns(), histogram.sum_ns(), BlobArg{*bytes});
}

absl::Status SqliteStore::AppendSample(uint64_t run_id, uint32_t attempt,
                                       const v1::Sample& sample) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  if (absl::Status s = WriteSample(run_id, attempt, sample); !s.ok()) return s;
  return txn->Commit();
}

absl::Status SqliteStore::WriteSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) {
  const auto id = static_cast<int64_t>(run_id);
  // The first sample of the current attempt starts the run, in the same transaction.
  if (absl::Status s = db_->Execute("start run",
                                    "UPDATE runs SET state = ? WHERE id = ? AND attempt = ? AND"
                                    " state = ?",
                                    sqlite::RunStateName(v1::RUN_RUNNING), id, attempt,
                                    sqlite::RunStateName(v1::RUN_ASSIGNED));
      !s.ok()) {
    return s;
  }
  if (db_->Changes() == 0) {
    absl::StatusOr<Statement> exists = db_->Prepare("find run", "SELECT 1 FROM runs WHERE id = ?");
    if (!exists.ok()) return exists.status();
    absl::StatusOr<bool> row = exists->BindAll(id).Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  }
  const v1::IoCounters& io = sample.io();
  // The device's counters, NULL when the sample has none (a file, a sim: device).
  std::string device;
  if (sample.has_device()) {
    absl::StatusOr<std::string> bytes = sqlite::Serialize(sample.device(), "device counters");
    if (!bytes.ok()) return bytes.status();
    device = *std::move(bytes);
  }
  // The jobs' intervals, NULL when the sample has none (an older agent).
  absl::StatusOr<std::string> jobs = sqlite::SerializeSampleJobs(sample);
  if (!jobs.ok()) return jobs.status();
  const bool has_jobs = sample.jobs_size() > 0;
  if (absl::Status s = db_->Execute(
          "insert sample",
          "INSERT INTO samples (run_id, attempt, seq, offset_ns, interval_ns, read_ios,"
          " write_ios, read_bytes, write_bytes, device, jobs)"
          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, CASE WHEN ? THEN ? END, CASE WHEN ? THEN ? END)"
          " ON CONFLICT (run_id, attempt, seq) DO NOTHING",
          id, attempt, sample.seq(), sample.offset_ns(), sample.interval_ns(), io.read_ios(),
          io.write_ios(), io.read_bytes(), io.write_bytes(), sample.has_device(), BlobArg{device},
          has_jobs, BlobArg{*jobs});
      !s.ok()) {
    return s;
  }
  // A duplicate (the agent resent after a lost ack): the first copy is already durable.
  if (db_->Changes() == 0) return absl::OkStatus();
  if (sample.has_lat()) {
    return WriteHistogram("sample", db_->LastInsertRowid(), "lat", sample.lat());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Sample>> SqliteStore::ListSamples(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<v1::Run> run = ReadRun(run_id);
  if (!run.ok()) return run.status();
  absl::StatusOr<Statement> select = db_->Prepare(
      "list samples", absl::StrCat("SELECT ", sqlite::kSampleColumns, " FROM samples s",
                                   sqlite::kSampleHistogramJoin,
                                   " WHERE s.run_id = ? AND s.attempt = ? ORDER BY s.seq"));
  if (!select.ok()) return select.status();
  select->BindAll(static_cast<int64_t>(run_id), run->attempt());
  return select->Collect<v1::Sample>([](Statement& row) { return sqlite::SampleFromRow(row, 0); });
}

absl::Status SqliteStore::WriteResult(uint64_t run_id, uint32_t attempt,
                                      const v1::RunResult& result) {
  const auto id = static_cast<int64_t>(run_id);
  // Histograms live in their own table; the blob keeps everything else.
  v1::RunResult rest = result;
  rest.clear_lat();
  rest.clear_read_lat();
  rest.clear_write_lat();
  absl::StatusOr<std::string> blob = sqlite::Serialize(rest, "run result");
  if (!blob.ok()) return blob.status();
  // Replaces the result of an earlier attempt, if any.
  if (absl::Status s =
          db_->Execute("delete old result", "DELETE FROM results WHERE run_id = ?", id);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          db_->Execute("delete old result histograms",
                       "DELETE FROM histograms WHERE owner_kind = 'result' AND owner_id = ?", id);
      !s.ok()) {
    return s;
  }
  const v1::LatencySummary& lat = result.lat_summary();
  if (absl::Status s = db_->Execute(
          "insert result",
          "INSERT INTO results (run_id, attempt, runner, duration_ns, iops, bw_bytes_per_sec,"
          " read_ios, write_ios, read_bytes, write_bytes, lat_min_ns, lat_mean_ns, p50_ns,"
          " p90_ns, p99_ns, p999_ns, p9999_ns, lat_max_ns, usr_cpu_ns, sys_cpu_ns, result)"
          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          id, attempt, result.runner(), result.duration_ns(), result.iops(),
          result.bw_bytes_per_sec(), result.io().read_ios(), result.io().write_ios(),
          result.io().read_bytes(), result.io().write_bytes(), lat.min_ns(), lat.mean_ns(),
          lat.p50_ns(), lat.p90_ns(), lat.p99_ns(), lat.p999_ns(), lat.p9999_ns(), lat.max_ns(),
          result.usr_cpu_ns(), result.sys_cpu_ns(), BlobArg{*blob});
      !s.ok()) {
    return s;
  }
  const std::pair<const char*, const v1::Histogram*> histograms[] = {
      {"lat", result.has_lat() ? &result.lat() : nullptr},
      {"read_lat", result.has_read_lat() ? &result.read_lat() : nullptr},
      {"write_lat", result.has_write_lat() ? &result.write_lat() : nullptr},
  };
  for (const auto& [name, histogram] : histograms) {
    if (histogram == nullptr) continue;
    if (absl::Status s = WriteHistogram("result", id, name, *histogram); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::FinishRun(uint64_t run_id, uint32_t attempt, v1::RunState state,
                                    const std::string& error, int64_t finished_unix_ms,
                                    const v1::RunResult* result) {
  if (absl::Status s = CheckFinalState(state); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<v1::Run> run = ReadRun(run_id);
  if (!run.ok()) return run.status();
  if (absl::Status s = WriteFinish(*run, attempt, state, error, finished_unix_ms, result);
      !s.ok()) {
    return s;
  }
  return txn->Commit();
}

absl::Status SqliteStore::WriteFinish(const v1::Run& run, uint32_t attempt, v1::RunState state,
                                      const std::string& error, int64_t finished_unix_ms,
                                      const v1::RunResult* result) {
  const uint64_t run_id = run.id();
  if (run.attempt() != attempt) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", run_id, ": attempt ", attempt, " is not the current attempt ", run.attempt()));
  }
  // Already final for this attempt (a resent RunFinished, or canceled meanwhile).
  if (IsFinalRunState(run.state())) return absl::OkStatus();

  const auto id = static_cast<int64_t>(run_id);
  if (absl::Status s = db_->Execute(
          "finish run", "UPDATE runs SET state = ?, error = ?, finished_unix_ms = ? WHERE id = ?",
          sqlite::RunStateName(state), error, finished_unix_ms, id);
      !s.ok()) {
    return s;
  }
  if (result != nullptr) return WriteResult(run_id, attempt, *result);
  return absl::OkStatus();
}

}  // namespace blkbench
