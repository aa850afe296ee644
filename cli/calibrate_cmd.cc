// `blkbench calibrate PATH`: the sweep, the fit and the twin's preset; see calibrate_cmd.h.
#include "cli/calibrate_cmd.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/cell/cell_runner.h"
#include "agent/cell/sim_device.h"
#include "agent/device/device_facts.h"
#include "cli/command_registry.h"
#include "cli/format.h"
#include "cli/run_cmd.h"
#include "common/sim_vocabulary.h"
#include "engine/model/engine_runner.h"
#include "engine/sim/machine_profile.h"
#include "workloads/format.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

std::string Fixed(double v, int digits) {
  char buf[48];
  snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string Micros(engine::SimTime ns) { return Fixed(static_cast<double>(ns) / 1e3, 3); }

// One swept cell on the device and on its twin.
struct SweepRow {
  std::string label;
  double real_iops = 0, twin_iops = 0;
  double real_lat_ns = 0, twin_lat_ns = 0;
  double Error() const { return real_iops > 0 ? twin_iops / real_iops - 1 : 0; }
};

// Why the median of a few short repeats rather than one long run: on a shared machine a
// burst of other work (a compile, a cron job) lands in one repeat, not in the median.
double Median(const std::vector<engine::SsdSweepPoint>& runs,
              double engine::SsdSweepPoint::*field) {
  std::vector<double> v;
  v.reserve(runs.size());
  for (const engine::SsdSweepPoint& p : runs) v.push_back(p.*field);
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

engine::SsdSweepPoint PointOf(const v1::CellSpec& cell, const v1::RunResult& r) {
  return {.write = cell.job().rw() == v1::RANDWRITE,
          .block_bytes = cell.job().bs(),
          .depth = cell.job().iodepth(),
          .iops = r.iops(),
          .mean_latency_ns = r.lat_summary().mean_ns()};
}

// The sweep's cells on the engine with `twin` as the device, in cell order.
absl::StatusOr<std::vector<v1::RunResult>> RunTwin(const SsdTwin& twin, uint32_t runtime_ms) {
  absl::StatusOr<workloads::Matrix> m = workloads::ParseMatrix(
      CalibrationMatrixText("calibrate-twin", runtime_ms, TwinTargetYaml(twin)), "<twin>");
  if (!m.ok()) return m.status();
  std::unique_ptr<Runner> engine = engine::NewEngineRunner();
  SimulatedDevicePreparation sim_device;
  std::vector<v1::RunResult> out;
  for (const v1::CellSpec& cell : m->cells) {
    CellRun run;
    run.cell = cell;
    run.device = cell.target().device_class();
    run.name = absl::StrCat("twin-", cell.index());
    absl::StatusOr<v1::RunResult> r = RunCell(run, sim_device, *engine);
    if (!r.ok()) return r.status();
    out.push_back(*std::move(r));
  }
  return out;
}

// Why: the engine runs its own host path (submit, tag, driver, completion: about a
// microsecond per I/O in the machine profile) on top of the device model, while a QD1
// latency measured on the device already contains the real host's. The twin's excess over
// the measurement at QD1, by direction, comes off the pipelined latency once, so that the
// twin's host plus device add up to what was measured. The serial stage needs no such
// step: at saturation the host path overlaps it.
void SubtractHostPath(const std::vector<engine::SsdSweepPoint>& real,
                      const std::vector<v1::RunResult>& twin, engine::SsdFitParams* fit) {
  double excess[2] = {0, 0};
  int n[2] = {0, 0};
  for (size_t i = 0; i < real.size() && i < twin.size(); ++i) {
    if (real[i].depth != 1) continue;
    excess[real[i].write] += twin[i].lat_summary().mean_ns() - real[i].mean_latency_ns;
    ++n[real[i].write];
  }
  auto less = [](engine::SimTime v, double by) {
    return static_cast<engine::SimTime>(std::max(0.0, static_cast<double>(v) - by));
  };
  if (n[0] > 0) fit->fixed_ns = less(fit->fixed_ns, excess[0] / n[0]);
  if (n[1] > 0) fit->write_ack_ns = less(fit->write_ack_ns, excess[1] / n[1]);
}

std::string SweepTable(const std::vector<SweepRow>& rows) {
  TextTable t({"cell", "real_IOPS", "twin_IOPS", "error%", "real_lat_us", "twin_lat_us"});
  for (const SweepRow& r : rows) {
    t.AddRow({r.label, FormatIops(r.real_iops), FormatIops(r.twin_iops), Fixed(100 * r.Error(), 1),
              Fixed(r.real_lat_ns / 1e3, 2), Fixed(r.twin_lat_ns / 1e3, 2)});
  }
  return t.ToString();
}

std::string ErrorSummary(const std::vector<SweepRow>& rows) {
  double sum = 0;
  const SweepRow* worst = nullptr;
  for (const SweepRow& r : rows) {
    sum += std::fabs(r.Error());
    if (worst == nullptr || std::fabs(r.Error()) > std::fabs(worst->Error())) worst = &r;
  }
  if (worst == nullptr) return "no cells";
  return absl::StrCat("mean |error| ", Fixed(100 * sum / static_cast<double>(rows.size()), 1),
                      " %, max |error| ", Fixed(100 * std::fabs(worst->Error()), 1), " % (",
                      worst->label, ")");
}

std::string FitLine(const SsdTwin& twin) {
  const engine::SsdFitParams& f = twin.fit;
  return absl::StrCat(
      "serial stage ", Micros(f.ctrl_ns), " us",
      f.bus_mbps > 0 ? absl::StrCat(" + bytes / ", Fixed(f.bus_mbps, 1), " MB/s") : "",
      " per I/O; then ", Micros(f.fixed_ns), " us (reads), write ack ", Micros(f.write_ack_ns),
      " us; queue depth ", twin.queue_depth, ", ", twin.hw_queues, " hw queue(s); machine ",
      twin.machine);
}

std::string PresetText(const CalibrateOptions& options, const v1::RunResult& facts,
                       const SsdTwin& twin, const std::vector<SweepRow>& rows) {
  const v1::DeviceFacts& d = facts.device();
  const v1::HostFacts& h = facts.host();
  std::ostringstream o;
  o << "# The engine's twin of " << options.device << " (" << d.device_class()
    << (d.model().empty() ? "" : absl::StrCat(", ", d.model())) << ", " << (d.size_bytes() >> 20)
    << " MiB), by blkbench calibrate on " << h.hostname() << " (kernel " << h.kernel_release()
    << ", " << h.cpus() << " CPUs) at "
    << absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone()) << ".\n"
    << "# Put these two keys in a matrix in place of its target: and device: (or append this\n"
    << "# file to a matrix without them) and run it with blkbench sim.\n"
    << "# Sweep: randread/randwrite x bs 4k/64k/256k x iodepth 1/32, numjobs 1, scheduler none, "
    << "median of " << kCalibrateRepeats << " runs of " << options.runtime_ms << " ms.\n"
    << "# Fit (FitSsd): " << FitLine(twin) << ".\n"
    << "# The twin on the sweep (error = twin IOPS / real IOPS - 1):\n";
  std::istringstream table(SweepTable(rows));
  for (std::string line; std::getline(table, line);) o << "#   " << line << "\n";
  o << "# " << ErrorSummary(rows) << ".\n"
    << "# Not in the twin: the host CPU a device's service takes from the submitters (a loop\n"
    << "# device's worker runs on the host's CPUs); see docs/engine-vs-real.md.\n"
    << TwinTargetYaml(twin);
  return o.str();
}

}  // namespace

