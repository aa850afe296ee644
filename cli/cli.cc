// The `blkbench` command line; see cli.h.
#include "cli/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "blkbench/v1/controller.grpc.pb.h"
#include "cli/bisect_cmd.h"
#include "cli/calibrate_cmd.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/fio_logs.h"
#include "cli/format.h"
#include "cli/gate_cmd.h"
#include "cli/gate_proof_cmd.h"
#include "cli/history_cmd.h"
#include "cli/import_cmd.h"
#include "cli/local_matrix.h"
#include "cli/report.h"
#include "cli/run_cmd.h"
#include "cli/sim.h"
#include "cli/tls_cmd.h"
#include "cli/watch_cmd.h"
#include "common/build_info.h"
#include "common/histogram.h"
#include "common/http/http_server.h"
#include "common/placement.h"
#include "common/states.h"
#include "controller/server.h"
#include "controller/store/store_factory.h"
#include "workloads/format.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

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

// Cells of `e` that no connected agent can take, grouped by the reason.
std::map<std::string, int> Unplaceable(const v1::Experiment& e,
                                       const std::vector<v1::AgentInfo>& agents) {
  std::map<std::string, int> reasons;
  for (const v1::CellSpec& cell : e.cells()) {
    const std::string why = UnplaceableReason(cell, agents);
    if (!why.empty()) ++reasons[why];
  }
  return reasons;
}

absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents(Client& c) {
  grpc::ClientContext ctx;
  c.Deadline(&ctx);
  v1::ListAgentsResponse resp;
  grpc::Status s = c.stub().ListAgents(&ctx, v1::ListAgentsRequest(), &resp);
  if (!s.ok()) return absl::UnavailableError(s.error_message());
  return std::vector<v1::AgentInfo>(resp.agents().begin(), resp.agents().end());
}

std::string Flag(const Args& a, const std::string& name, const std::string& fallback) {
  auto it = a.flags.find(name);
  return it == a.flags.end() ? fallback : it->second;
}

std::string IsoTime(int64_t unix_ms) {
  if (unix_ms <= 0) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(unix_ms), absl::UTCTimeZone());
}

