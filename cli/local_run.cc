// The daemon-less experiment loop of `blkbench sim` and `blkbench run`; see local_run.h.
#include "cli/local_run.h"

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "agent/run_executor.h"
#include "cli/fio_logs.h"
#include "cli/format.h"
#include "cli/report.h"
#include "common/clock.h"
#include "controller/store/store_factory.h"
#include "workloads/format.h"

namespace blkbench {

int RunLocalExperiment(const SessionOptions& options, const LocalRunner& runner,
                       const std::atomic<bool>* cancel, std::ostream& out, std::ostream& err) {
  const std::string who = absl::StrCat("blkbench ", options.command);
  // Progress goes to stderr (or nowhere): stdout holds only the requested format.
  std::ostringstream discard;
  std::ostream& progress = options.quiet ? discard : err;
  auto cancelled = [cancel] {
    return cancel != nullptr && cancel->load(std::memory_order_relaxed);
  };
  SystemClock clock;
  absl::StatusOr<std::unique_ptr<LocalSession>> started = LocalSession::Start(options, clock);
  if (!started.ok()) {
    err << who << ": " << started.status().message() << "\n";
    return 1;
  }
  LocalSession& session = **started;
  const int total = session.size();
  for (int i = 0; i < total; ++i) {
    const v1::CellSpec& cell = session.CellOf(i);
    session.Place(i, runner.place(cell, session.run(i).id()));
    const v1::RunAssignment assignment = session.AssignmentOf(i);
    const std::string label =
        absl::StrCat(workloads::CellLabel(cell), " rep ", assignment.repeat());
    v1::RunFinished finished;
    double wall_s = 0;
    if (cancelled()) {
      finished = RunFinishedOf(assignment, absl::CancelledError("canceled before it started"));
    } else {
      std::ostream* trace = session.Begin(i);
      const auto start = std::chrono::steady_clock::now();
      finished = runner.execute(
          assignment, [&session, i](const v1::Sample& s) { session.AddSample(i, s); }, trace);
      wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress << "[" << i + 1 << "/" << total << "] " << label << ": ";
    }
    const v1::Run& run = session.Finish(i, finished);
    if (run.state() == v1::RUN_DONE) {
      progress << FormatIops(run.result().iops()) << " IOPS, p99 "
               << FormatLatency(run.result().lat_summary().p99_ns()) << " (" << wall_s << " s)\n";
    } else if (run.state() == v1::RUN_CANCELED) {
      if (run.started_unix_ms() != 0) progress << "canceled\n";
    } else {
      progress << "failed\n";
      // An error is not progress: it is printed even with --quiet.
      err << who << ": run " << run.id() << " (" << label << ") failed: " << run.error() << "\n";
    }
  }
  if (session.canceled() > 0) {
    err << who << ": interrupted: " << session.canceled() << " of " << total
        << " runs canceled (the devices were restored)\n";
  }
  v1::GetResultsResponse results = session.End();
  if (!options.db_path.empty()) {
    if (session.store_error().ok()) {
      progress << "stored as experiment " << session.experiment_id() << " in "
               << RedactedStoreName(options.db_path) << "\n";
    } else {
      err << who << ": storing in " << RedactedStoreName(options.db_path)
          << " failed: " << session.store_error().message() << "\n";
    }
  }
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
  // fio's log files once every run has run; a file not written fails the command, after
  // the results are printed.
  const int logs_rc =
      options.logs_dir.empty() ? 0 : WriteFioLogsFlag(results, options.logs_dir, who, err);
  if (options.on_results) options.on_results(results);
  if (options.format == "table") out << "\n";
  PrintResults(results, options.format, out);
  if (options.format == "table" && runner.extra_tables) runner.extra_tables(results, out);
  return session.failed() > 0 || session.canceled() > 0 || !session.store_error().ok() ||
                 logs_rc != 0
             ? 1
             : 0;
}

}  // namespace blkbench
