// SqlStore: runs, samples and results — the paths that acknowledge agents' data, so each
// write is one durable transaction and duplicates collapse on (run, attempt, seq).
#include <string>

#include "absl/strings/str_cat.h"
#include "common/states.h"
#include "controller/store/sql_rows.h"
#include "controller/store/sql_store.h"

namespace blkbench {

using sql::Blob;
using sql::Result;

absl::StatusOr<v1::Run> SqlStore::ReadRun(uint64_t run_id) {
  absl::StatusOr<Result> r = conn_->Run(
      "get run", absl::StrCat("SELECT ", sql::kRunColumns, " FROM runs r WHERE r.id = ?"),
      static_cast<int64_t>(run_id));
  if (!r.ok()) return r.status();
  if (r->rows() == 0) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  return sql::RunFromRow(*r, 0);
}

absl::Status SqlStore::FillRunDetails(const std::unordered_map<uint64_t, v1::Run*>& runs,
                                      absl::string_view where, int64_t key, bool with_results) {
  // Per run of the current attempt: the number of samples and the last one.
  absl::StatusOr<Result> last = conn_->Run(
      "get sample counts and last samples",
      absl::StrCat("SELECT agg.run_id, agg.n, ", sql::kSampleColumns,
                   " FROM (SELECT s.run_id AS run_id, COUNT(*) AS n, MAX(s.seq) AS last_seq"
                   " FROM runs r JOIN samples s ON s.run_id = r.id AND s.attempt = r.attempt"
                   " WHERE ",
                   where,
                   " GROUP BY s.run_id) agg"
                   " JOIN runs r ON r.id = agg.run_id"
                   " JOIN samples s ON s.run_id = r.id AND s.attempt = r.attempt"
                   " AND s.seq = agg.last_seq",
                   sql::kSampleHistogramJoin),
      key);
  if (!last.ok()) return last.status();
  for (int i = 0; i < last->rows(); ++i) {
    auto it = runs.find(last->U64(i, 0));
    if (it == runs.end()) continue;
    it->second->set_samples(last->U64(i, 1));
    absl::StatusOr<v1::Sample> sample = sql::SampleFromRow(*last, i, 2);
    if (!sample.ok()) return sample.status();
    *it->second->mutable_last_sample() = *std::move(sample);
  }
  if (!with_results) return absl::OkStatus();

  // A result counts only for the attempt it was recorded for; one row per histogram.
  absl::StatusOr<Result> results = conn_->Run(
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
      if (absl::Status s = sql::ParseBlob(results->Bytes(i, 1), what, *run.mutable_result());
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
            sql::ParseBlob(results->Bytes(i, 3), absl::StrCat(what, " ", name), *histogram);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Run> SqlStore::GetRun(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<sql::Transaction> txn = sql::Transaction::Begin(*conn_, sql::Conn::Mode::kRead);
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

absl::StatusOr<std::vector<v1::Run>> SqlStore::ListRunsInStates(
    const std::vector<v1::RunState>& states) {
  if (states.empty()) return std::vector<v1::Run>{};
  // One placeholder per state; the states themselves are bound, never spliced in.
  sql::Params params;
  std::string placeholders;
  for (v1::RunState state : states) {
    absl::StrAppend(&placeholders, placeholders.empty() ? "?" : ", ?");
    params.Add(sql::RunStateName(state));
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Result> r =
      conn_->Query("list runs in states",
                   absl::StrCat("SELECT ", sql::kRunColumns, " FROM runs r WHERE r.state IN (",
                                placeholders, ") ORDER BY r.id"),
                   params);
  if (!r.ok()) return r.status();
  std::vector<v1::Run> out;
  for (int i = 0; i < r->rows(); ++i) {
    absl::StatusOr<v1::Run> run = sql::RunFromRow(*r, i);
    if (!run.ok()) return run.status();
    out.push_back(*std::move(run));
  }
  return out;
}

absl::Status SqlStore::UpdateRun(const v1::Run& run) {
  if (!v1::RunState_IsValid(run.state())) {
    return absl::InvalidArgumentError(absl::StrCat("UpdateRun: bad state ", run.state()));
  }
  absl::MutexLock lock(&mu_);
  return InWriteTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return WriteRun(run); });
}

RunsWritten SqlStore::UpdateRuns(const std::vector<v1::Run>& runs) {
  for (const v1::Run& run : runs) {
    if (!v1::RunState_IsValid(run.state())) {
      return {0, absl::InvalidArgumentError(absl::StrCat("UpdateRuns: bad state ", run.state()))};
    }
  }
  absl::MutexLock lock(&mu_);
  absl::Status s = InWriteTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const v1::Run& run : runs) {
      if (absl::Status w = WriteRun(run); !w.ok()) return w;
    }
    return absl::OkStatus();
  });
  return {s.ok() ? runs.size() : 0, s};
}

absl::Status SqlStore::WriteRun(const v1::Run& run) {
  const auto id = static_cast<int64_t>(run.id());
  absl::StatusOr<Result> r = conn_->Run(
      "update run",
      "UPDATE runs SET state = ?, attempt = ?, agent_id = ?, device_path = ?, lease_id = ?,"
      " started_unix_ms = ?, finished_unix_ms = ?, error = ? WHERE id = ?",
      sql::RunStateName(run.state()), run.attempt(), run.agent_id(), run.device_path(),
      run.lease_id(), run.started_unix_ms(), run.finished_unix_ms(), run.error(), id);
  if (!r.ok()) return r.status();
  if (r->affected() == 0) return absl::NotFoundError(absl::StrCat("run ", run.id(), " not found"));
  if (run.state() != v1::RUN_QUEUED) return absl::OkStatus();
  // Re-queued: the samples of every attempt so far are superseded.
  if (absl::StatusOr<Result> d =
          conn_->Run("delete superseded sample histograms",
                     "DELETE FROM histograms WHERE owner_kind = 'sample' AND owner_id IN"
                     " (SELECT id FROM samples WHERE run_id = ?)",
                     id);
      !d.ok()) {
    return d.status();
  }
  return conn_->Run("delete superseded samples", "DELETE FROM samples WHERE run_id = ?", id)
      .status();
}

absl::Status SqlStore::WriteHistogram(const char* owner_kind, int64_t owner_id, const char* name,
                                      const v1::Histogram& histogram) {
  absl::StatusOr<std::string> bytes = sql::Serialize(histogram, name);
  if (!bytes.ok()) return bytes.status();
  return conn_
      ->Run(absl::StrCat("insert ", owner_kind, " histogram ", name),
            "INSERT INTO histograms (owner_kind, owner_id, name, count, min_ns, max_ns, sum_ns,"
            " histogram) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            owner_kind, owner_id, name, histogram.count(), histogram.min_ns(), histogram.max_ns(),
            histogram.sum_ns(), Blob{*bytes})
      .status();
}

absl::Status SqlStore::AppendSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) {
  absl::MutexLock lock(&mu_);
  return InWriteTransaction(
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return WriteSample(run_id, attempt, sample); });
}