// The check of every command that takes a matrix: reads the file once and parses it
// once, keeping both in `a` for the run. A bad matrix is the command failing (1), not a
// usage error: nothing is sent.
int CheckMatrix(Args& a, std::ostream& err) {
  absl::StatusOr<std::string> text = workloads::ReadMatrixFile(a.positional[1]);
  if (!text.ok()) {
    err << text.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<workloads::Matrix> m = ParseLocalMatrix(*text, a.positional[1]);
  if (!m.ok()) {
    err << m.status().message() << "\n";
    return 1;
  }
  // Warnings (a patch flag outside its scheduler) for validate, submit and sim alike.
  for (const std::string& warning : m->warnings) err << warning << "\n";
  a.matrix_text = std::move(*text);
  a.matrix = std::make_shared<const workloads::Matrix>(std::move(*m));
  return 0;
}

// REQUIRES: CheckMatrix passed (it is the command's check).
int CmdValidate(const Args& a, Client*, std::ostream& out, std::ostream&) {
  const workloads::Matrix& m = *a.matrix;
  out << workloads::FormatCells(m);
  out << m.cells.size() << " cells x " << m.repeats << " repeats = " << m.cells.size() * m.repeats
      << " runs\n";
  return 0;
}

// REQUIRES: CheckMatrix passed. Sends the text it read: the controller parses it again
// on its side (it never trusts a client's parse), the CLI does not.
int CmdSubmit(const Args& a, Client* c, std::ostream& out, std::ostream& err) {
  const v1::SubmitExperimentRequest req = SubmitRequest(a.positional[1], a.matrix_text, *a.matrix);
  grpc::ClientContext ctx;
  c->Deadline(&ctx);
  v1::Experiment e;
  grpc::Status s = c->stub().SubmitExperiment(&ctx, req, &e);
  if (!s.ok()) return c->Fail(s);
  if (a.flags.count("quiet")) {
    out << e.id() << "\n";
  } else {
    out << "experiment " << e.id() << " '" << e.name() << "' submitted: " << e.cells_size()
        << " cells x " << e.repeats() << " repeats = " << e.runs_size() << " runs\n";
  }
  // Say at once when nothing connected can run some cells (they wait, not fail).
  if (auto agents = ListAgents(*c); agents.ok()) {
    for (const auto& [why, cells] : Unplaceable(e, *agents)) {
      err << "blkbench submit: " << why << "; " << cells << (cells == 1 ? " cell" : " cells")
          << " will wait in the queue\n";
    }
  }
  if (a.flags.count("watch"))
    return WatchExperiment(*c, e.id(), Flag(a, "progress", "auto"), out, err);
  return 0;
}

int CmdList(const Args& a, Client* c, std::ostream& out, std::ostream&) {
  grpc::ClientContext ctx;
  c->Deadline(&ctx);
  v1::ListExperimentsRequest req;
  v1::ListExperimentsResponse resp;
  grpc::Status s = c->stub().ListExperiments(&ctx, req, &resp);
  if (!s.ok()) return c->Fail(s);
  Records t({"id", "name", "state", "file", "created", "finished", "error"});
  for (const auto& e : resp.experiments()) {
    t.Add({NumberValue(static_cast<double>(e.id())), TextValue(e.name()),
           TextValue(ExperimentStateName(e.state())), TextValue(e.file_name()),
           TextValue(IsoTime(e.created_unix_ms())), TextValue(IsoTime(e.finished_unix_ms())),
           TextValue(e.error())});
  }
  out << t.Render(Flag(a, "format", "table"));
  return 0;
}

int CmdShow(const Args& a, Client* c, std::ostream& out, std::ostream& err) {
  uint64_t id = 0;
  if (!ParseId(a, &id, err)) return 2;
  grpc::ClientContext ctx;
  c->Deadline(&ctx);
  v1::GetExperimentRequest req;
  req.set_id(id);
  v1::Experiment e;
  grpc::Status s = c->stub().GetExperiment(&ctx, req, &e);
  if (!s.ok()) return c->Fail(s);
  // Why a queued run waits: nothing can take it, or only a busy device can.
  std::map<uint32_t, std::string> waiting;  // by cell index
  if (CountRuns(e, [](v1::RunState st) { return st == v1::RUN_QUEUED; }) > 0) {
    auto agents = ListAgents(*c);
    for (const v1::CellSpec& cell : e.cells()) {
      std::string why = agents.ok() ? UnplaceableReason(cell, *agents) : "";
      waiting[cell.index()] = why.empty() ? "waiting for a free device" : why;
    }
  }
  Records t({"run", "cell", "axes", "rep", "attempt", "state", "agent", "device", "error"});
  for (const auto& r : e.runs()) {
    std::string note = r.error();
    if (r.state() == v1::RUN_QUEUED && note.empty()) note = waiting[r.cell_index()];
    t.Add({NumberValue(static_cast<double>(r.id())), NumberValue(r.cell_index()),
           TextValue(workloads::CellLabel(e.cells(r.cell_index()))), NumberValue(r.repeat()),
           NumberValue(r.attempt()), TextValue(RunStateName(r.state())), TextValue(r.agent_id()),
           TextValue(r.device_path()), TextValue(note)});
  }
  const std::string format = Flag(a, "format", "table");
  if (format == "json") {
    std::string runs = t.Render("json");
    out << "{\"id\": " << e.id() << ", \"name\": " << JsonQuote(e.name())
        << ", \"state\": " << JsonQuote(ExperimentStateName(e.state()))
        << ", \"file\": " << JsonQuote(e.file_name()) << ", \"error\": " << JsonQuote(e.error())
        << ", \"created\": " << JsonQuote(IsoTime(e.created_unix_ms()))
        << ", \"finished\": " << JsonQuote(IsoTime(e.finished_unix_ms()))
        << ", \"cells\": " << e.cells_size() << ", \"repeats\": " << e.repeats()
        << ", \"runs\": " << runs.substr(0, runs.size() - 1) << "}\n";
    return 0;
  }
  out << "experiment " << e.id() << " '" << e.name() << "' from " << e.file_name() << ": "
      << ExperimentStateName(e.state()) << (e.error().empty() ? "" : " (" + e.error() + ")") << "\n"
      << e.cells_size() << " cells x " << e.repeats() << " repeats\n\n"
      << t.Render("table");
  return 0;
}

int CmdWatch(const Args& a, Client* c, std::ostream& out, std::ostream& err) {
  uint64_t id = 0;
  if (!ParseId(a, &id, err)) return 2;
  return WatchExperiment(*c, id, Flag(a, "progress", "auto"), out, err);
}

// The experiment named by the command's EXP argument, with its samples if asked: 0, or
// the exit code (2 for a bad id, the RPC's failure otherwise).
int FetchResults(const Args& a, Client* c, bool with_samples, v1::GetResultsResponse* resp,
                 std::ostream& err) {
  uint64_t id = 0;
  if (!ParseId(a, &id, err)) return 2;
  grpc::ClientContext ctx;
  c->Deadline(&ctx, 120);
  v1::GetResultsRequest req;
  req.set_experiment_id(id);
  req.set_with_samples(with_samples);
  grpc::Status s = c->stub().GetResults(&ctx, req, resp);
  return s.ok() ? 0 : c->Fail(s);
}

int CmdResults(const Args& a, Client* c, std::ostream& out, std::ostream& err) {
  const std::string format = Flag(a, "format", "table");
  const bool fio = format == "fio-json" || format == "fio-json+";
  if (!fio && (a.flags.count("out") || a.flags.count("per") || a.flags.count("group_reporting"))) {
    err << "blkbench results: --out, --per and --group_reporting apply to --format fio-json and "
           "fio-json+ only\n";
    return 2;
  }
  // fio's bw_*/iops_* statistics and log files come from the interval samples.
  const std::string logs = Flag(a, "logs", "");
  v1::GetResultsResponse resp;
  if (int rc = FetchResults(a, c, a.flags.count("samples") > 0 || fio || !logs.empty(), &resp, err);
      rc != 0) {
    return rc;
  }
  if (!logs.empty() && WriteFioLogsFlag(resp, logs, "blkbench results", err) != 0) return 1;
  if (fio && !a.flags.count("samples")) {
    return PrintFioJson(resp, format, Flag(a, "per", "cell"), Flag(a, "out", ""), out, err,
                        a.flags.count("group_reporting") > 0);
  }
  if (a.flags.count("samples")) {
    out << SampleRecords(resp).Render(format);
  } else {
    PrintResults(resp, format, out);
  }
  return 0;
}

int CmdReport(const Args& a, Client* c, std::ostream& out, std::ostream& err) {
  v1::GetResultsResponse resp;  // with samples: the per-interval plots
  if (int rc = FetchResults(a, c, /*with_samples=*/true, &resp, err); rc != 0) return rc;
  const std::string html = RenderExperimentReport(resp);
  const std::string path = Flag(a, "html", "");
  if (path.empty()) {
    out << html;
    return 0;
  }
  std::ofstream file(path);
  file << html;
  file.close();
  if (!file) {
    err << "blkbench report: cannot write '" << path << "'\n";
    return 1;
  }
  out << path << "\n";
  return 0;
}

int CmdCancel(const Args& a, Client* c, std::ostream& out, std::ostream& err) {
  uint64_t id = 0;
  if (!ParseId(a, &id, err)) return 2;
  grpc::ClientContext ctx;
  c->Deadline(&ctx);
  v1::CancelExperimentRequest req;
  req.set_id(id);
  v1::Experiment e;
  grpc::Status s = c->stub().CancelExperiment(&ctx, req, &e);
  if (!s.ok()) return c->Fail(s);
  out << "experiment " << id << ": cancel requested (" << ExperimentStateName(e.state()) << ")\n";
  return 0;
}

int CmdAgents(const Args& a, Client* c, std::ostream& out, std::ostream& err) {
  grpc::ClientContext ctx;
  c->Deadline(&ctx);
  v1::ListAgentsResponse resp;
  grpc::Status s = c->stub().ListAgents(&ctx, v1::ListAgentsRequest(), &resp);
  if (!s.ok()) return c->Fail(s);
  Records t({"agent", "state", "kernel", "cpus", "device", "class", "size_bytes", "scheduler",
             "running", "refused_duplicates"});
  for (const auto& ag : resp.agents()) {
    if (ag.refused_duplicates() > 0) {
      err << "warning: agent " << ag.agent_id() << ": " << ag.refused_duplicates()
          << " registration(s) refused from another process with the same agent_id (last from "
          << ag.last_refused_peer() << "); give each agent its own agent_id\n";
    }
    for (const v1::DeviceNotOffered& n : ag.not_offered()) {
      err << "warning: agent " << ag.agent_id() << " did not offer " << n.path() << ": "
          << n.reason() << "\n";
    }
    for (int i = 0; i < std::max(1, ag.devices_size()); ++i) {
      std::vector<ResultValue> row = {
          TextValue(ag.agent_id()), TextValue(ag.connected() ? "connected" : "gone"),
          TextValue(i < ag.devices_size() ? DeviceKernelRelease(ag, ag.devices(i))
                                          : ag.host().kernel_release()),
          NumberValue(ag.host().cpus())};
      if (i < ag.devices_size()) {
        const auto& d = ag.devices(i);
        row.insert(row.end(), {TextValue(d.path()), TextValue(d.device_class()),
                               NumberValue(static_cast<double>(d.size_bytes())),
                               TextValue(d.queue().scheduler())});
      } else {
        row.insert(row.end(), {{}, {}, {}, {}});
      }
      row.push_back(NumberValue(ag.running_run_ids_size()));
      row.push_back(NumberValue(ag.refused_duplicates()));
      t.Add(row);
    }
  }
  out << t.Render(Flag(a, "format", "table"));
  return 0;
}

// `--logs DIR` of sim and run: fio's log files written once every run has run; `rc`
// becomes 1 when one could not be written.
std::function<void(const v1::GetResultsResponse&)> FioLogsOnResults(const Args& a,
                                                                    const std::string& who,
                                                                    std::ostream& err, int& rc) {
  const std::string dir = Flag(a, "logs", "");
  if (dir.empty()) return nullptr;
  return [dir, who, &err, &rc](const v1::GetResultsResponse& resp) {
    rc = WriteFioLogsFlag(resp, dir, who, err);
  };
}

int CmdSim(const Args& a, Client*, std::ostream& out, std::ostream& err) {
  int logs_rc = 0;
  const int rc = RunSim({.path = a.positional[1],
                         .db_path = Flag(a, "db", ""),
                         .trace_path = Flag(a, "trace", ""),
                         .format = Flag(a, "format", "table"),
                         .report_path = Flag(a, "report", ""),
                         .quiet = a.flags.count("quiet") > 0,
                         .matrix = a.matrix,
                         .matrix_text = a.matrix_text,
                         .on_results = FioLogsOnResults(a, "blkbench sim", err, logs_rc)},
                        out, err);
  return rc != 0 ? rc : logs_rc;
}

int CmdRun(const Args& a, Client*, std::ostream& out, std::ostream& err) {
  auto all = [&a](const char* flag) {
    auto it = a.values.find(flag);
    return it == a.values.end() ? std::vector<std::string>{} : it->second;
  };
  int logs_rc = 0;
  const int rc = RunOnDevices({.path = a.positional[1],
                               .devices = all("device"),
                               .vm = {.vms = all("vm"),
                                      .kernels = all("kernel"),
                                      .vcpus = Flag(a, "vcpus", ""),
                                      .memory = Flag(a, "memory", "")},
                               .db_path = Flag(a, "db", kDefaultRunDb),
                               .state_dir = Flag(a, "state-dir", kDefaultRunStateDir),
                               .format = Flag(a, "format", "table"),
                               .report_path = Flag(a, "report", ""),
                               .trace_path = Flag(a, "trace", ""),
                               .quiet = a.flags.count("quiet") > 0,
                               .matrix = a.matrix,
                               .matrix_text = a.matrix_text,
                               .on_results = FioLogsOnResults(a, "blkbench run", err, logs_rc)},
                              out, err);
  return rc != 0 ? rc : logs_rc;
}

int CmdCalibrate(const Args& a, Client*, std::ostream& out, std::ostream& err) {
  uint32_t runtime_ms = kDefaultCalibrateRuntimeMs;
  if (a.flags.count("runtime_ms") && !absl::SimpleAtoi(a.flags.at("runtime_ms"), &runtime_ms)) {
    err << "blkbench calibrate: --runtime_ms: expected a number of milliseconds, got '"
        << a.flags.at("runtime_ms") << "'\n";
    return 2;
  }
  return RunCalibrate({.device = a.positional[1],
                       .out_path = Flag(a, "out", ""),
                       .runtime_ms = runtime_ms,
                       .state_dir = Flag(a, "state-dir", kDefaultRunStateDir),
                       .db_path = Flag(a, "db", ""),
                       .quiet = a.flags.count("quiet") > 0},
                      out, err);
}

const std::vector<CommandSpec>& Commands();

int CmdCompletion(const Args& a, Client*, std::ostream& out, std::ostream&) {
  out << (a.positional[1] == "bash" ? BashCompletion(Commands()) : ZshCompletion(Commands()));
  return 0;
}

int CmdMan(const Args&, Client*, std::ostream& out, std::ostream&) {
  out << ManPage(Commands(), absl::StrCat(BuildVersion(), " (", BuildRevision(), ")"));
  return 0;
}

int CmdHelp(const Args& a, Client*, std::ostream& out, std::ostream& err) {
  if (a.positional.size() < 2) {
    out << GlobalUsage(Commands());
    return 0;
  }
  const CommandSpec* c = FindCommand(Commands(), a.positional[1]);
  if (c == nullptr) {
    err << "blkbench help: unknown command '" << a.positional[1] << "'\n";
    return 2;
  }
  out << CommandUsage(*c);
  return 0;
}

int CheckId(const Args& a, std::ostream& err) {
  uint64_t id = 0;
  return ParseId(a, &id, err) ? 0 : 2;
}

int CheckGate(const Args& a, std::ostream& err) {
  return GateArgsOk(a, err) ? 0 : kGateCouldNotRun;
}

int CheckHistory(const Args& a, std::ostream& err) { return HistoryArgsOk(a, err) ? 0 : 2; }

const FlagSpec kFormatTable = {"format", "FORMAT", "output format", {"table", "json", "csv"}};
// Commands that read experiments take them from a local store instead of a controller.
// fio's log files (docs/fio-logs.md).
const FlagSpec kLogsFlag = {"logs", "DIR",
                            "write fio's log files (write_bw_log, ...) in DIR, a folder per run"};
const FlagSpec kLocalDb = {"db", "FILE",
                           "read a local store (what blkbench run or sim --db wrote) instead of "
                           "asking the controller"};

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec> kCommands = {
      {"validate",
       {"FILE"},
       "check a matrix file and print its expanded cells",
       "Reports every mistake with file, line, column and key, and needs no controller.",
       {},
       false,
       CheckMatrix,
       CmdValidate},
      {"submit",
       {"FILE"},
       "submit a matrix as a new experiment",
       "Validates the matrix first (nothing is sent when it has errors). Warns at once, on "
       "stderr, about cells that no connected agent can run: they wait in the queue.",
       {{"watch", "", "follow the experiment until it ends (exit 0 only if it ends done)"},
        {"quiet", "", "print only the experiment id", {}, 'q'},
        {"progress",
         "MODE",
         "with --watch: live frames, plain lines, or none (auto: live on a "
         "terminal)",
         {"auto", "live", "plain", "none"}}},
       true,
       CheckMatrix,
       CmdSubmit},
      {"list",
       {},
       "list experiments, newest first",
       "",
       {kFormatTable, kLocalDb},
       true,
       nullptr,
       CmdList},
      {"show",
       {"EXP"},
       "an experiment's cells and runs, and why queued runs wait",
       "",
       {{"format", "FORMAT", "output format", {"table", "json"}}, kLocalDb},
       true,
       CheckId,
       CmdShow},
      {"watch",
       {"EXP"},
       "follow an experiment: runs done, IOPS, bandwidth, p99, ETA",
       "On a terminal the view is redrawn in place; elsewhere (logs, CI) it prints one line "
       "per run state change and a summary line every 10 s. The ETA is wall time, from the "
       "rate at which runs end. Exit 0 when the experiment ends done, 1 otherwise.",
       {{"progress",
         "MODE",
         "live frames, plain lines, or none (auto: live on a terminal)",
         {"auto", "live", "plain", "none"}}},
       true,
       CheckId,
       CmdWatch},
      {"results",
       {"EXP"},
       "per-run results",
       "json and csv use the schema of the controller's /api/v1/results (docs/metrics.md): "
       "numbers as numbers in base units, one CSV column per axis (axes.KEY) and per engine "
       "internal (internals.KEY). fio-json is fio 3.33's --output-format=json (fio-json+ adds "
       "clat_ns.bins, as json+), one fio job per cell (per named job of a cell with jobs:); "
       "docs/fio-json.md.",
       {{"format", "FORMAT", "output format", {"table", "csv", "json", "fio-json", "fio-json+"}},
        {"samples", "", "one row per stored sample instead of per run (table, csv, json)"},
        {"per",
         "UNIT",
         "fio-json: one fio job per cell (repeats merged) or per run",
         {"cell", "run"}},
        {"out", "DIR", "fio-json: one fio document per cell (or run) in DIR, not stdout"},
        {"group_reporting", "",
         "fio-json: a cell's named jobs (jobs:) as one fio job, not one per named job"},
        kLogsFlag,
        kLocalDb},
       true,
       CheckId,
       CmdResults},
      {"report",
       {"EXP"},
       "an experiment as one self-contained HTML page with plots",
       "IOPS against each axis, latency percentiles and CDFs from the merged histograms, "
       "per-interval IOPS, per-cgroup shares, and the host, kernel, device and queue "
       "settings of every run; no external resources (docs/report.md).",
       {{"html", "FILE", "write the page to FILE instead of stdout"}, kLocalDb},
       true,
       CheckId,
       CmdReport},
      {"cancel",
       {"EXP"},
       "cancel an experiment's queued and running runs",
       "",
       {},
       true,
       CheckId,
       CmdCancel},
      {"agents", {}, "agents and their devices", "", {kFormatTable}, true, nullptr, CmdAgents},
      {"tls",
       {"ca|cert|token", "create|revoke"},
       "make the lab PKI for mutual TLS: a CA, then controller, agent and CLI certificates",
       "blkbench tls ca create --dir D writes ca.pem and ca.key; blkbench tls cert create --dir D "
       "with --controller HOST[,HOST...] (controller.pem: localhost and 127.0.0.1 always; "
       "--server [--dns H,...] is the same), --agent ID [--dns H,...] (agent-ID.pem; names make "
       "it serve HTTPS /metrics too), or --cli NAME --role read|submit|admin (cli-NAME.pem). "
       "Keys are ECDSA P-256, written 0600, never overwritten. blkbench tls cert revoke --dir D "
       "--cert FILE.pem or --serial HEX adds the serial to D/revoked.txt, which the controller "
       "re-reads on change and refuses on every call. blkbench tls token create --dir D writes "
       "D/metrics.token (0640), the bearer token of HTTPS metrics endpoints. See "
       "docs/security.md.",
       {{"dir", "DIR", "the PKI directory"},
        {"controller", "HOSTS",
         "the controller's certificate for these names/IPs (comma-separated)"},
        {"server", "", "the controller's certificate (names from --dns)"},
        {"dns", "NAMES", "extra DNS names or IPs of the controller or agent (comma-separated)"},
        {"agent", "ID", "an agent's certificate (its agent_id)"},
        {"cli", "NAME", "a CLI user's certificate"},
        {"role", "ROLE", "the CLI user's role", {"read", "submit", "admin"}},
        {"cert", "FILE", "revoke: the certificate to revoke"},
        {"serial", "HEX", "revoke: the serial to revoke (openssl x509 -noout -serial)"}},
       false,
       CheckTlsArgs,
       CmdTls},
      {"gate",
       {},
       "regression verdicts between two experiments or two values of an axis",
       "blkbench gate --baseline EXP --candidate EXP, or --experiment EXP --axis KEY "
       "--baseline VALUE --candidate VALUE, or, in one CI step, --submit FILE --axis KEY "
       "--baseline VALUE --candidate VALUE (submits, says at once when no agent offers a "
       "kernel, waits up to --timeout, gates). Exit 0 pass, 1 regression, 2 inconclusive, 3 "
       "could not run (bad arguments, controller unreachable, experiment missing, timeout).",
       {{"baseline", "EXP|VALUE", "baseline experiment, or axis value with --axis"},
        {"candidate", "EXP|VALUE", "candidate experiment, or axis value with --axis"},
        {"experiment", "EXP",
         "with --axis: the experiment holding both values (with --db: default the newest)"},
        {"axis", "KEY", "compare two values of this axis of one experiment"},
        {"metrics", "LIST", "metrics to gate on (default iops,bw,p99)"},
        {"min-effect", "FRACTION", "smallest change that counts (default 2%)"},
        {"alpha", "P", "false-alarm level (default 0.02)"},
        {"method", "METHOD", "the test", {"robust-welch", "moderated-t", "rank-sum"}},
        {"auto-repeat", "N", "up to N more repeats of inconclusive cells, then decide again"},
        {"submit", "FILE", "submit this matrix, wait for it, and gate --axis within it"},
        {"wait", "", "wait for the experiments to end before comparing"},
        {"timeout", "DURATION", "give up waiting after this long, exit 3 (default 24h)"},
        {"format", "FORMAT", "report on stdout", {"text", "markdown", "json"}},
        {"junit", "FILE", "also write JUnit XML"},
        {"markdown", "FILE", "also write Markdown"},
        {"json", "FILE", "also write JSON"},
        {"html", "FILE", "also write an HTML report"},
        kLocalDb},
       true,
       CheckGate,
       [](const Args& a, Client* c, std::ostream& out, std::ostream& err) {
         return CmdGate(*c, a, out, err);
       },
       kGateCouldNotRun},
      {"history",
       {},
       "a cell's metric across experiments, with change points",
       "",
       {{"metric", "METRIC", "iops, bw, mean_lat or pNN (e.g. p99)"},
        {"cell", "KEY=VALUE,...", "the cell, e.g. bs=4k,iodepth=32"},
        {"device-class", "CLASS", "only runs on this device class"},
        {"name", "NAME", "only experiments with this name"},
        {"limit", "N", "at most N experiments"},
        {"min-segment", "N", "shortest segment between change points"},
        {"format", "FORMAT", "output format", {"table", "json"}},
        kLocalDb},
       true,
       CheckHistory,
       [](const Args& a, Client* c, std::ostream& out, std::ostream& err) {
         return CmdHistory(*c, a, out, err);
       }},
      {"gate-proof",
       {},
       "measure the gate's false alarms and power (no controller)",
       "",
       {{"write", "FILE", "replace the gate-proof section of FILE (docs/gating.md)"},
        {"trials", "N", "simulated experiments per synthetic entry (default 500)"},
        {"quick", "", "fewer trials and smaller engine pools (for tests)"},
        {"outliers", "SHARExFACTOR", "noise model: share of repeats scaled by FACTOR (0.1x0.7)"},
        {"cv-ratio", "R", "noise model: candidate CV R x the baseline's"},
        {"cv-spread", "S", "noise model: cell CVs log-uniform from cv/S to cv*S"},
        {"tails", "DF", "noise model: Student t with DF degrees of freedom (1, 2 or > 2)"},
        {"drift", "D", "noise model: relative drift from first to last repeat (0.04)"},
        {"fitted", "", "noise model: the one fitted from loop-device runs"},
        {"fit", "CSV", "fit a noise model from cell,repeat,run,iops rows; print it"},
        {"repeats", "N", "model report: repeats per side (default 5)"},
        {"cv", "CV", "model report: typical CV (default 0.02)"},
        {"change", "C", "model report: true change for power (default -0.05)"},
        {"auto-repeat", "N", "model report: also --auto-repeat N (extra repeats per side)"},
        {"method",
         "METHOD",
         "model report: the test",
         {"robust-welch", "moderated-t", "rank-sum"}}},
       false,
       nullptr,
       [](const Args& a, Client*, std::ostream& out, std::ostream& err) {
         return RunGateProof(a, out, err);
       }},
      {"import",
       {"[FILE]", "[FIO-ARGS...]"},
       "turn a fio job file or a fio command line into a matrix",
       "Writes a matrix that validates to stdout: fio's [global] and per-job inheritance, "
       "options before the first --name as global, stonewall phases that differ in one "
       "option as that option's axis, every option it cannot carry over as a comment with "
       "the reason and on stderr with its place in the fio input. When something lost "
       "changes the workload (an ioengine, access pattern or size mix blkbench lacks, jobs "
       "it cannot run) it refuses (exit 1) unless --lossy. Give a .fio FILE, or the command "
       "line after '--' (with or without the leading 'fio'). What to confirm (a device "
       "class guessed from filename=) goes to stderr.",
       {{"device-class", "CLASS", "target.device_class (default: from filename=)"},
        {"kernel", "GLOB", "target.kernel, e.g. 6.* or sim:6.16"},
        {"lossy", "",
         "write the matrix although it loses what changes the workload (listed at its top)"},
        {"output", "FILE", "write the matrix to FILE (errors then name it), not stdout", {}, 'o'}},
       false,
       nullptr,
       CmdImport},
      {"sim",
       {"FILE"},
       "run a matrix of sim: devices on the engine, no daemons",
       "Progress lines go to stderr; stdout holds only the results in the chosen format.",
       {{"db", "FILE|URI",
         "also store the experiment in this SQLite file or postgresql:// database"},
        {"trace", "FILE", "write every run's dispatch/complete events, blkparse-style"},
        {"report", "FILE", "also write the experiment's HTML report (as blkbench report)"},
        {"format", "FORMAT", "output format", {"table", "csv", "json", "fio-json", "fio-json+"}},
        kLogsFlag,
        {"quiet", "", "no progress lines", {}, 'q'}},
       false,
       CheckMatrix,
       CmdSim},
      {"run",
       {"FILE"},
       "run a matrix on this machine's own devices or in qemu guests, no daemons",
       "The devices given with --device are the only ones it may touch (PATH=CLASS overrides "
       "the class detected from sysfs). Before anything is written each is checked as an "
       "agent checks an allowlisted device (not mounted, no partitions, holders, swap or "
       "signature; held O_EXCL during each run; its identity re-checked), and every cell "
       "must match a device's class and the host's kernel. Queue settings and cgroups are "
       "journaled in --state-dir and restored after each run, on Ctrl-C, and at the next "
       "start after a crash. Results go to --db, which results, report, gate and history "
       "read with --db. Needs root. Progress on stderr, results on stdout (docs/run.md). "
       "With --vm and --kernel instead of --device, it boots one qemu guest per --kernel "
       "with every --vm device, runs each cell in them (on every kernel, as a kernel axis, "
       "when there are several) and powers them off at the end, Ctrl-C included "
       "(docs/vm-hosts.md).",
       {{"device", "PATH", "a device (or file) it may use, PATH[=CLASS]; repeat for more"},
        {"vm", "KIND[:SPEC]",
         "a guest device: null_blk, nvme, hdd or virtio; SPEC size=1g,queues=N,class=C "
         "(null_blk: none); repeat for more"},
        {"kernel", "SPEC",
         "a guest's kernel, deb:GLOB or PATH/bzImage[:MODULES_DIR]; repeat to compare kernels"},
        {"vcpus", "N", "each guest's vCPUs (default 2)"},
        {"memory", "SIZE", "each guest's memory (default 2g)"},
        {"db", "FILE", "the local store to write (default ./blkbench.db; or a postgresql:// URI)"},
        {"state-dir", "DIR", "journal of original settings (default /var/lib/blkbench-run)"},
        {"trace", "FILE",
         "write every run's Q/G/I/D/C block events, blkparse-style (implies trace: 1)"},
        {"report", "FILE", "also write the experiment's HTML report (as blkbench report)"},
        {"format", "FORMAT", "output format", {"table", "csv", "json", "fio-json", "fio-json+"}},
        kLogsFlag,
        {"quiet", "", "no progress lines", {}, 'q'}},
       false,
       CheckMatrix,
       CmdRun},
      {"bisect",
       {"FILE"},
       "find the first kernel of a list where the matrix's metric regresses",
       "Given kernels in order, the first good and the last bad (--kernels, or --git with "
       "--good, --bad and a --build hook that prints the kernel a revision builds), runs the "
       "matrix on both ends, then on midpoints, and classifies each with the gate's "
       "statistics against both ends: like good, like bad, or undecided (another round of "
       "runs, up to --max-rounds, then inconclusive). sim: kernels run on the engine; deb: "
       "packages and PATH/bzImage[:MODULES_DIR] in qemu guests with the --vm devices. Every "
       "step is an experiment in --db; a stopped bisect reuses the steps it finished. Exit "
       "0 first bad kernel found, 1 no regression between the ends, 2 inconclusive, 3 could "
       "not run (docs/bisect.md).",
       {{"kernels", "K1,...,Kn", "the kernels in order: sim:..., deb:GLOB or PATH/bzImage"},
        {"git", "DIR", "bisect the revisions of this git tree from --good to --bad"},
        {"good", "REV", "with --git: the last revision known good"},
        {"bad", "REV", "with --git: the first revision known bad"},
        {"build", "HOOK", "with --git: run as HOOK REV in DIR; its last line is the kernel"},
        {"metric", "METRIC", "the metric bisected (default iops; bw, mean_lat, p99, ...)"},
        {"max-rounds", "N", "rounds of runs per kernel before it is inconclusive (default 3)"},
        {"vm", "KIND[:SPEC]", "a guest device, as blkbench run --vm; repeat for more"},
        {"vcpus", "N", "each guest's vCPUs (default 2)"},
        {"memory", "SIZE", "each guest's memory (default 2g)"},
        {"db", "FILE", "the store of the steps (default ./blkbench.db; or a postgresql:// URI)"},
        {"state-dir", "DIR", "journal of original settings (default /var/lib/blkbench-run)"},
        {"format", "FORMAT", "output format", {"text", "markdown", "json"}},
        {"markdown", "FILE", "also write the summary as Markdown"},
        {"json", "FILE", "also write the summary as JSON"},
        {"quiet", "", "no per-run progress lines", {}, 'q'}},
       false,
       CheckBisect,
       [](const Args& a, Client*, std::ostream& out, std::ostream& err) {
         return CmdBisect(a, out, err);
       },
       kBisectCouldNotRun},
      {"calibrate",
       {"PATH"},
       "fit the engine's sim:ssd twin of a local device from a short sweep",
       "Runs randread and randwrite x bs 4k, 64k, 256k x iodepth 1, 32 (one job, scheduler "
       "none) on PATH through blkbench run's path and checks (PATH is the only device it may "
       "touch; it WRITES to it: refused when mounted, in use or carrying a signature; "
       "settings restored), fits the SSD model's serial stage, pipelined latency and write "
       "ack, and writes the twin as the target: and device: keys of a matrix, with the "
       "twin's error on every swept cell in a comment. Each cell is the median of 3 runs; "
       "about 45 s by default. Needs root (docs/engine-vs-real.md).",
       {{"out", "FILE", "the preset to write (default ./blkbench-twin-<device>.yaml)"},
        {"runtime_ms", "N", "milliseconds per run, 3 runs per swept cell (default 1000)"},
        {"state-dir", "DIR", "journal of original settings (default /var/lib/blkbench-run)"},
        {"db", "FILE", "also store the sweep in this local store, as blkbench run --db"},
        {"quiet", "", "no progress lines", {}, 'q'}},
       false,
       nullptr,
       CmdCalibrate},
      {"completion",
       {"SHELL"},
       "print the bash or zsh completion script",
       "bash: source it, or install it as /usr/share/bash-completion/completions/blkbench. "
       "zsh: install it as _blkbench in a directory of $fpath.",
       {},
       false,
       [](const Args& a, std::ostream& err) {
         if (a.positional[1] == "bash" || a.positional[1] == "zsh") return 0;
         err << "blkbench completion: SHELL: expected bash or zsh, got '" << a.positional[1]
             << "'\n";
         return 2;
       },
       CmdCompletion},
      {"man", {}, "print the blkbench(1) man page (roff)", "", {}, false, nullptr, CmdMan},
      {"help",
       {"[COMMAND]"},
       "print the usage of blkbench or of one command",
       "",
       {},
       false,
       nullptr,
       CmdHelp},
  };
  return kCommands;
}

}  // namespace

int RunCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err,
           std::shared_ptr<grpc::Channel> channel) {
  const std::vector<CommandSpec>& commands = Commands();
  absl::StatusOr<Args> parsed = ParseCommandLine(argv, commands);
  if (!parsed.ok()) {
    err << parsed.status().message() << "\n";
    // A usage error of a command keeps its own code (the gate's "could not run").
    for (const std::string& s : argv) {
      if (const CommandSpec* c = FindCommand(commands, s)) return c->usage_exit;
    }
    return 2;
  }
  Args& a = *parsed;  // a command's check may load its input into it
  if (a.flags.count("version")) {
    out << VersionLine("blkbench") << "\n";
    return 0;
  }
  const CommandSpec* cmd = FindCommand(commands, a.positional[0]);
  if (cmd == nullptr) {
    (a.flags.count("help") ? out : err) << GlobalUsage(commands);
    return a.flags.count("help") ? 0 : 2;
  }
  if (a.flags.count("help")) {
    out << CommandUsage(*cmd);
    return 0;
  }
  // Check everything that needs no controller first: bad input never dials.
  if (cmd->check) {
    if (int rc = cmd->check(a, err); rc != 0) return rc;
  }
  if (!cmd->needs_controller) return cmd->run(a, nullptr, out, err);

  // --db: the controller's own services over a local store, in this process, so every
  // command reads it exactly as it reads a controller.
  SystemClock clock;
  std::unique_ptr<ControllerServer> local;
  if (auto db = a.flags.find("db"); db != a.flags.end()) {
    // Nothing runs behind a local store: no agent would ever take new runs.
    for (const char* flag : {"submit", "auto-repeat"}) {
      if (a.flags.count(flag)) {
        err << "blkbench " << cmd->name << ": --" << flag
            << " needs a controller with agents; with --db, gate what blkbench run or sim "
               "stored\n";
        return cmd->usage_exit;
      }
    }
    struct stat st;
    if (!IsPostgresUri(db->second) && stat(db->second.c_str(), &st) != 0) {
      err << "blkbench " << cmd->name << ": no store at '" << db->second
          << "' (blkbench run and blkbench sim --db FILE write one)\n";
      return 1;
    }
    ServerOptions server;
    server.listen = "";
    server.in_process_only = true;
    server.db_path = db->second;
    // quick_check reads the whole file, on every command here; a damaged page still fails
    // the command that reads it. The controller and `run`/`sim --db` check at open.
    server.skip_db_check = true;
    // The file may be a live controller's: a reader must never expire the leases of runs
    // that controller's agents are running, however long the command takes.
    server.controller.lease_ttl_ms = int64_t{365} * 24 * 3600 * 1000;
    auto started = ControllerServer::Start(server, clock);
    if (!started.ok()) {
      err << "blkbench " << cmd->name << ": " << started.status().message() << "\n";
      return 1;
    }
    local = std::move(*started);
    Client c(local->InProcessChannel(), RedactedStoreName(db->second), err);
    return cmd->run(a, &c, out, err);
  }

  std::string address = a.controller;
  if (address.empty() && getenv("BLKBENCH_CONTROLLER")) address = getenv("BLKBENCH_CONTROLLER");
  if (address.empty()) address = kDefaultController;
  if (!channel) {
    auto transport = CliTransport(a, address);
    if (!transport.ok()) {
      err << "blkbench: " << transport.status().message() << "\n";
      return kExitUnreachable;
    }
    if (!transport->warning.empty()) err << "blkbench: " << transport->warning << "\n";
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    channel = grpc::CreateCustomChannel(address, transport->credentials, args);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(3))) {
      err << "blkbench: " << UnreachableMessage(address, "") << "\n";
      return kExitUnreachable;
    }
  }
  Client c(channel, address, err);
  return cmd->run(a, &c, out, err);
}

}  // namespace blkbench
