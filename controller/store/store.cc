// Store's default CommitReports: report by report through the store's own methods.
#include "controller/store/store.h"

#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/states.h"

namespace blkbench {

namespace {

// The first seq in 1..through that `samples` (ascending by seq) lack; 0 if none is.
uint64_t FirstMissing(const std::vector<v1::Sample>& samples, uint64_t through) {
  uint64_t want = 1;
  for (const v1::Sample& s : samples) {
    if (want > through || s.seq() > want) break;
    if (s.seq() == want) ++want;
  }
  return want > through ? 0 : want;
}

}  // namespace

absl::StatusOr<std::vector<absl::Status>> Store::CommitReports(
    const std::vector<AgentReport>& reports) {
  std::vector<absl::Status> out;
  out.reserve(reports.size());
  for (const AgentReport& r : reports) {
    absl::StatusOr<v1::Run> run = GetRun(r.run_id);
    if (!run.ok()) {
      out.push_back(run.status());
      continue;
    }
    if (absl::Status s = CheckReportLease(r, *run); !s.ok()) {
      out.push_back(s);
      continue;
    }
    if (r.kind == AgentReport::Kind::kSample) {
      out.push_back(AppendSample(r.run_id, r.attempt, r.sample));
      continue;
    }
    if (r.samples_through > 0 && !IsFinalRunState(run->state())) {
      absl::StatusOr<std::vector<v1::Sample>> samples = ListSamples(r.run_id);
      if (!samples.ok()) {
        out.push_back(samples.status());
        continue;
      }
      if (uint64_t missing = FirstMissing(*samples, r.samples_through); missing != 0) {
        out.push_back(MissingSamples(r, missing));
        continue;
      }
    }
    out.push_back(FinishRun(r.run_id, r.attempt, r.state, r.error, r.finished_unix_ms,
                            r.has_result ? &r.result : nullptr));
  }
  return out;
}

RunsWritten Store::UpdateRuns(const std::vector<v1::Run>& runs) {
  RunsWritten w;
  for (const v1::Run& run : runs) {
    w.status = UpdateRun(run);
    if (!w.status.ok()) return w;
    ++w.count;
  }
  return w;
}

absl::StatusOr<ExperimentProgress> Store::GetExperimentProgress(uint64_t id) {
  absl::StatusOr<v1::Experiment> exp = GetExperiment(id, false);
  if (!exp.ok()) return exp.status();
  ExperimentProgress p;
  p.state = exp->state();
  for (const v1::Run& run : exp->runs()) {
    ++p.runs;
    if (run.state() == v1::RUN_QUEUED) ++p.queued;
    if (IsFinalRunState(run.state())) ++p.final_runs;
    if (run.state() == v1::RUN_FAILED) ++p.failed;
  }
  return p;
}

absl::Status CheckReportLease(const AgentReport& report, const v1::Run& run) {
  if (run.attempt() != report.attempt || run.lease_id() != report.lease_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", report.run_id, " attempt ", report.attempt,
                     ": stale lease (the run's current attempt is ", run.attempt(), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckNewExperiment(const v1::Experiment& experiment) {
  if (experiment.repeats() == 0) {
    return absl::InvalidArgumentError("CreateExperiment: repeats must be at least 1");
  }
  if (experiment.cells().empty()) {
    return absl::InvalidArgumentError("CreateExperiment: the experiment has no cells");
  }
  return absl::OkStatus();
}

absl::Status CheckAddRuns(const std::vector<uint32_t>& cell_indices, uint32_t count) {
  if (count == 0) return absl::InvalidArgumentError("AddRuns: count must be at least 1");
  if (cell_indices.empty()) return absl::InvalidArgumentError("AddRuns: no cells");
  if (std::set<uint32_t>(cell_indices.begin(), cell_indices.end()).size() != cell_indices.size()) {
    return absl::InvalidArgumentError("AddRuns: a cell index is repeated");
  }
  return absl::OkStatus();
}

absl::Status CheckFinalState(v1::RunState state) {
  if (IsFinalRunState(state)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("FinishRun: state must be RUN_DONE, RUN_FAILED or RUN_CANCELED, not ",
                   v1::RunState_IsValid(state) ? v1::RunState_Name(state) : absl::StrCat(state)));
}

absl::Status MissingSamples(const AgentReport& report, uint64_t first_missing) {
  return absl::FailedPreconditionError(absl::StrCat("run ", report.run_id, ": samples ",
                                                    first_missing, "..", report.samples_through,
                                                    " not all stored yet"));
}

v1::GetResultsResponse ResultsOf(v1::Experiment experiment) {
  v1::GetResultsResponse resp;
  for (v1::Run& run : *experiment.mutable_runs()) {
    v1::ResultRow* row = resp.add_rows();
    if (run.cell_index() < static_cast<uint32_t>(experiment.cells_size())) {
      *row->mutable_cell() = experiment.cells(static_cast<int>(run.cell_index()));
    }
    *row->mutable_run() = std::move(run);
  }
  experiment.clear_runs();
  *resp.mutable_experiment() = std::move(experiment);
  return resp;
}

}  // namespace blkbench