std::string CalibrationMatrixText(const std::string& name, uint32_t runtime_ms,
                                  const std::string& target) {
  return absl::StrCat("name: ", name, "\nrepeats: ", kCalibrateRepeats,
                      "\n"
                      "job: {direct: 1, ioengine: io_uring, numjobs: 1, scheduler: none, "
                      "time_based: 1, runtime: ",
                      runtime_ms, "ms, ramp_time: ", runtime_ms / 5,
                      "ms}\n"
                      "matrix:\n"
                      "  rw: [randread, randwrite]\n"
                      "  bs: [4k, 64k, 256k]\n"
                      "  iodepth: [1, 32]\n",
                      target);
}

std::string TwinTargetYaml(const SsdTwin& twin) {
  const engine::SsdFitParams& f = twin.fit;
  return absl::StrCat("target: {device_class: \"sim:ssd\", machine: ", twin.machine,
                      "}\n"
                      "device:\n"
                      "  ssd: {dies: 0, program_mbps: 0, ctrl_us: ",
                      Micros(f.ctrl_ns), ", bus_mbps: ", Fixed(f.bus_mbps, 1),
                      ", fixed_us: ", Micros(f.fixed_ns),
                      ", write_ack_us: ", Micros(f.write_ack_ns),
                      ", queue_depth: ", std::max<uint32_t>(twin.queue_depth, 1),
                      ", hw_queues: ", std::max<uint32_t>(twin.hw_queues, 1), "}\n");
}

