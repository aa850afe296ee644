// `blkbench list`, `show EXP`, `watch EXP`, `cancel EXP` and `agents`: the controller's
// experiments and agents, as tables (or JSON/CSV).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cli/command_args.h"
#include "cli/command_registry.h"
#include "cli/format.h"
#include "cli/watch_cmd.h"
#include "common/http/http_server.h"
#include "common/placement.h"
#include "common/states.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

uint32_t CountRuns(const v1::Experiment& e, bool (*pred)(v1::RunState)) {
  uint32_t n = 0;
  for (const auto& r : e.runs()) n += pred(r.state()) ? 1 : 0;
  return n;
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
  out << t.Render(a.Get("format", "table"));
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
    auto agents = FetchAgents(*c);
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
  if (a.Get("format", "table") == "json") {
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
  return WatchExperiment(*c, id, a.Get("progress", "auto"), out, err);
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
  out << t.Render(a.Get("format", "table"));
  return 0;
}

const std::vector<std::string> kProgressModes = {"auto", "live", "plain", "none"};

}  // namespace

CommandSpec ListCommand() {
  return {.name = "list",
          .summary = "list experiments, newest first",
          .flags = {FormatTableFlag(), LocalDbFlag()},
          .needs_controller = true,
          .run = CmdList};
}

CommandSpec ShowCommand() {
  return {.name = "show",
          .args = {"EXP"},
          .summary = "an experiment's cells and runs, and why queued runs wait",
          .flags = {{"format", "FORMAT", "output format", {"table", "json"}}, LocalDbFlag()},
          .needs_controller = true,
          .check = CheckId,
          .run = CmdShow};
}

CommandSpec WatchCommand() {
  return {
      .name = "watch",
      .args = {"EXP"},
      .summary = "follow an experiment: runs done, IOPS, bandwidth, p99, ETA",
      .description =
          "On a terminal the view is redrawn in place; elsewhere (logs, CI) it prints one "
          "line per run state change and a summary line every 10 s. The ETA is wall time, "
          "from the rate at which runs end. Exit 0 when the experiment ends done, 1 "
          "otherwise.",
      .flags = {{"progress", "MODE", "live frames, plain lines, or none (auto: live on a terminal)",
                 kProgressModes}},
      .needs_controller = true,
      .check = CheckId,
      .run = CmdWatch};
}

CommandSpec CancelCommand() {
  return {.name = "cancel",
          .args = {"EXP"},
          .summary = "cancel an experiment's queued and running runs",
          .needs_controller = true,
          .check = CheckId,
          .run = CmdCancel};
}

CommandSpec AgentsCommand() {
  return {.name = "agents",
          .summary = "agents and their devices",
          .flags = {FormatTableFlag()},
          .needs_controller = true,
          .run = CmdAgents};
}

}  // namespace blkbench
