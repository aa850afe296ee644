// `blkbench sim FILE`: runs a matrix on the scheduler engine in this process (no
// controller, no agent), prints progress (stderr) and the results (stdout), and can write the
// experiment to a SQLite file in the controller's schema.
#include "cli/sim.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/cell/sim_device.h"
#include "cli/format.h"
#include "cli/report.h"
#include "common/clock.h"
#include "common/resolved_job.h"
#include "common/run_order.h"
#include "common/sim_vocabulary.h"
#include "controller/store/store_factory.h"
#include "engine/model/engine_runner.h"
#include "workloads/format.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

// The mechanisms behind the numbers: tag allocation (single vs batch), sleeps, CPU per
// I/O by stage, sequential ratio of dispatched I/O, and mean queue occupancy.
void PrintEngineInternals(const v1::GetResultsResponse& results, std::ostream& out) {
  TextTable t({"run", "axes", "single_tags", "batch_asked", "batch_got", "tag_waits",
               "tag_alloc_ns", "cpu_ns", "seq_ratio", "inflight"});
  for (const v1::ResultRow& row : results.rows()) {
    const v1::RunResult& r = row.run().result();
    if (row.run().state() != v1::RUN_DONE) continue;
    const double ios = static_cast<double>(r.io().read_ios() + r.io().write_ios());
    auto get = [&r](const std::string& key) {
      auto it = r.internals().find(key);
      return it == r.internals().end() ? 0.0 : it->second;
    };
    double cpu = 0;
    for (const auto& [key, value] : r.internals()) {
      if (key.rfind("cpu_ns_per_io.", 0) == 0) cpu += value;
    }
    auto fixed = [](double v, int digits) {
      char buf[32];
      snprintf(buf, sizeof(buf), "%.*f", digits, v);
      return std::string(buf);
    };
    const double per = ios > 0 ? 1.0 / ios : 0.0;
    t.AddRow({absl::StrCat(row.run().id()), workloads::CellLabel(row.cell()),
              fixed(get("tags.single_allocs") * per, 3),
              fixed(get("tags.batch_requested") * per, 3),
              fixed(get("tags.batch_obtained") * per, 3), fixed(get("tags.waits") * per, 3),
              fixed(get("cpu_ns_per_io.tag_alloc"), 1), fixed(cpu, 1), fixed(get("seq_ratio"), 3),
              fixed(get("inflight.mean"), 1)});
  }
  out << t.ToString();
}

}  // namespace