absl::Status SqlStore::WriteSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) {
  const auto id = static_cast<int64_t>(run_id);
  // The first sample of the current attempt starts the run, in the same transaction.
  absl::StatusOr<Result> started = conn_->Run(
      "start run", "UPDATE runs SET state = ? WHERE id = ? AND attempt = ? AND state = ?",
      sql::RunStateName(v1::RUN_RUNNING), id, attempt, sql::RunStateName(v1::RUN_ASSIGNED));
  if (!started.ok()) return started.status();
  if (started->affected() == 0) {
    absl::StatusOr<Result> exists = conn_->Run("find run", "SELECT 1 FROM runs WHERE id = ?", id);
    if (!exists.ok()) return exists.status();
    if (exists->rows() == 0) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  }
  return InsertSample(run_id, attempt, sample);
}

absl::Status SqlStore::InsertSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) {
  const v1::IoCounters& io = sample.io();
  // The device's counters, NULL when the sample has none (a file, a sim: device).
  std::string device;
  if (sample.has_device()) {
    absl::StatusOr<std::string> bytes = sql::Serialize(sample.device(), "device counters");
    if (!bytes.ok()) return bytes.status();
    device = *std::move(bytes);
  }
  // The jobs' intervals, NULL when the sample has none (an older agent).
  std::string jobs;
  if (sample.jobs_size() > 0) {
    absl::StatusOr<std::string> bytes = sql::SerializeSampleJobs(sample);
    if (!bytes.ok()) return bytes.status();
    jobs = *std::move(bytes);
  }
  absl::StatusOr<Result> inserted = conn_->Run(
      "insert sample",
      "INSERT INTO samples (run_id, attempt, seq, offset_ns, interval_ns, read_ios, write_ios,"
      " read_bytes, write_bytes, device, jobs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
      " ON CONFLICT (run_id, attempt, seq) DO NOTHING RETURNING id",
      static_cast<int64_t>(run_id), attempt, sample.seq(), sample.offset_ns(), sample.interval_ns(),
      io.read_ios(), io.write_ios(), io.read_bytes(), io.write_bytes(),
      Blob{device, !sample.has_device()}, Blob{jobs, sample.jobs_size() == 0});
  if (!inserted.ok()) return inserted.status();
  // A duplicate (the agent resent after a lost ack) inserts nothing: the first copy is
  // already durable, and so is its histogram.
  if (inserted->rows() == 0 || !sample.has_lat()) return absl::OkStatus();
  return WriteHistogram("sample", inserted->Int(0, 0), "lat", sample.lat());
}

