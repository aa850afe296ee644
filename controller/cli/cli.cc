// The `blkbench` command line; see cli.h.
#include "controller/cli/cli.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "blkbench/v1/controller.grpc.pb.h"
#include "common/histogram.h"
#include "common/states.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/format.h"
#include "controller/cli/gate_cmd.h"
#include "controller/cli/gate_proof_cmd.h"
#include "controller/cli/history_cmd.h"
#include "controller/cli/sim.h"
#include "google/protobuf/util/json_util.h"
#include "workloads/format.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

constexpr char kUsage[] =
    "usage: blkbench [--controller ADDR] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  validate FILE                 check a matrix file and print its expanded cells\n"
    "  submit FILE [--watch]         submit a matrix as a new experiment\n"
    "  list                          list experiments, newest first\n"
    "  show EXP                      an experiment's cells and runs\n"
    "  watch EXP                     live progress: runs done, IOPS, bandwidth, p99, ETA\n"
    "  results EXP [--format table|csv|json|fio-json] [--samples]\n"
    "                                per-run results\n"
    "  cancel EXP                    cancel queued and running runs\n"
    "  agents                        connected agents and their devices\n"
    "  gate --baseline EXP --candidate EXP | --experiment EXP --axis KEY --baseline V\n"
    "       --candidate V [--metrics iops,bw,p99] [--min-effect 2%] [--junit FILE]\n"
    "                                regression verdicts; exit 0 ok, 1 regression, 2 unsure\n"
    "       [--auto-repeat N] [--html FILE] [--markdown FILE] [--json FILE]\n"
    "  history --metric p99 --cell bs=4k,iodepth=32 [--device-class C] [--format table|json]\n"
    "                                a cell's metric across experiments, with change points\n"
    "  gate-proof [--write docs/gating.md] [--trials N] [--quick]\n"
    "                                measure the gate's false alarms and power (no controller)\n"
    "  sim FILE [--db FILE] [--trace FILE] [--format table|csv|json|fio-json]\n"
    "                                run a matrix of sim: devices on the engine, no daemons\n"
    "\n"
    "The controller address comes from --controller, $BLKBENCH_CONTROLLER, or 127.0.0.1:7450\n"
    "(unix:/path for a Unix socket).\n";

bool ParseArgs(const std::vector<std::string>& in, Args* a, std::ostream& err) {
  static const std::map<std::string, bool> kTakesValue = {
      {"controller", true}, {"format", true},      {"db", true},           {"trace", true},
      {"baseline", true},   {"candidate", true},   {"experiment", true},   {"axis", true},
      {"metrics", true},    {"min-effect", true},  {"alpha", true},        {"junit", true},
      {"markdown", true},   {"json", true},        {"watch", false},       {"samples", false},
      {"help", false},      {"auto-repeat", true}, {"html", true},         {"method", true},
      {"metric", true},     {"cell", true},        {"device-class", true}, {"name", true},
      {"limit", true},      {"min-segment", true}, {"write", true},        {"trials", true},
      {"quick", false}};
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string& s = in[i];
    if (s.rfind("--", 0) != 0) {
      a->positional.push_back(s);
      continue;
    }
    std::string name = s.substr(2), value;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto known = kTakesValue.find(name);
    if (known == kTakesValue.end()) {
      err << "blkbench: unknown option '--" << name << "'\n";
      return false;
    }
    if (known->second && eq == std::string::npos) {
      if (i + 1 >= in.size()) {
        err << "blkbench: option '--" << name << "' needs a value\n";
        return false;
      }
      value = in[++i];
    }
    a->flags[name] = value;
  }
  if (a->flags.count("controller")) a->controller = a->flags["controller"];
  return true;
}

bool CheckFormat(const std::string& format, std::ostream& err) {
  if (format == "table" || format == "csv" || format == "json" || format == "fio-json") return true;
  err << "blkbench: --format: expected table, csv, json or fio-json, got '" << format << "'\n";
  return false;
}