std::string TwinMachine(int cpus) {
  std::string best, largest;
  int best_cpus = 0, largest_cpus = 0;
  for (const MachineProfileDef& def : MachineProfiles()) {
    absl::StatusOr<engine::MachineProfile> p = engine::LoadMachineProfile(def.name);
    if (!p.ok()) continue;
    const std::string name(def.name);
    if (p->cpus() >= cpus && (best.empty() || p->cpus() < best_cpus)) {
      best = name;
      best_cpus = p->cpus();
    }
    if (p->cpus() > largest_cpus) largest = name, largest_cpus = p->cpus();
  }
  if (!best.empty()) return best;
  return largest.empty() ? std::string(kDefaultMachine) : largest;
}

int RunCalibrate(const CalibrateOptions& options, std::ostream& out, std::ostream& err) {
  const std::string who = "blkbench calibrate: ";
  if (options.runtime_ms < 10) {
    err << who << "--runtime_ms: expected at least 10 (ms per cell), got " << options.runtime_ms
        << "\n";
    return 2;
  }
  // Read-only: the class the sweep's cells target, as `run` will detect it.
  absl::StatusOr<v1::DeviceFacts> facts = ReadDeviceFacts(options.device, "");
  if (!facts.ok()) {
    err << who << options.device << ": " << facts.status().message() << "\n";
    return 1;
  }
  const std::string sweep_text = CalibrationMatrixText(
      "calibrate", options.runtime_ms,
      absl::StrCat("target: {device_class: ", facts->detected_class(), "}\n"));
  absl::StatusOr<workloads::Matrix> sweep = workloads::ParseMatrix(sweep_text, "<calibrate>");
  if (!sweep.ok()) {
    err << who << "the sweep's matrix: " << sweep.status().message() << "\n";
    return 1;
  }
  v1::GetResultsResponse results;
  std::ostringstream discard;  // the run's own tables: calibrate prints its own
  const std::vector<v1::CellSpec> sweep_cells = sweep->cells;
  RunOptions run = {
      .session = {.command = "calibrate",
                  .path = "<calibrate sweep>",
                  .db_path = options.db_path,
                  .quiet = options.quiet,
                  .matrix = std::make_shared<workloads::Matrix>(*std::move(sweep)),
                  .matrix_text = sweep_text,
                  .on_results = [&results](const v1::GetResultsResponse& r) { results = r; }},
      .devices = {options.device},
      .state_dir = options.state_dir};
  const int rc = RunOnDevices(run, discard, err);
  if (rc != 0) {
    err << who << "no preset written\n";
    return rc;
  }

  // Per cell, the median of its repeats (a point per cell, in cell order).
  std::vector<std::vector<engine::SsdSweepPoint>> repeats(sweep_cells.size());
  SsdTwin twin;
  for (const v1::ResultRow& row : results.rows()) {
    const v1::RunResult& r = row.run().result();
    repeats[row.run().cell_index()].push_back(PointOf(row.cell(), r));
    // Under none, nr_requests is the hardware tag depth.
    twin.queue_depth = std::max(twin.queue_depth, r.applied().nr_requests());
    twin.hw_queues = std::max<uint32_t>(1, r.device().nr_hw_queues());
  }
  std::vector<engine::SsdSweepPoint> points;
  for (const std::vector<engine::SsdSweepPoint>& runs : repeats) {
    if (runs.empty()) {
      err << who << "a swept cell has no result; no preset written\n";
      return 1;
    }
    engine::SsdSweepPoint p = runs[0];
    p.iops = Median(runs, &engine::SsdSweepPoint::iops);
    p.mean_latency_ns = Median(runs, &engine::SsdSweepPoint::mean_latency_ns);
    points.push_back(p);
  }
  absl::StatusOr<engine::SsdFitParams> fit = engine::FitSsd(points);
  if (!fit.ok()) {
    err << who << "the sweep cannot be fitted: " << fit.status().message()
        << "; no preset written\n";
    return 1;
  }
  twin.fit = *fit;
  twin.queue_depth = std::max(twin.queue_depth, fit->queue_depth);
  const v1::RunResult& first = results.rows(0).run().result();
  twin.machine = TwinMachine(static_cast<int>(first.host().cpus()));
  absl::StatusOr<std::vector<v1::RunResult>> on_twin = RunTwin(twin, options.runtime_ms);
  if (on_twin.ok()) {
    SubtractHostPath(points, *on_twin, &twin.fit);
    on_twin = RunTwin(twin, options.runtime_ms);
  }
  if (!on_twin.ok() || on_twin->size() != points.size()) {
    err << who << "the twin does not run: "
        << (on_twin.ok() ? "its sweep differs" : on_twin.status().message())
        << "; no preset written\n";
    return 1;
  }
  std::vector<SweepRow> rows;
  for (size_t i = 0; i < points.size(); ++i) {
    const v1::RunResult& t = (*on_twin)[i];
    rows.push_back({workloads::CellLabel(sweep_cells[i]), points[i].iops, t.iops(),
                    points[i].mean_latency_ns, t.lat_summary().mean_ns()});
  }

  const std::string path =
      !options.out_path.empty()
          ? options.out_path
          : absl::StrCat(
                "blkbench-twin-",
                first.device().kernel_name().empty() ? "file" : first.device().kernel_name(),
                ".yaml");
  std::ofstream preset(path);
  preset << PresetText(options, first, twin, rows);
  preset.close();
  if (!preset) {
    err << who << "cannot write '" << path << "'\n";
    return 1;
  }
  out << "the sweep on " << options.device << " and on its twin\n"
      << SweepTable(rows) << ErrorSummary(rows) << "\n"
      << "fit: " << FitLine(twin) << "\n"
      << "preset: " << path << " (target: sim:ssd; use it with blkbench sim)\n";
  return 0;
}