absl::StatusOr<std::vector<v1::Sample>> SqlStore::ListSamples(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<sql::Transaction> txn = sql::Transaction::Begin(*conn_, sql::Conn::Mode::kRead);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<v1::Run> run = ReadRun(run_id);
  if (!run.ok()) return run.status();
  absl::StatusOr<Result> r = conn_->Run(
      "list samples",
      absl::StrCat("SELECT ", sql::kSampleColumns, " FROM samples s", sql::kSampleHistogramJoin,
                   " WHERE s.run_id = ? AND s.attempt = ? ORDER BY s.seq"),
      static_cast<int64_t>(run_id), run->attempt());
  if (!r.ok()) return r.status();
  std::vector<v1::Sample> out;
  for (int i = 0; i < r->rows(); ++i) {
    absl::StatusOr<v1::Sample> sample = sql::SampleFromRow(*r, i, 0);
    if (!sample.ok()) return sample.status();
    out.push_back(*std::move(sample));
  }
  return out;
}

absl::Status SqlStore::WriteResult(uint64_t run_id, uint32_t attempt, const v1::RunResult& result) {
  const auto id = static_cast<int64_t>(run_id);
  // Histograms live in their own table; the blob keeps everything else.
  v1::RunResult rest = result;
  rest.clear_lat();
  rest.clear_read_lat();
  rest.clear_write_lat();
  absl::StatusOr<std::string> blob = sql::Serialize(rest, "run result");
  if (!blob.ok()) return blob.status();
  // Replaces the result of an earlier attempt, if any.
  if (absl::StatusOr<Result> d =
          conn_->Run("delete old result", "DELETE FROM results WHERE run_id = ?", id);
      !d.ok()) {
    return d.status();
  }
  if (absl::StatusOr<Result> d =
          conn_->Run("delete old result histograms",
                     "DELETE FROM histograms WHERE owner_kind = 'result' AND owner_id = ?", id);
      !d.ok()) {
    return d.status();
  }
  const v1::LatencySummary& lat = result.lat_summary();
  if (absl::StatusOr<Result> r = conn_->Run(
          "insert result",
          "INSERT INTO results (run_id, attempt, runner, duration_ns, iops, bw_bytes_per_sec,"
          " read_ios, write_ios, read_bytes, write_bytes, lat_min_ns, lat_mean_ns, p50_ns,"
          " p90_ns, p99_ns, p999_ns, p9999_ns, lat_max_ns, usr_cpu_ns, sys_cpu_ns, result)"
          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          id, attempt, result.runner(), result.duration_ns(), result.iops(),
          result.bw_bytes_per_sec(), result.io().read_ios(), result.io().write_ios(),
          result.io().read_bytes(), result.io().write_bytes(), lat.min_ns(), lat.mean_ns(),
          lat.p50_ns(), lat.p90_ns(), lat.p99_ns(), lat.p999_ns(), lat.p9999_ns(), lat.max_ns(),
          result.usr_cpu_ns(), result.sys_cpu_ns(), Blob{*blob});
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

absl::Status SqlStore::FinishRun(uint64_t run_id, uint32_t attempt, v1::RunState state,
                                 const std::string& error, int64_t finished_unix_ms,
                                 const v1::RunResult* result) {
  if (absl::Status s = CheckFinalState(state); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  return InWriteTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<v1::Run> run = ReadRun(run_id);
    if (!run.ok()) return run.status();
    return WriteFinish(*run, attempt, state, error, finished_unix_ms, result);
  });
}

absl::Status SqlStore::WriteFinish(const v1::Run& run, uint32_t attempt, v1::RunState state,
                                   const std::string& error, int64_t finished_unix_ms,
                                   const v1::RunResult* result) {
  if (run.attempt() != attempt) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", run.id(), ": attempt ", attempt, " is not the current attempt ", run.attempt()));
  }
  // Already final for this attempt (a resent RunFinished, or canceled meanwhile).
  if (IsFinalRunState(run.state())) return absl::OkStatus();
  if (absl::StatusOr<Result> r = conn_->Run(
          "finish run", "UPDATE runs SET state = ?, error = ?, finished_unix_ms = ? WHERE id = ?",
          sql::RunStateName(state), error, finished_unix_ms, static_cast<int64_t>(run.id()));
      !r.ok()) {
    return r.status();
  }
  if (result != nullptr) return WriteResult(run.id(), attempt, *result);
  return absl::OkStatus();
}

}  // namespace blkbench