bool ReadFile(const std::string& path, std::string* out, std::ostream& err) {
  std::ifstream in(path);
  if (!in) {
    err << "blkbench: cannot read '" << path << "'\n";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

bool ParseId(const Args& a, uint64_t* id, std::ostream& err) {
  if (a.positional.size() < 2 || !absl::SimpleAtoi(a.positional[1], id) || *id == 0) {
    err << "blkbench: " << (a.positional.empty() ? "" : a.positional[0])
        << ": expected an experiment id (a number from 'blkbench list')\n";
    return false;
  }
  return true;
}

uint32_t CountRuns(const v1::Experiment& e, bool (*pred)(v1::RunState)) {
  uint32_t n = 0;
  for (const auto& r : e.runs()) n += pred(r.state()) ? 1 : 0;
  return n;
}

double SampleIops(const v1::Sample& s) {
  if (s.interval_ns() == 0) return 0;
  return (s.io().read_ios() + s.io().write_ios()) * 1e9 / s.interval_ns();
}
double SampleBw(const v1::Sample& s) {
  if (s.interval_ns() == 0) return 0;
  return (s.io().read_bytes() + s.io().write_bytes()) * 1e9 / s.interval_ns();
}

// The live view of `watch`: one progress line and a row per running run.
std::string WatchView(const v1::Experiment& e) {
  const uint32_t total = e.runs_size();
  const uint32_t done = CountRuns(e, IsFinalRunState);
  const uint32_t active = CountRuns(e, IsActiveRunState);
  std::string out =
      absl::StrCat("experiment ", e.id(), " '", e.name(), "'  ", ExperimentStateName(e.state()),
                   "  ", ProgressBar(done, total, 30), " ", done, "/", total, " runs");
  int64_t run_ms = 0;
  if (!e.cells().empty()) {
    const auto& job = e.cells(0).job();
    run_ms = static_cast<int64_t>((job.runtime_ns() + job.ramp_time_ns()) / 1'000'000);
  }
  if (active > 0 && run_ms > 0) {
    const uint32_t queued = total - done - active;
    absl::StrAppend(&out, "  ETA ~", FormatDuration(run_ms * (queued + active) / active));
  }
  out += "\n";
  TextTable t({"run", "cell", "rep", "agent", "device", "state", "IOPS", "BW", "p99", "ETA"});
  for (const auto& r : e.runs()) {
    if (!IsActiveRunState(r.state())) continue;
    const v1::Sample& s = r.last_sample();
    std::string eta = "-";
    if (run_ms > 0 && r.has_last_sample()) {
      eta = FormatDuration(run_ms - static_cast<int64_t>(s.offset_ns() / 1'000'000));
    }
    // This interval's p99, from the sample's histogram delta.
    std::string p99 = "-";
    if (auto h = LatencyHistogram::FromProto(s.lat()); h.ok() && h->count() > 0) {
      p99 = FormatLatency(h->Percentile(99));
    }
    t.AddRow({absl::StrCat(r.id()), workloads::CellLabel(e.cells(r.cell_index())),
              absl::StrCat(r.repeat()), r.agent_id(), r.device_path(), RunStateName(r.state()),
              r.has_last_sample() ? FormatIops(SampleIops(s)) : "-",
              r.has_last_sample() ? FormatBandwidth(SampleBw(s)) : "-", p99, eta});
  }
  if (active > 0) out += t.ToString();
  return out;
}

int CmdValidate(const Args& a, std::ostream& out, std::ostream& err) {
  if (a.positional.size() != 2) {
    err << "usage: blkbench validate FILE\n";
    return 2;
  }
  auto m = workloads::ParseMatrixFile(a.positional[1]);
  if (!m.ok()) {
    err << m.status().message() << "\n";
    return 1;
  }
  out << workloads::FormatCells(*m);
  out << m->cells.size() << " cells x " << m->repeats
      << " repeats = " << m->cells.size() * m->repeats << " runs\n";
  return 0;
}

int CmdWatch(Client& c, uint64_t id, std::ostream& out, std::ostream& err);

int CmdSubmit(Client& c, const Args& a, std::ostream& out, std::ostream& err) {
  v1::SubmitExperimentRequest req;
  req.set_file_name(a.positional[1]);
  if (!ReadFile(a.positional[1], req.mutable_matrix_text(), err)) return 1;
  grpc::ClientContext ctx;
  c.Deadline(&ctx);
  v1::Experiment e;
  grpc::Status s = c.stub().SubmitExperiment(&ctx, req, &e);
  if (!s.ok()) return c.Fail(s);
  out << "experiment " << e.id() << " '" << e.name() << "' submitted: " << e.cells_size()
      << " cells x " << e.repeats() << " repeats = " << e.runs_size() << " runs\n";
  if (a.flags.count("watch")) return CmdWatch(c, e.id(), out, err);
  return 0;
}

int CmdList(Client& c, std::ostream& out) {
  grpc::ClientContext ctx;
  c.Deadline(&ctx);
  v1::ListExperimentsRequest req;
  v1::ListExperimentsResponse resp;
  grpc::Status s = c.stub().ListExperiments(&ctx, req, &resp);
  if (!s.ok()) return c.Fail(s);
  TextTable t({"id", "name", "state", "file", "created"});
  for (const auto& e : resp.experiments()) {
    char when[32] = "-";
    const time_t secs = e.created_unix_ms() / 1000;
    struct tm tm;
    if (localtime_r(&secs, &tm)) strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    t.AddRow({absl::StrCat(e.id()), e.name(), ExperimentStateName(e.state()), e.file_name(), when});
  }
  out << t.ToString();
  return 0;
}

int CmdShow(Client& c, uint64_t id, std::ostream& out) {
  grpc::ClientContext ctx;
  c.Deadline(&ctx);
  v1::GetExperimentRequest req;
  req.set_id(id);
  v1::Experiment e;
  grpc::Status s = c.stub().GetExperiment(&ctx, req, &e);
  if (!s.ok()) return c.Fail(s);
  out << "experiment " << e.id() << " '" << e.name() << "' from " << e.file_name() << ": "
      << ExperimentStateName(e.state()) << (e.error().empty() ? "" : " (" + e.error() + ")") << "\n"
      << e.cells_size() << " cells x " << e.repeats() << " repeats\n\n";
  TextTable t({"run", "cell", "axes", "rep", "attempt", "state", "agent", "device", "error"});
  for (const auto& r : e.runs()) {
    t.AddRow({absl::StrCat(r.id()), absl::StrCat(r.cell_index()),
              workloads::CellLabel(e.cells(r.cell_index())), absl::StrCat(r.repeat()),
              absl::StrCat(r.attempt()), RunStateName(r.state()), r.agent_id(), r.device_path(),
              r.error()});
  }
  out << t.ToString();
  return 0;
}

int CmdWatch(Client& c, uint64_t id, std::ostream& out, std::ostream& err) {
  grpc::ClientContext ctx;
  v1::WatchExperimentRequest req;
  req.set_id(id);
  auto reader = c.stub().WatchExperiment(&ctx, req);
  const bool tty = isatty(STDOUT_FILENO) && &out == &std::cout;
  v1::WatchEvent ev;
  std::string last;
  v1::ExperimentState final_state = v1::EXPERIMENT_STATE_UNSPECIFIED;
  while (reader->Read(&ev)) {
    std::string view = WatchView(ev.experiment());
    final_state = ev.experiment().state();
    if (view == last) continue;
    if (tty) out << "\033[H\033[2J";
    out << view << std::flush;
    last = view;
  }
  grpc::Status s = reader->Finish();
  if (!s.ok()) return c.Fail(s);
  (void)err;
  return final_state == v1::EXPERIMENT_DONE ? 0 : 1;
}

int CmdResults(Client& c, uint64_t id, const Args& a, std::ostream& out) {
  const std::string format = a.flags.count("format") ? a.flags.at("format") : "table";
  grpc::ClientContext ctx;
  c.Deadline(&ctx, 120);
  v1::GetResultsRequest req;
  req.set_experiment_id(id);
  req.set_with_samples(a.flags.count("samples") > 0);
  v1::GetResultsResponse resp;
  grpc::Status s = c.stub().GetResults(&ctx, req, &resp);
  if (!s.ok()) return c.Fail(s);
  PrintResults(resp, format, out);
  return 0;
}

int CmdCancel(Client& c, uint64_t id, std::ostream& out) {
  grpc::ClientContext ctx;
  c.Deadline(&ctx);
  v1::CancelExperimentRequest req;
  req.set_id(id);
  v1::Experiment e;
  grpc::Status s = c.stub().CancelExperiment(&ctx, req, &e);
  if (!s.ok()) return c.Fail(s);
  out << "experiment " << id << ": cancel requested (" << ExperimentStateName(e.state()) << ")\n";
  return 0;
}

int CmdAgents(Client& c, std::ostream& out) {
  grpc::ClientContext ctx;
  c.Deadline(&ctx);
  v1::ListAgentsResponse resp;
  grpc::Status s = c.stub().ListAgents(&ctx, v1::ListAgentsRequest(), &resp);
  if (!s.ok()) return c.Fail(s);
  TextTable t(
      {"agent", "state", "kernel", "cpus", "device", "class", "size", "scheduler", "running"});
  for (const auto& ag : resp.agents()) {
    for (int i = 0; i < std::max(1, ag.devices_size()); ++i) {
      std::vector<std::string> row = {ag.agent_id(), ag.connected() ? "connected" : "gone",
                                      ag.host().kernel_release(), absl::StrCat(ag.host().cpus())};
      if (i < ag.devices_size()) {
        const auto& d = ag.devices(i);
        row.insert(row.end(),
                   {d.path(), d.device_class(), absl::StrCat(d.size_bytes() >> 20, "MiB"),
                    d.queue().scheduler().empty() ? "-" : d.queue().scheduler()});
      } else {
        row.insert(row.end(), {"-", "-", "-", "-"});
      }
      row.push_back(i == 0 ? absl::StrCat(ag.running_run_ids_size()) : "");
      t.AddRow(row);
    }
  }
  out << t.ToString();
  return 0;
}

}  // namespace

int RunCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err,
           std::shared_ptr<grpc::Channel> channel) {
  Args a;
  if (!ParseArgs(argv, &a, err)) return 2;
  if (a.positional.empty() || a.flags.count("help")) {
    (a.flags.count("help") ? out : err) << kUsage;
    return a.flags.count("help") ? 0 : 2;
  }
  const std::string& cmd = a.positional[0];
  if (cmd == "validate") return CmdValidate(a, out, err);
  if (cmd == "sim") {
    if (a.positional.size() != 2) {
      err << "usage: blkbench sim FILE [--db FILE] [--trace FILE] [--format ...]\n";
      return 2;
    }
    const std::string format = a.flags.count("format") ? a.flags.at("format") : "table";
    if (!CheckFormat(format, err)) return 2;
    return RunSim(a.positional[1], a.flags.count("db") ? a.flags.at("db") : "",
                  a.flags.count("trace") ? a.flags.at("trace") : "", format, out, err);
  }
  if (cmd == "gate-proof") return RunGateProof(a, out, err);
  static const char* kKnown[] = {"submit", "list",   "show", "watch",  "results",
                                 "cancel", "agents", "gate", "history"};
  if (std::find(std::begin(kKnown), std::end(kKnown), cmd) == std::end(kKnown)) {
    err << "blkbench: unknown command '" << cmd << "'\n\n" << kUsage;
    return 2;
  }
  // Check everything that needs no controller first: bad input never dials.
  uint64_t id = 0;
  const bool needs_id =
      cmd != "submit" && cmd != "list" && cmd != "agents" && cmd != "gate" && cmd != "history";
  if (cmd == "gate" && !GateArgsOk(a, err)) return 2;
  if (cmd == "history" && !HistoryArgsOk(a, err)) return 2;
  if (needs_id && !ParseId(a, &id, err)) return 2;
  if (cmd == "submit") {
    if (a.positional.size() != 2) {
      err << "usage: blkbench submit FILE [--watch]\n";
      return 2;
    }
    auto m = workloads::ParseMatrixFile(a.positional[1]);
    if (!m.ok()) {
      err << m.status().message() << "\n";
      return 1;
    }
  }
  if (cmd == "results" && a.flags.count("format")) {
    const std::string& f = a.flags.at("format");
    if (!CheckFormat(f, err)) return 2;
  }

  std::string address = a.controller;
  if (address.empty() && getenv("BLKBENCH_CONTROLLER")) address = getenv("BLKBENCH_CONTROLLER");
  if (address.empty()) address = kDefaultController;
  if (!channel) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(3))) {
      err << "blkbench: cannot reach the controller at " << address
          << "\n  (is blkbench-controller running? set --controller or BLKBENCH_CONTROLLER)\n";
      return 3;
    }
  }
  Client c(channel, address, err);
  if (cmd == "submit") return CmdSubmit(c, a, out, err);
  if (cmd == "list") return CmdList(c, out);
  if (cmd == "agents") return CmdAgents(c, out);
  if (cmd == "gate") return CmdGate(c, a, out, err);
  if (cmd == "history") return CmdHistory(c, a, out, err);
  if (cmd == "show") return CmdShow(c, id, out);
  if (cmd == "watch") return CmdWatch(c, id, out, err);
  if (cmd == "results") return CmdResults(c, id, a, out);
  return CmdCancel(c, id, out);
}

}  // namespace blkbench