namespace {

int CmdCalibrate(const Args& a, Client*, std::ostream& out, std::ostream& err) {
  uint32_t runtime_ms = kDefaultCalibrateRuntimeMs;
  if (a.Has("runtime_ms") && !absl::SimpleAtoi(a.Get("runtime_ms"), &runtime_ms)) {
    err << "blkbench calibrate: --runtime_ms: expected a number of milliseconds, got '"
        << a.Get("runtime_ms") << "'\n";
    return 2;
  }
  return RunCalibrate({.device = a.positional[1],
                       .out_path = a.Get("out"),
                       .runtime_ms = runtime_ms,
                       .state_dir = a.Get("state-dir", kDefaultRunStateDir),
                       .db_path = a.Get("db"),
                       .quiet = a.Has("quiet")},
                      out, err);
}

}  // namespace

CommandSpec CalibrateCommand() {
  return {
      .name = "calibrate",
      .args = {"PATH"},
      .summary = "fit the engine's sim:ssd twin of a local device from a short sweep",
      .description =
          "Runs randread and randwrite x bs 4k, 64k, 256k x iodepth 1, 32 (one job, scheduler "
          "none) on PATH through blkbench run's path and checks (PATH is the only device it may "
          "touch; it WRITES to it: refused when mounted, in use or carrying a signature; "
          "settings restored), fits the SSD model's serial stage, pipelined latency and write "
          "ack, and writes the twin as the target: and device: keys of a matrix, with the "
          "twin's error on every swept cell in a comment. Each cell is the median of 3 runs; "
          "about 45 s by default. Needs root (docs/engine-vs-real.md).",
      .flags = {{"out", "FILE", "the preset to write (default ./blkbench-twin-<device>.yaml)"},
                {"runtime_ms", "N", "milliseconds per run, 3 runs per swept cell (default 1000)"},
                {"state-dir", "DIR",
                 "journal of original settings (default /var/lib/blkbench-run)"},
                {"db", "FILE", "also store the sweep in this local store, as blkbench run --db"},
                {"quiet", "", "no progress lines", {}, 'q'}},
      .run = CmdCalibrate};
}

}  // namespace blkbench
