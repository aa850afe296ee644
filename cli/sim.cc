// `blkbench sim FILE`: runs a matrix on the scheduler engine in this process (no
// controller, no agent), prints progress (stderr) and the results (stdout), and can write the
// experiment to a SQLite file in the controller's schema.
#include "cli/sim.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/cell/sim_device.h"
#include "agent/run_executor.h"
#include "cli/command_args.h"
#include "cli/command_registry.h"
#include "cli/format.h"
#include "cli/local_run.h"
#include "common/resolved_job.h"
#include "common/sim_vocabulary.h"
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

int RunSim(const SessionOptions& options, std::ostream& out, std::ostream& err) {
  const workloads::Matrix& m = *options.matrix;
  for (const v1::CellSpec& cell : m.cells) {
    if (!IsSimulated(cell.target().device_class())) {
      err << options.path << ": cell " << cell.index() << " (" << workloads::CellLabel(cell)
          << ") has device_class '" << cell.target().device_class()
          << "'; blkbench sim runs only simulated classes (" << SimDeviceList()
          << "); blkbench run FILE --device PATH runs a matrix on a local device\n";
      return 1;
    }
  }
  std::unique_ptr<Runner> engine = engine::NewEngineRunner();
  SimulatedDevicePreparation sim_device;  // the agent's sim: devices, the same facts
  LocalRunner runner;
  runner.place = [](const v1::CellSpec& cell, uint64_t) { return cell.target().device_class(); };
  runner.execute = [&](const v1::RunAssignment& a,
                       const std::function<void(const v1::Sample&)>& on_sample,
                       std::ostream* trace) {
    CellRun cell_run;
    cell_run.cell = a.cell();
    cell_run.repeat = a.repeat();
    cell_run.device = a.device_path();
    cell_run.name = absl::StrCat("run-", a.run_id(), "-", a.attempt());
    cell_run.trace = trace;
    cell_run.on_sample = on_sample;
    return RunFinishedOf(a, RunCell(cell_run, sim_device, *engine));
  };
  runner.extra_tables = [](const v1::GetResultsResponse& results, std::ostream& o) {
    o << "\nengine internals (per I/O unless noted)\n";
    PrintEngineInternals(results, o);
  };
  SessionOptions session = options;
  if (session.command.empty()) session.command = "sim";
  return RunLocalExperiment(session, runner, /*cancel=*/nullptr, out, err);
}

CommandSpec SimCommand() {
  return {
      .name = "sim",
      .args = {"FILE"},
      .summary = "run a matrix of sim: devices on the engine, no daemons",
      .description =
          "Progress lines go to stderr; stdout holds only the results in the chosen format.",
      .flags =
          {{"db", "FILE|URI",
            "also store the experiment in this SQLite file or postgresql:// database"},
           {"trace", "FILE", "write every run's dispatch/complete events, blkparse-style"},
           {"report", "FILE", "also write the experiment's HTML report (as blkbench report)"},
           {"format", "FORMAT", "output format", {"table", "csv", "json", "fio-json", "fio-json+"}},
           FioLogsFlag(),
           {"quiet", "", "no progress lines", {}, 'q'}},
      .check = CheckMatrix,
      .run = [](const Args& a, Client*, std::ostream& out, std::ostream& err) {
        return RunSim(SessionOptionsFromArgs(a, "sim", /*default_db=*/""), out, err);
      }};
}

}  // namespace blkbench