int RunSim(const SimOptions& options, std::ostream& out, std::ostream& err) {
  const std::string& path = options.path;
  const std::string& db_path = options.db_path;
  const std::string& trace_path = options.trace_path;
  const std::string& format = options.format;
  // Progress goes to stderr (or nowhere): stdout holds only the requested format.
  std::ostringstream discard;
  std::ostream& progress = options.quiet ? discard : err;
  // A store error is reported once and fails the command; the runs go on.
  absl::Status store_error;
  auto keep = [&store_error](const absl::Status& s) {
    if (store_error.ok() && !s.ok()) store_error = s;
  };
  std::shared_ptr<const workloads::Matrix> m = options.matrix;
  if (m == nullptr) {
    absl::StatusOr<workloads::Matrix> parsed = workloads::ParseMatrixFile(path);
    if (!parsed.ok()) {
      err << parsed.status().message() << "\n";
      return 1;
    }
    m = std::make_shared<const workloads::Matrix>(std::move(*parsed));
    // (A parse from the CLI's check printed its warnings there.)
    for (const std::string& warning : m->warnings) err << warning << "\n";
  }
  for (const v1::CellSpec& cell : m->cells) {
    if (!IsSimulated(cell.target().device_class())) {
      err << path << ": cell " << cell.index() << " (" << workloads::CellLabel(cell)
          << ") has device_class '" << cell.target().device_class()
          << "'; blkbench sim runs only simulated classes (" << SimDeviceList() << ")\n";
      return 1;
    }
  }
  SystemClock clock;
  v1::Experiment exp;
  exp.set_name(m->name);
  exp.set_file_name(path);
  exp.set_repeats(m->repeats);
  exp.set_state(v1::EXPERIMENT_RUNNING);
  exp.set_created_unix_ms(clock.WallMs());
  for (const v1::CellSpec& c : m->cells) *exp.add_cells() = c;

  // With --db the experiment and every run land in a store like the controller's (a SQLite
  // file or a postgresql:// database, OpenStore).
  std::unique_ptr<Store> store;
  uint64_t exp_id = 0;
  if (!db_path.empty()) {
    auto opened = OpenStore(db_path);
    if (!opened.ok()) {
      err << "blkbench sim: " << opened.status().message() << "\n";
      return 1;
    }
    store = std::move(*opened);
    auto id = store->CreateExperiment(exp);
    if (!id.ok()) {
      err << "blkbench sim: " << id.status().message() << "\n";
      return 1;
    }
    exp_id = *id;
    auto stored = store->GetExperiment(exp_id, false);
    if (stored.ok()) exp = *stored;
  } else {
    // The store's order (RunOrder), numbered as the store numbers a fresh experiment.
    uint64_t id = 1;
    for (const RunSlot& slot : RunOrder(static_cast<uint32_t>(m->cells.size()), m->repeats)) {
      v1::Run* run = exp.add_runs();
      run->set_id(id++);
      run->set_cell_index(slot.cell_index);
      run->set_repeat(slot.repeat);
    }
  }

  std::ofstream trace;
  if (!trace_path.empty()) {
    trace.open(trace_path);
    if (!trace) {
      err << "blkbench sim: cannot write '" << trace_path << "'\n";
      return 1;
    }
  }
  std::unique_ptr<Runner> runner = engine::NewEngineRunner();
  SimulatedDevicePreparation sim_device;  // the agent's sim: devices, the same facts
  v1::GetResultsResponse results;
  int failures = 0;
  const int total = exp.runs_size();
  for (int i = 0; i < total; ++i) {
    v1::Run run = exp.runs(i);
    const v1::CellSpec& cell = m->cells[run.cell_index()];
    run.set_attempt(1);
    run.set_state(v1::RUN_RUNNING);
    run.set_agent_id("local");
    run.set_device_path(cell.target().device_class());
    run.set_started_unix_ms(clock.WallMs());
    if (store) keep(store->UpdateRun(run));

    CellRun cell_run;
    cell_run.cell = cell;
    cell_run.repeat = run.repeat();
    cell_run.device = run.device_path();
    cell_run.name = absl::StrCat("run-", run.id(), "-", run.attempt());
    if (trace.is_open()) {
      trace << "# run " << run.id() << " " << workloads::CellLabel(cell) << " rep " << run.repeat()
            << "\n";
      cell_run.trace = &trace;
    }
    std::vector<v1::Sample> samples;  // for the results: fio-json's bw/iops statistics, report
    cell_run.on_sample = [&](const v1::Sample& s) {
      samples.push_back(s);
      if (store) keep(store->AppendSample(run.id(), run.attempt(), s));
    };
    const auto start = std::chrono::steady_clock::now();
    auto result = RunCell(cell_run, sim_device, *runner);
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    progress << "[" << i + 1 << "/" << total << "] " << workloads::CellLabel(cell) << " rep "
             << run.repeat() << ": ";
    if (result.ok()) {
      progress << FormatIops(result->iops()) << " IOPS, p99 "
               << FormatLatency(result->lat_summary().p99_ns()) << " (" << wall_s << " s)\n";
      run.set_state(v1::RUN_DONE);
      *run.mutable_result() = *result;
    } else {
      ++failures;
      progress << "failed\n";
      // An error is not progress: it is printed even with --quiet.
      err << "blkbench sim: run " << run.id() << " (" << workloads::CellLabel(cell) << " rep "
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
  if (store) {
    keep(store->UpdateExperimentState(
        exp_id, failures ? v1::EXPERIMENT_FAILED : v1::EXPERIMENT_DONE,
        failures ? absl::StrCat(failures, " of ", total, " runs failed") : "", clock.WallMs()));
    if (store_error.ok()) {
      progress << "stored as experiment " << exp_id << " in " << RedactedStoreName(db_path) << "\n";
    } else {
      err << "blkbench sim: storing in " << RedactedStoreName(db_path)
          << " failed: " << store_error.message() << "\n";
    }
  }
  v1::Experiment& shown = *results.mutable_experiment();
  shown = exp;
  shown.clear_runs();
  shown.set_id(exp_id);
  shown.set_state(failures ? v1::EXPERIMENT_FAILED : v1::EXPERIMENT_DONE);
  shown.set_finished_unix_ms(clock.WallMs());
  // (Not read again from `path`: it may be a pipe the CLI already read.)
  if (shown.matrix_text().empty()) shown.set_matrix_text(options.matrix_text);
  if (!options.report_path.empty()) {
    std::ofstream report(options.report_path);
    report << RenderExperimentReport(results);
    report.close();
    if (!report) {
      err << "blkbench sim: cannot write '" << options.report_path << "'\n";
      return 1;
    }
    progress << "report: " << options.report_path << "\n";
  }
  if (format == "table") out << "\n";
  PrintResults(results, format, out);
  if (format == "table") {
    out << "\nengine internals (per I/O unless noted)\n";
    PrintEngineInternals(results, out);
  }
  return failures || !store_error.ok() ? 1 : 0;
}

}  // namespace blkbench
