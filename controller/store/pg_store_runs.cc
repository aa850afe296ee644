// PgStore: runs, samples and results — the paths that acknowledge agents' data, so each
// write is one durable transaction and duplicates collapse on (run, attempt, seq).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/states.h"
#include "controller/store/pg_rows.h"
#include "controller/store/pg_store.h"
#include "controller/store/sqlite_rows.h"

namespace blkbench {

using pg::Bytea;
using pg::Result;
using pg::Transaction;

absl::StatusOr<v1::Run> PgStore::ReadRun(uint64_t run_id) {
  absl::StatusOr<Result> r = conn_->Query(
      "get run", absl::StrCat("SELECT ", sqlite::kRunColumns, " FROM runs r WHERE r.id = $1"),
      static_cast<int64_t>(run_id));
  if (!r.ok()) return r.status();
  if (r->rows() == 0) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  return pg::RunFromRow(*r, 0);
}

absl::Status PgStore::FillRunDetails(const std::unordered_map<uint64_t, v1::Run*>& runs,
                                     absl::string_view where, int64_t key, bool with_results) {
  // Per run of the current attempt: the number of samples and the last one.
  absl::StatusOr<Result> last = conn_->Query(
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
                   sqlite::kSampleHistogramJoin),
      key);
  if (!last.ok()) return last.status();
  for (int i = 0; i < last->rows(); ++i) {
    auto it = runs.find(last->U64(i, 0));
    if (it == runs.end()) continue;
    it->second->set_samples(last->U64(i, 1));
    absl::StatusOr<v1::Sample> sample = pg::SampleFromRow(*last, i, 2);
    if (!sample.ok()) return sample.status();
    *it->second->mutable_last_sample() = *std::move(sample);
  }
  if (!with_results) return absl::OkStatus();

