// The daemon-less experiment loop of `blkbench sim` and `blkbench run`; see local_run.h.
#include "cli/local_run.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/format.h"
#include "cli/report.h"
#include "common/clock.h"
#include "common/result_checks.h"
#include "common/run_order.h"
#include "controller/store/store_factory.h"
#include "workloads/format.h"

namespace blkbench {

int RunLocalExperiment(const LocalRunOptions& options, const LocalRunner& runner, std::ostream& out,
                       std::ostream& err) {
  const std::string who = absl::StrCat("blkbench ", options.command);
  const workloads::Matrix& m = *options.matrix;
  // Progress goes to stderr (or nowhere): stdout holds only the requested format.
  std::ostringstream discard;
  std::ostream& progress = options.quiet ? discard : err;
  auto cancelled = [&options] {
    return options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed);
  };
  // A store error is reported once and fails the command; the runs go on.
  absl::Status store_error;
  auto keep = [&store_error](const absl::Status& s) {
    if (store_error.ok() && !s.ok()) store_error = s;
  };
  SystemClock clock;
  v1::Experiment exp;
  exp.set_name(m.name);
  exp.set_file_name(options.path);
  exp.set_repeats(m.repeats);
  exp.set_state(v1::EXPERIMENT_RUNNING);
  exp.set_created_unix_ms(clock.WallMs());
  for (const v1::CellSpec& c : m.cells) *exp.add_cells() = c;

  // With --db the experiment and every run land in a store like the controller's (a SQLite
  // file or a postgresql:// database, OpenStore).
  std::unique_ptr<Store> store;
  uint64_t exp_id = 0;
  if (!options.db_path.empty()) {
    auto opened = OpenStore(options.db_path);
    if (!opened.ok()) {
      err << who << ": " << opened.status().message() << "\n";
      return 1;
    }
    store = std::move(*opened);
    auto id = store->CreateExperiment(exp);
    if (!id.ok()) {
      err << who << ": " << id.status().message() << "\n";
      return 1;
    }
    exp_id = *id;
    auto stored = store->GetExperiment(exp_id, false);
    if (stored.ok()) exp = *stored;
  } else {
    // The store's order (RunOrder), numbered as the store numbers a fresh experiment.
    uint64_t id = 1;
    for (const RunSlot& slot : RunOrder(static_cast<uint32_t>(m.cells.size()), m.repeats)) {
      v1::Run* run = exp.add_runs();
      run->set_id(id++);
      run->set_cell_index(slot.cell_index);
      run->set_repeat(slot.repeat);
    }
  }

