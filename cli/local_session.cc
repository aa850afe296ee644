// A daemon-less experiment through the controller's lifecycle rules; see local_session.h.
#include "cli/local_session.h"

#include <utility>

#include "common/run_order.h"
#include "controller/experiment_lifecycle.h"
#include "controller/store/store_factory.h"

namespace blkbench {

SessionOptions SessionOptionsFromArgs(const Args& a, const std::string& command,
                                      const std::string& default_db) {
  return {.command = command,
          .path = a.positional[1],
          .db_path = a.Get("db", default_db),
          .trace_path = a.Get("trace"),
          .format = a.Get("format", "table"),
          .report_path = a.Get("report"),
          .logs_dir = a.Get("logs"),
          .quiet = a.Has("quiet"),
          .matrix = a.matrix,
          .matrix_text = a.matrix_text};
}

absl::StatusOr<std::unique_ptr<LocalSession>> LocalSession::Start(const SessionOptions& options,
                                                                  Clock& clock) {
  std::unique_ptr<LocalSession> s(new LocalSession(options, clock));
  const workloads::Matrix& m = *options.matrix;
  // The matrix text is not stored: the report takes it from the options (End).
  s->experiment_ =
      NewExperiment(m, options.path, /*matrix_text=*/"", /*submitted_by=*/"", clock.WallMs());
  if (!options.db_path.empty()) {
    auto opened = OpenStore(options.db_path);
    if (!opened.ok()) return opened.status();
    s->store_ = *std::move(opened);
    auto id = s->store_->CreateExperiment(s->experiment_);
    if (!id.ok()) return id.status();
    s->experiment_id_ = *id;
    auto stored = s->store_->GetExperiment(*id, false);
    if (!stored.ok()) return stored.status();
    s->experiment_ = *std::move(stored);
  } else {
    uint64_t id = 1;
    for (const RunSlot& slot : RunOrder(static_cast<uint32_t>(m.cells.size()), m.repeats)) {
      v1::Run* run = s->experiment_.add_runs();
      run->set_id(id++);
      run->set_cell_index(slot.cell_index);
      run->set_repeat(slot.repeat);
    }
  }
  if (!options.trace_path.empty()) {
    auto sink = TraceSink::OpenFile(options.trace_path);
    if (!sink.ok()) return sink.status();
    s->trace_ = *std::move(sink);
  }
  s->samples_.resize(static_cast<size_t>(s->experiment_.runs_size()));
  return s;
}

const v1::CellSpec& LocalSession::CellOf(int i) const {
  return options_.matrix->cells[run(i).cell_index()];
}

void LocalSession::Keep(const absl::Status& s) {
  if (store_error_.ok() && !s.ok()) store_error_ = s;
}

void LocalSession::Place(int i, const std::string& device) {
  v1::Run& r = *experiment_.mutable_runs(i);
  r.set_attempt(1);
  r.set_agent_id("local");
  r.set_device_path(device);
}

v1::RunAssignment LocalSession::AssignmentOf(int i) const {
  const v1::Run& r = run(i);
  v1::RunAssignment a;
  a.set_run_id(r.id());
  a.set_attempt(r.attempt());
  a.set_lease_id("local");
  *a.mutable_cell() = CellOf(i);
  a.set_repeat(r.repeat());
  a.set_device_path(r.device_path());
  a.set_sample_interval_ms(1000);
  return a;
}

std::ostream* LocalSession::Begin(int i) {
  v1::Run& r = *experiment_.mutable_runs(i);
  r.set_state(v1::RUN_RUNNING);
  r.set_started_unix_ms(clock_.WallMs());
  if (store_) Keep(store_->UpdateRun(r));
  return trace_ ? trace_->BeginRun(r, CellOf(i)) : nullptr;
}

void LocalSession::AddSample(int i, const v1::Sample& sample) {
  samples_[static_cast<size_t>(i)].push_back(sample);
  const v1::Run& r = run(i);
  if (store_) Keep(store_->AppendSample(r.id(), r.attempt(), sample));
}

const v1::Run& LocalSession::Finish(int i, const v1::RunFinished& finished) {
  v1::Run& r = *experiment_.mutable_runs(i);
  const RunEnd end = RunEndOf(finished);
  r.set_state(end.state);
  r.set_error(end.error);
  if (end.has_result) *r.mutable_result() = finished.result();
  if (end.state == v1::RUN_FAILED) ++failed_;
  if (end.state == v1::RUN_CANCELED) ++canceled_;
  r.set_finished_unix_ms(clock_.WallMs());
  if (store_) {
    Keep(store_->FinishRun(r.id(), r.attempt(), r.state(), r.error(), r.finished_unix_ms(),
                           end.has_result ? &finished.result() : nullptr));
  }
  v1::ResultRow* row = results_.add_rows();
  *row->mutable_run() = r;
  *row->mutable_cell() = CellOf(i);
  for (v1::Sample& s : samples_[static_cast<size_t>(i)]) *row->add_samples() = std::move(s);
  samples_[static_cast<size_t>(i)].clear();
  return r;
}

v1::GetResultsResponse LocalSession::End() {
  const ExperimentEnd end =
      EndOfExperiment(static_cast<uint64_t>(size()), static_cast<uint64_t>(failed_), canceled_ > 0);
  const int64_t now = clock_.WallMs();
  if (store_) Keep(store_->UpdateExperimentState(experiment_id_, end.state, end.error, now));
  v1::Experiment& shown = *results_.mutable_experiment();
  shown = experiment_;
  shown.clear_runs();
  shown.set_id(experiment_id_);
  shown.set_state(end.state);
  shown.set_error(end.error);
  shown.set_finished_unix_ms(now);
  // (Not read again from `path`: it may be a pipe the CLI already read.)
  if (shown.matrix_text().empty()) shown.set_matrix_text(options_.matrix_text);
  return results_;
}

}  // namespace blkbench
