// `blkbench sim FILE`: runs a matrix on the scheduler engine in this process (no
// controller, no agent), prints progress (stderr) and the results (stdout), and can write the
// experiment to a SQLite file in the controller's schema.
#include "cli/sim.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/cell/sim_device.h"
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

int RunSim(const SimOptions& options, std::ostream& out, std::ostream& err) {
  std::shared_ptr<const workloads::Matrix> m = options.matrix;
  if (m == nullptr) {
    absl::StatusOr<workloads::Matrix> parsed = workloads::ParseMatrixFile(options.path);
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
  runner.execute = [&](const LocalRun& r) {
    CellRun cell_run;
    cell_run.cell = r.cell;
    cell_run.repeat = r.run.repeat();
    cell_run.device = r.run.device_path();
    cell_run.name = absl::StrCat("run-", r.run.id(), "-", r.run.attempt());
    cell_run.trace = r.trace;
    cell_run.on_sample = r.on_sample;
    return RunCell(cell_run, sim_device, *engine);
  };
  runner.extra_tables = [](const v1::GetResultsResponse& results, std::ostream& o) {
    o << "\nengine internals (per I/O unless noted)\n";
    PrintEngineInternals(results, o);
  };
  return RunLocalExperiment({.command = "sim",
                             .path = options.path,
                             .db_path = options.db_path,
                             .trace_path = options.trace_path,
                             .format = options.format,
                             .report_path = options.report_path,
                             .quiet = options.quiet,
                             .matrix = std::move(m),
                             .matrix_text = options.matrix_text,
                             .on_results = options.on_results},
                            runner, out, err);
}

}  // namespace blkbench