  std::ofstream trace;
  if (!options.trace_path.empty()) {
    trace.open(options.trace_path);
    if (!trace) {
      err << who << ": cannot write '" << options.trace_path << "'\n";
      return 1;
    }
  }
  v1::GetResultsResponse results;
  int failures = 0, canceled = 0;
  const int total = exp.runs_size();
  for (int i = 0; i < total; ++i) {
    v1::Run run = exp.runs(i);
    const v1::CellSpec& cell = m.cells[run.cell_index()];
    run.set_attempt(1);
    run.set_agent_id("local");
    run.set_device_path(runner.place(cell, run.id()));
    absl::StatusOr<v1::RunResult> result = absl::CancelledError("canceled before it started");
    std::vector<v1::Sample> samples;  // for the results: fio-json's bw/iops statistics, report
    double wall_s = 0;
    if (!cancelled()) {
      run.set_state(v1::RUN_RUNNING);
      run.set_started_unix_ms(clock.WallMs());
      if (store) keep(store->UpdateRun(run));
      if (trace.is_open()) {
        trace << "# run " << run.id() << " " << workloads::CellLabel(cell) << " rep "
              << run.repeat() << "\n";
      }
      LocalRun local{run, cell,
                     [&](const v1::Sample& s) {
                       samples.push_back(s);
                       if (store) keep(store->AppendSample(run.id(), run.attempt(), s));
                     },
                     trace.is_open() ? &trace : nullptr};
      const auto start = std::chrono::steady_clock::now();
      result = runner.execute(local);
      // The controller's rule for agents' results, here for local and sim runs.
      if (result.ok()) {
        if (absl::Status s = CheckResultHasIo(*result); !s.ok()) result = s;
      }
      wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress << "[" << i + 1 << "/" << total << "] " << workloads::CellLabel(cell) << " rep "
               << run.repeat() << ": ";
    }
    if (result.ok()) {
      progress << FormatIops(result->iops()) << " IOPS, p99 "
               << FormatLatency(result->lat_summary().p99_ns()) << " (" << wall_s << " s)\n";
      run.set_state(v1::RUN_DONE);
      *run.mutable_result() = *result;
    } else if (absl::IsCancelled(result.status())) {
      if (run.started_unix_ms() != 0) progress << "canceled\n";
      ++canceled;
      run.set_state(v1::RUN_CANCELED);
      run.set_error(std::string(result.status().message()));
    } else {
      ++failures;
      progress << "failed\n";
      // An error is not progress: it is printed even with --quiet.
      err << who << ": run " << run.id() << " (" << workloads::CellLabel(cell) << " rep "
          << run.repeat() << ") failed: " << result.status().message() << "\n";
      run.set_state(v1::RUN_FAILED);
      run.set_error(std::string(result.status().message()));
    }
    run.set_finished_unix_ms(clock.WallMs());
    if (store) {
      keep(store->FinishRun(run.id(), run.attempt(), run.state(), run.error(),
                            run.finished_unix_ms(), result.ok() ? &*result : nullptr));
    }
    v1::ResultRow* row = results.add_rows();
    *row->mutable_run() = run;
    *row->mutable_cell() = cell;
    for (v1::Sample& s : samples) *row->add_samples() = std::move(s);
  }
  if (canceled > 0) {
    err << who << ": interrupted: " << canceled << " of " << total
        << " runs canceled (the devices were restored)\n";
  }
  const v1::ExperimentState final_state = canceled   ? v1::EXPERIMENT_CANCELED
                                          : failures ? v1::EXPERIMENT_FAILED
                                                     : v1::EXPERIMENT_DONE;
  std::string final_error;
  if (failures) final_error = absl::StrCat(failures, " of ", total, " runs failed");
  if (canceled) {
    absl::StrAppend(&final_error, final_error.empty() ? "" : "; ", canceled, " of ", total,
                    " runs canceled");
  }
  if (store) {
    keep(store->UpdateExperimentState(exp_id, final_state, final_error, clock.WallMs()));
    if (store_error.ok()) {
      progress << "stored as experiment " << exp_id << " in " << RedactedStoreName(options.db_path)
               << "\n";
    } else {
      err << who << ": storing in " << RedactedStoreName(options.db_path)
          << " failed: " << store_error.message() << "\n";
    }
  }
  v1::Experiment& shown = *results.mutable_experiment();
  shown = exp;
  shown.clear_runs();
  shown.set_id(exp_id);
  shown.set_state(final_state);
  shown.set_error(final_error);
  shown.set_finished_unix_ms(clock.WallMs());
  // (Not read again from `path`: it may be a pipe the CLI already read.)
  if (shown.matrix_text().empty()) shown.set_matrix_text(options.matrix_text);
  if (!options.report_path.empty()) {
    std::ofstream report(options.report_path);
    report << RenderExperimentReport(results);
    report.close();
    if (!report) {
      err << who << ": cannot write '" << options.report_path << "'\n";
      return 1;
    }
    progress << "report: " << options.report_path << "\n";
  }
  if (options.on_results) options.on_results(results);
  if (options.format == "table") out << "\n";
  PrintResults(results, options.format, out);
  if (options.format == "table" && runner.extra_tables) runner.extra_tables(results, out);
  return failures || canceled || !store_error.ok() ? 1 : 0;
}

}  // namespace blkbench