  // A result counts only for the attempt it was recorded for; one row per histogram.
  absl::StatusOr<Result> results = conn_->Query(
      "get results",
      absl::StrCat("SELECT r.id, res.result, h.name, h.histogram FROM runs r"
                   " JOIN results res ON res.run_id = r.id AND res.attempt = r.attempt"
                   " LEFT JOIN histograms h ON h.owner_kind = 'result' AND h.owner_id = r.id"
                   " WHERE ",
                   where),
      key);
  if (!results.ok()) return results.status();
  for (int i = 0; i < results->rows(); ++i) {
    auto it = runs.find(results->U64(i, 0));
    if (it == runs.end()) continue;
    v1::Run& run = *it->second;
    const std::string what = absl::StrCat("result of run ", run.id());
    if (!run.has_result()) {
      if (absl::Status s = sqlite::ParseBlob(results->Bytes(i, 1), what, *run.mutable_result());
          !s.ok()) {
        return s;
      }
    }
    if (results->IsNull(i, 2)) continue;
    const std::string name = results->Text(i, 2);
    v1::Histogram* histogram = name == "lat"         ? run.mutable_result()->mutable_lat()
                               : name == "read_lat"  ? run.mutable_result()->mutable_read_lat()
                               : name == "write_lat" ? run.mutable_result()->mutable_write_lat()
                                                     : nullptr;
    if (histogram == nullptr) continue;  // a histogram a newer schema added; not ours
    if (absl::Status s =
            sqlite::ParseBlob(results->Bytes(i, 3), absl::StrCat(what, " ", name), *histogram);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Run> PgStore::GetRun(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<v1::Run> run = ReadRun(run_id);
  if (!run.ok()) return run.status();
  if (absl::Status s = FillRunDetails({{run->id(), &*run}}, "r.id = $1",
                                      static_cast<int64_t>(run_id), /*with_results=*/true);
      !s.ok()) {
    return s;
  }
  return run;
}

absl::StatusOr<std::vector<v1::Run>> PgStore::ListRunsInStates(
    const std::vector<v1::RunState>& states) {
  if (states.empty()) return std::vector<v1::Run>{};
  // One array parameter: the same prepared statement serves every set of states.
  std::vector<std::string> names;
  names.reserve(states.size());
  for (v1::RunState state : states) names.push_back(sqlite::RunStateName(state));
  const std::string array = absl::StrCat("{", absl::StrJoin(names, ","), "}");

  absl::MutexLock lock(&mu_);
  const char* op = "list runs in states";
  if (absl::Status s = conn_->EnsureConnected(op); !s.ok()) return s;
  absl::StatusOr<Result> r =
      conn_->Query(op,
                   absl::StrCat("SELECT ", sqlite::kRunColumns,
                                " FROM runs r WHERE r.state = ANY($1::text[]) ORDER BY r.id"),
                   array);
  if (!r.ok()) return r.status();
  std::vector<v1::Run> out;
  for (int i = 0; i < r->rows(); ++i) {
    absl::StatusOr<v1::Run> run = pg::RunFromRow(*r, i);
    if (!run.ok()) return run.status();
    out.push_back(*std::move(run));
  }
  return out;
}

absl::Status PgStore::UpdateRun(const v1::Run& run) {
  if (!v1::RunState_IsValid(run.state())) {
    return absl::InvalidArgumentError(absl::StrCat("UpdateRun: bad state ", run.state()));
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  if (absl::Status s = WriteRun(run); !s.ok()) return s;
  return txn->Commit();
}

RunsWritten PgStore::UpdateRuns(const std::vector<v1::Run>& runs) {
  for (const v1::Run& run : runs) {
    if (!v1::RunState_IsValid(run.state())) {
      return {0, absl::InvalidArgumentError(absl::StrCat("UpdateRuns: bad state ", run.state()))};
    }
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kWrite);
  if (!txn.ok()) return {0, txn.status()};
  for (const v1::Run& run : runs) {
    if (absl::Status s = WriteRun(run); !s.ok()) return {0, s};
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return {0, s};
  return {runs.size(), absl::OkStatus()};
}

absl::Status PgStore::WriteRun(const v1::Run& run) {
  const auto id = static_cast<int64_t>(run.id());
  absl::StatusOr<Result> r = conn_->Query(
      "update run",
      "UPDATE runs SET state = $1, attempt = $2, agent_id = $3, device_path = $4, lease_id = $5,"
      " started_unix_ms = $6, finished_unix_ms = $7, error = $8 WHERE id = $9",
      sqlite::RunStateName(run.state()), run.attempt(), run.agent_id(), run.device_path(),
      run.lease_id(), run.started_unix_ms(), run.finished_unix_ms(), run.error(), id);
  if (!r.ok()) return r.status();
  if (r->affected() == 0) return absl::NotFoundError(absl::StrCat("run ", run.id(), " not found"));
  if (run.state() == v1::RUN_QUEUED) {
    // Re-queued: the samples of every attempt so far are superseded.
    if (absl::StatusOr<Result> d =
            conn_->Query("delete superseded sample histograms",
                         "DELETE FROM histograms WHERE owner_kind = 'sample' AND owner_id IN"
                         " (SELECT id FROM samples WHERE run_id = $1)",
                         id);
        !d.ok()) {
      return d.status();
    }
    if (absl::StatusOr<Result> d =
            conn_->Query("delete superseded samples", "DELETE FROM samples WHERE run_id = $1", id);
        !d.ok()) {
      return d.status();
    }
  }
  return absl::OkStatus();
}

absl::Status PgStore::WriteHistogram(const char* owner_kind, int64_t owner_id, const char* name,
                                     const v1::Histogram& histogram) {
  absl::StatusOr<std::string> bytes = sqlite::Serialize(histogram, name);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Result> r = conn_->Query(
      absl::StrCat("insert ", owner_kind, " histogram ", name),
      "INSERT INTO histograms (owner_kind, owner_id, name, count, min_ns, max_ns, sum_ns,"
      " histogram) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
      owner_kind, owner_id, name, histogram.count(), histogram.min_ns(), histogram.max_ns(),
      histogram.sum_ns(), Bytea{*bytes});
  return r.status();
}

absl::Status PgStore::AppendSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  if (absl::Status s = WriteSample(run_id, attempt, sample); !s.ok()) return s;
  return txn->Commit();
}

absl::Status PgStore::WriteSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) {
  const auto id = static_cast<int64_t>(run_id);
  // The first sample of the current attempt starts the run, in the same transaction.
  absl::StatusOr<Result> started = conn_->Query(
      "start run", "UPDATE runs SET state = $1 WHERE id = $2 AND attempt = $3 AND state = $4",
      sqlite::RunStateName(v1::RUN_RUNNING), id, attempt, sqlite::RunStateName(v1::RUN_ASSIGNED));
  if (!started.ok()) return started.status();
  if (started->affected() == 0) {
    absl::StatusOr<Result> exists =
        conn_->Query("find run", "SELECT 1 FROM runs WHERE id = $1", id);
    if (!exists.ok()) return exists.status();
    if (exists->rows() == 0) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  }
  return InsertSample(run_id, attempt, sample);
}

absl::Status PgStore::InsertSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) {
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
  constexpr char kInsert[] =
      "INSERT INTO samples (run_id, attempt, seq, offset_ns, interval_ns, read_ios, write_ios,"
      " read_bytes, write_bytes, device, jobs) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,"
      " CASE WHEN $10 THEN $11::bytea END, CASE WHEN $12 THEN $13::bytea END)"
      " ON CONFLICT (run_id, attempt, seq) DO NOTHING RETURNING id";
  // A duplicate (the agent resent after a lost ack) inserts nothing: the first copy is
  // already durable, and so is its histogram.
  if (!sample.has_lat()) {
    return conn_
        ->Query("insert sample", kInsert, static_cast<int64_t>(run_id), attempt, sample.seq(),
                sample.offset_ns(), sample.interval_ns(), io.read_ios(), io.write_ios(),
                io.read_bytes(), io.write_bytes(), sample.has_device(), Bytea{device}, has_jobs,
                Bytea{*jobs})
        .status();
  }
  // The sample and its histogram in one statement (one round trip per sample).
  const v1::Histogram& lat = sample.lat();
  absl::StatusOr<std::string> bytes = sqlite::Serialize(lat, "lat");
  if (!bytes.ok()) return bytes.status();
  return conn_
      ->Query("insert sample",
              absl::StrCat("WITH s AS (", kInsert,
                           ") INSERT INTO histograms (owner_kind, owner_id, name, count, min_ns,"
                           " max_ns, sum_ns, histogram) SELECT 'sample', s.id, 'lat', $14, $15,"
                           " $16, $17, $18 FROM s"),
              static_cast<int64_t>(run_id), attempt, sample.seq(), sample.offset_ns(),
              sample.interval_ns(), io.read_ios(), io.write_ios(), io.read_bytes(),
              io.write_bytes(), sample.has_device(), Bytea{device}, has_jobs, Bytea{*jobs},
              lat.count(), lat.min_ns(), lat.max_ns(), lat.sum_ns(), Bytea{*bytes})
      .status();
}

absl::StatusOr<std::vector<v1::Sample>> PgStore::ListSamples(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<v1::Run> run = ReadRun(run_id);
  if (!run.ok()) return run.status();
  absl::StatusOr<Result> r =
      conn_->Query("list samples",
                   absl::StrCat("SELECT ", sqlite::kSampleColumns, " FROM samples s",
                                sqlite::kSampleHistogramJoin,
                                " WHERE s.run_id = $1 AND s.attempt = $2 ORDER BY s.seq"),
                   static_cast<int64_t>(run_id), run->attempt());
  if (!r.ok()) return r.status();
  std::vector<v1::Sample> out;
  for (int i = 0; i < r->rows(); ++i) {
    absl::StatusOr<v1::Sample> sample = pg::SampleFromRow(*r, i, 0);
    if (!sample.ok()) return sample.status();
    out.push_back(*std::move(sample));
  }
  return out;
}

absl::Status PgStore::WriteResult(uint64_t run_id, uint32_t attempt, const v1::RunResult& result) {
  const auto id = static_cast<int64_t>(run_id);
  // Histograms live in their own table; the blob keeps everything else.
  v1::RunResult rest = result;
  rest.clear_lat();
  rest.clear_read_lat();
  rest.clear_write_lat();
  absl::StatusOr<std::string> blob = sqlite::Serialize(rest, "run result");
  if (!blob.ok()) return blob.status();
  // Replaces the result of an earlier attempt, if any.
  if (absl::StatusOr<Result> d =
          conn_->Query("delete old result", "DELETE FROM results WHERE run_id = $1", id);
      !d.ok()) {
    return d.status();
  }
  if (absl::StatusOr<Result> d =
          conn_->Query("delete old result histograms",
                       "DELETE FROM histograms WHERE owner_kind = 'result' AND owner_id = $1", id);
      !d.ok()) {
    return d.status();
  }
  const v1::LatencySummary& lat = result.lat_summary();
  if (absl::StatusOr<Result> r = conn_->Query(
          "insert result",
          "INSERT INTO results (run_id, attempt, runner, duration_ns, iops, bw_bytes_per_sec,"
          " read_ios, write_ios, read_bytes, write_bytes, lat_min_ns, lat_mean_ns, p50_ns,"
          " p90_ns, p99_ns, p999_ns, p9999_ns, lat_max_ns, usr_cpu_ns, sys_cpu_ns, result)"
          " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
          " $18, $19, $20, $21)",
          id, attempt, result.runner(), result.duration_ns(), result.iops(),
          result.bw_bytes_per_sec(), result.io().read_ios(), result.io().write_ios(),
          result.io().read_bytes(), result.io().write_bytes(), lat.min_ns(), lat.mean_ns(),
          lat.p50_ns(), lat.p90_ns(), lat.p99_ns(), lat.p999_ns(), lat.p9999_ns(), lat.max_ns(),
          result.usr_cpu_ns(), result.sys_cpu_ns(), Bytea{*blob});
      !r.ok()) {
    return r.status();
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

absl::Status PgStore::FinishRun(uint64_t run_id, uint32_t attempt, v1::RunState state,
                                const std::string& error, int64_t finished_unix_ms,
                                const v1::RunResult* result) {
  if (absl::Status s = CheckFinalState(state); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<v1::Run> run = ReadRun(run_id);
  if (!run.ok()) return run.status();
  if (absl::Status s = WriteFinish(*run, attempt, state, error, finished_unix_ms, result);
      !s.ok()) {
    return s;
  }
  return txn->Commit();
}

absl::Status PgStore::WriteFinish(const v1::Run& run, uint32_t attempt, v1::RunState state,
                                  const std::string& error, int64_t finished_unix_ms,
                                  const v1::RunResult* result) {
  if (run.attempt() != attempt) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", run.id(), ": attempt ", attempt, " is not the current attempt ", run.attempt()));
  }
  // Already final for this attempt (a resent RunFinished, or canceled meanwhile).
  if (IsFinalRunState(run.state())) return absl::OkStatus();
  if (absl::StatusOr<Result> r = conn_->Query(
          "finish run",
          "UPDATE runs SET state = $1, error = $2, finished_unix_ms = $3 WHERE id = $4",
          sqlite::RunStateName(state), error, finished_unix_ms, static_cast<int64_t>(run.id()));
      !r.ok()) {
    return r.status();
  }
  if (result != nullptr) return WriteResult(run.id(), attempt, *result);
  return absl::OkStatus();
}

}  // namespace blkbench
