// `blkbench gate`: compares two experiments (or two values of one axis of an
// experiment) with controller/gate and exits 0 (no regression), 1 (regression), 2
// (inconclusive) or 3 (could not run), writing text/Markdown/JSON and optionally JUnit XML and
// HTML.
// --auto-repeat asks the controller for more repeats of inconclusive cells (AddRepeats),
// waits for them and decides again.
#include "cli/gate_cmd.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/command_args.h"
#include "cli/command_registry.h"
#include "cli/local_matrix.h"
#include "common/placement.h"
#include "common/states.h"
#include "common/units.h"
#include "controller/gate/gate_report.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

constexpr int kGateError = kGateCouldNotRun;
// The default bound on waiting for runs (--timeout): extra runs may queue behind others.
constexpr uint64_t kDefaultWaitNs = 24ull * 3600 * 1'000'000'000;

bool IsEnded(v1::ExperimentState s) {
  return s == v1::EXPERIMENT_DONE || s == v1::EXPERIMENT_FAILED || s == v1::EXPERIMENT_CANCELED;
}

bool WriteFile(const std::string& path, const std::string& text, std::ostream& err) {
  std::ofstream f(path);
  f << text;
  if (!f) {
    err << "blkbench gate: cannot write '" << path << "'\n";
    return false;
  }
  return true;
}

// "2%", "0.02" or "2" (percent when > 1) -> 0.02.
bool ParseFraction(const std::string& text, double* out) {
  absl::string_view s(text);
  const bool percent = absl::ConsumeSuffix(&s, "%");
  double v;
  if (!absl::SimpleAtod(s, &v) || v < 0) return false;
  *out = (percent || v >= 1) ? v / 100 : v;
  return true;
}

int Fetch(Client& c, uint64_t id, v1::GetResultsResponse* out) {
  grpc::ClientContext ctx;
  c.Deadline(&ctx, 120);
  v1::GetResultsRequest req;
  req.set_experiment_id(id);
  grpc::Status s = c.stub().GetResults(&ctx, req, out);
  return s.ok() ? 0 : (c.Fail(s), kGateError);
}

// The newest experiment's id, said on `err` (the store is a local one: --db).
int Newest(Client& c, uint64_t* id, std::ostream& err) {
  grpc::ClientContext ctx;
  c.Deadline(&ctx);
  v1::ListExperimentsRequest req;
  req.set_limit(1);
  v1::ListExperimentsResponse resp;
  if (grpc::Status s = c.stub().ListExperiments(&ctx, req, &resp); !s.ok()) {
    return (c.Fail(s), kGateError);
  }
  if (resp.experiments().empty()) {
    err << "blkbench gate: the store holds no experiment\n";
    return kGateError;
  }
  *id = resp.experiments(0).id();
  err << "blkbench gate: experiment " << *id << " '" << resp.experiments(0).name()
      << "', the newest in the store (--experiment to choose another)\n";
  return 0;
}

// Why experiment `e`'s queued runs may never start: no connected agent can take some of
// its cells (common/placement.h). "" when every cell has a matching device.
std::string WhyWaiting(Client& c, const v1::Experiment& e) {
  grpc::ClientContext ctx;
  c.Deadline(&ctx);
  v1::ListAgentsResponse resp;
  if (!c.stub().ListAgents(&ctx, v1::ListAgentsRequest(), &resp).ok()) return "";
  const std::vector<v1::AgentInfo> agents(resp.agents().begin(), resp.agents().end());
  std::set<std::string> reasons;
  for (const v1::CellSpec& cell : e.cells()) {
    bool queued = false;
    for (const v1::Run& r : e.runs()) {
      queued |= r.cell_index() == cell.index() && r.state() == v1::RUN_QUEUED;
    }
    if (!queued) continue;
    const std::string why = UnplaceableReason(cell, agents);
    if (!why.empty()) reasons.insert(why);
  }
  return absl::StrJoin(reasons, "; ");
}

// Blocks on WatchExperiment until experiment `id` ends (no polling, no sleeps) or
// `timeout_ns` passes; then says how far it got and why the rest waits.
int WaitForEnd(Client& c, uint64_t id, uint64_t timeout_ns, std::ostream& err) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::nanoseconds(timeout_ns));
  v1::WatchExperimentRequest req;
  req.set_id(id);
  auto reader = c.stub().WatchExperiment(&ctx, req);
  v1::WatchEvent ev;
  bool ended = false;
  v1::Experiment last;
  while (!ended && reader->Read(&ev)) {
    last = ev.experiment();
    ended = IsEnded(last.state());
  }
  if (ended) {
    ctx.TryCancel();
    reader->Finish().ok();  // cancelled by us: the status says only that
    if (last.state() != v1::EXPERIMENT_DONE) {
      err << "blkbench gate: experiment " << id << " ended " << ExperimentStateName(last.state())
          << (last.error().empty() ? "" : ": " + last.error()) << "; gating what finished\n";
    }
    return 0;
  }
  grpc::Status s = reader->Finish();
  if (s.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) return (c.Fail(s), kGateError);
  int done = 0;
  for (const v1::Run& r : last.runs()) done += IsFinalRunState(r.state()) ? 1 : 0;
  const std::string why = WhyWaiting(c, last);
  err << "blkbench gate: experiment " << id << " did not end within "
      << FormatDurationNs(timeout_ns) << " (" << done << " of " << last.runs_size()
      << " runs ended)" << (why.empty() ? "" : "; " + why) << "\n";
  return kGateError;
}

// --submit FILE: submits the matrix and returns its experiment id (0 on failure, said).
uint64_t SubmitForGate(Client& c, const std::string& path, std::ostream& err) {
  absl::StatusOr<std::string> text = workloads::ReadMatrixFile(path);
  if (!text.ok()) {
    err << "blkbench gate: --submit: " << text.status().message() << "\n";
    return 0;
  }
  absl::StatusOr<workloads::Matrix> m = ParseLocalMatrix(*text, path);
  if (!m.ok()) {
    err << m.status().message() << "\n";
    return 0;
  }
  grpc::ClientContext ctx;
  c.Deadline(&ctx);
  const v1::SubmitExperimentRequest req = SubmitRequest(path, *text, *m);
  v1::Experiment e;
  grpc::Status s = c.stub().SubmitExperiment(&ctx, req, &e);
  if (!s.ok()) return (c.Fail(s), 0);
  err << "blkbench gate: submitted experiment " << e.id() << " '" << e.name() << "' ("
      << e.runs_size() << " runs)\n";
  // Say at once when the candidate (or baseline) kernel is offered by no agent.
  if (const std::string why = WhyWaiting(c, e); !why.empty()) {
    err << "blkbench gate: " << why << "; its runs wait in the queue (until --timeout)\n";
  }
  return e.id();
}

// The extra repeats one round of --auto-repeat asks for: per experiment, the cells and
// how many runs each. A pair of cells gets enough to reach the larger repeats_needed of
// its inconclusive metrics, at least 1, within what is left of its budget.
struct RepeatAsk {
  uint64_t experiment = 0;
  uint32_t count = 0;
  std::vector<uint32_t> cells;
};

std::vector<RepeatAsk> PlanRepeats(const gate::GateReport& report, int budget,
                                   std::map<std::pair<uint32_t, uint32_t>, int>& added) {
  std::map<std::pair<uint64_t, uint32_t>, std::set<uint32_t>> by_exp_count;
  for (const gate::CellComparison& cell : report.cells) {
    int needed = 0;
    for (const gate::MetricComparison& m : cell.metrics) {
      if (m.verdict.verdict == gate::Verdict::kInconclusive) {
        needed = std::max(needed, m.verdict.repeats_needed);
      }
    }
    if (needed == 0) continue;
    int& used = added[{cell.base.cell_index, cell.cand.cell_index}];
    if (budget - used <= 0) continue;
    const int have = std::min(cell.base.done_runs, cell.cand.done_runs);
    const int want = std::clamp(needed - have, 1, budget - used);
    used += want;
    const auto count = static_cast<uint32_t>(want);
    by_exp_count[{report.baseline_experiment, count}].insert(cell.base.cell_index);
    by_exp_count[{report.candidate_experiment, count}].insert(cell.cand.cell_index);
  }
  std::vector<RepeatAsk> asks;
  asks.reserve(by_exp_count.size());
  for (const auto& [key, cells] : by_exp_count) {
    asks.push_back({key.first, key.second, std::vector<uint32_t>(cells.begin(), cells.end())});
  }
  return asks;
}

}  // namespace

bool GateArgsOk(const Args& a, std::ostream& err) {
  const bool axis_mode = a.flags.count("axis") > 0;
  const size_t experiments = a.flags.count("experiment") + a.flags.count("submit");
  // A local store (what `blkbench run --db` wrote): its newest experiment by default.
  const bool one_experiment = experiments == 1 || (experiments == 0 && a.flags.count("db"));
  if (!a.flags.count("baseline") || !a.flags.count("candidate") || axis_mode != one_experiment) {
    err << "usage: blkbench gate --baseline EXP --candidate EXP [options]\n"
           "       blkbench gate --experiment EXP --axis KEY --baseline VALUE --candidate VALUE\n"
           "       blkbench gate --submit FILE --axis KEY --baseline VALUE --candidate VALUE\n"
           "       blkbench gate --db FILE [--experiment EXP] --axis KEY --baseline VALUE "
           "--candidate VALUE\n"
           "options: --metrics iops,bw,p99,p99.9  --min-effect 2%  --alpha 0.02\n"
           "         --method robust-welch|moderated-t|rank-sum  --auto-repeat N  --wait\n"
           "         --timeout 2h\n"
           "         --format text|markdown|json  --junit FILE  --markdown FILE  --json FILE\n"
           "         --html FILE\n";
    return false;
  }
  if (a.flags.count("timeout") && !ParseDurationNs(a.flags.at("timeout")).ok()) {
    err << "blkbench gate: --timeout: expected a duration like 90m or 2h, got '"
        << a.flags.at("timeout") << "'\n";
    return false;
  }
  int n = 0;
  if (a.flags.count("auto-repeat") &&
      (!absl::SimpleAtoi(a.flags.at("auto-repeat"), &n) || n < 0 || n > 100)) {
    err << "blkbench gate: --auto-repeat: expected a number of extra repeats, 0 to 100\n";
    return false;
  }
  if (a.flags.count("method") && a.flags.at("method") != "robust-welch" &&
      a.flags.at("method") != "moderated-t" && a.flags.at("method") != "rank-sum") {
    err << "blkbench gate: --method: expected robust-welch, moderated-t or rank-sum\n";
    return false;
  }
  const std::string format = a.flags.count("format") ? a.flags.at("format") : "text";
  if (format != "text" && format != "markdown" && format != "json") {
    err << "blkbench gate: --format: expected text, markdown or json, got '" << format << "'\n";
    return false;
  }
  return true;
}

int CmdGate(Client& c, const Args& a, std::ostream& out, std::ostream& err) {
  gate::GateRequest req;
  if (a.flags.count("metrics")) {
    req.metrics = absl::StrSplit(a.flags.at("metrics"), ',', absl::SkipEmpty());
  }
  if (a.flags.count("min-effect") &&
      !ParseFraction(a.flags.at("min-effect"), &req.options.min_effect)) {
    err << "blkbench gate: --min-effect: expected a fraction like 2% or 0.02\n";
    return kGateError;
  }
  if (a.flags.count("alpha") && (!absl::SimpleAtod(a.flags.at("alpha"), &req.options.alpha) ||
                                 req.options.alpha <= 0 || req.options.alpha >= 0.5)) {
    err << "blkbench gate: --alpha: expected a number in (0, 0.5), e.g. 0.05\n";
    return kGateError;
  }

  if (a.flags.count("method") && a.flags.at("method") == "rank-sum") {
    req.options.method = gate::Method::kRankSum;
  } else if (a.flags.count("method") && a.flags.at("method") == "moderated-t") {
    req.options.method = gate::Method::kModeratedT;
  }
  int auto_repeat = 0;
  // GateArgsOk checked it.
  if (a.flags.count("auto-repeat") && !absl::SimpleAtoi(a.flags.at("auto-repeat"), &auto_repeat)) {
    return kGateError;
  }

  const uint64_t timeout_ns =
      a.flags.count("timeout") ? *ParseDurationNs(a.flags.at("timeout")) : kDefaultWaitNs;
  // --submit runs the matrix first (and so waits for it); --wait waits for given ones.
  const bool wait = a.flags.count("wait") > 0 || a.flags.count("submit") > 0;
  v1::GetResultsResponse base, cand;
  uint64_t base_id = 0, cand_id = 0;
  if (a.flags.count("axis")) {
    req.axis = a.flags.at("axis");
    req.baseline_value = a.flags.at("baseline");
    req.candidate_value = a.flags.at("candidate");
    if (a.flags.count("submit")) {
      base_id = SubmitForGate(c, a.flags.at("submit"), err);
      if (base_id == 0) return kGateError;
    } else if (!a.flags.count("experiment")) {  // --db: its newest (GateArgsOk)
      if (int rc = Newest(c, &base_id, err); rc) return rc;
    } else if (!absl::SimpleAtoi(a.flags.at("experiment"), &base_id)) {
      err << "blkbench gate: --experiment: expected an experiment id\n";
      return kGateError;
    }
    if (wait) {
      if (int rc = WaitForEnd(c, base_id, timeout_ns, err); rc) return rc;
    }
    if (int rc = Fetch(c, base_id, &base); rc) return rc;
    cand = base;
  } else {
    if (!absl::SimpleAtoi(a.flags.at("baseline"), &base_id) ||
        !absl::SimpleAtoi(a.flags.at("candidate"), &cand_id)) {
      err << "blkbench gate: --baseline/--candidate: expected experiment ids (or use --axis)\n";
      return kGateError;
    }
    for (uint64_t id : {base_id, cand_id}) {
      if (!wait) break;
      if (int rc = WaitForEnd(c, id, timeout_ns, err); rc) return rc;
    }
    if (int rc = Fetch(c, base_id, &base); rc) return rc;
    if (int rc = Fetch(c, cand_id, &cand); rc) return rc;
  }

  // --auto-repeat looks at the data more than once: alpha is spent across rounds
  // (GateOptions::look), each cell pair judged at the round that last added to it.
  if (auto_repeat > 0) req.options.look = 0;
  auto report = gate::CompareResults(base, cand, req);
  if (!report.ok()) {
    err << "blkbench gate: " << report.status().message() << "\n";
    return kGateError;
  }
  // --auto-repeat: more runs of the inconclusive cells only, then decide again.
  std::map<std::pair<uint32_t, uint32_t>, int> added;
  for (int round = 1; auto_repeat > 0; ++round) {
    const std::map<std::pair<uint32_t, uint32_t>, int> before = added;
    const std::vector<RepeatAsk> asks = PlanRepeats(*report, auto_repeat, added);
    if (asks.empty()) break;
    for (const auto& [pair, n] : added) {
      auto it = before.find(pair);
      if (it == before.end() || it->second != n) req.looks[pair] = round;
    }
    std::set<uint64_t> touched;
    for (const RepeatAsk& ask : asks) {
      grpc::ClientContext ctx;
      c.Deadline(&ctx);
      v1::AddRepeatsRequest areq;
      areq.set_experiment_id(ask.experiment);
      areq.set_count(ask.count);
      for (uint32_t cell : ask.cells) areq.add_cell_indices(cell);
      v1::AddRepeatsResponse aresp;
      grpc::Status s = c.stub().AddRepeats(&ctx, areq, &aresp);
      if (!s.ok()) return (c.Fail(s), kGateError);
      err << "blkbench gate: auto-repeat round " << round << ": " << ask.count
          << " more repeat(s) of " << ask.cells.size() << " cell(s) of experiment "
          << ask.experiment << "\n";
      touched.insert(ask.experiment);
    }
    for (uint64_t id : touched) {
      if (int rc = WaitForEnd(c, id, timeout_ns, err); rc) return rc;
    }
    if (int rc = Fetch(c, base_id, &base); rc) return rc;
    if (a.flags.count("axis")) {
      cand = base;
    } else if (int rc = Fetch(c, cand_id, &cand); rc) {
      return rc;
    }
    report = gate::CompareResults(base, cand, req);
    if (!report.ok()) {
      err << "blkbench gate: " << report.status().message() << "\n";
      return kGateError;
    }
  }
  if (auto_repeat > 0) {
    int spent = 0, pairs = 0, most = 0;
    for (const auto& [pair, n] : added) {
      spent += n;
      pairs += n > 0 ? 1 : 0;
      most = std::max(most, n);
    }
    err << "blkbench gate: auto-repeat spent " << spent << " extra repeat(s) per side over "
        << pairs << " cell pair(s) (at most " << most << " of " << auto_repeat
        << " for one pair)\n";
  }
  const std::string format = a.flags.count("format") ? a.flags.at("format") : "text";
  if (format == "markdown") {
    out << gate::RenderMarkdown(*report);
  } else if (format == "json") {
    out << gate::RenderJson(*report);
  } else {
    out << gate::RenderText(*report);
  }
  if (a.flags.count("junit") && !WriteFile(a.flags.at("junit"), gate::RenderJUnit(*report), err)) {
    return kGateError;
  }
  if (a.flags.count("markdown") &&
      !WriteFile(a.flags.at("markdown"), gate::RenderMarkdown(*report), err)) {
    return kGateError;
  }
  if (a.flags.count("json") && !WriteFile(a.flags.at("json"), gate::RenderJson(*report), err)) {
    return kGateError;
  }
  if (a.flags.count("html") && !WriteFile(a.flags.at("html"), gate::RenderHtml(*report), err)) {
    return kGateError;
  }
  return gate::ExitStatus(*report);
}

CommandSpec GateCommand() {
  return {
      .name = "gate",
      .summary = "regression verdicts between two experiments or two values of an axis",
      .description =
          "blkbench gate --baseline EXP --candidate EXP, or --experiment EXP --axis KEY "
          "--baseline VALUE --candidate VALUE, or, in one CI step, --submit FILE --axis KEY "
          "--baseline VALUE --candidate VALUE (submits, says at once when no agent offers a "
          "kernel, waits up to --timeout, gates). Exit 0 pass, 1 regression, 2 inconclusive, 3 "
          "could not run (bad arguments, controller unreachable, experiment missing, timeout).",
      .flags = {{"baseline", "EXP|VALUE", "baseline experiment, or axis value with --axis"},
                {"candidate", "EXP|VALUE", "candidate experiment, or axis value with --axis"},
                {"experiment", "EXP",
                 "with --axis: the experiment holding both values (with --db: default the "
                 "newest)"},
                {"axis", "KEY", "compare two values of this axis of one experiment"},
                {"metrics", "LIST", "metrics to gate on (default iops,bw,p99)"},
                {"min-effect", "FRACTION", "smallest change that counts (default 2%)"},
                {"alpha", "P", "false-alarm level (default 0.02)"},
                {"method", "METHOD", "the test", {"robust-welch", "moderated-t", "rank-sum"}},
                {"auto-repeat", "N",
                 "up to N more repeats of inconclusive cells, then decide again"},
                {"submit", "FILE", "submit this matrix, wait for it, and gate --axis within it"},
                {"wait", "", "wait for the experiments to end before comparing"},
                {"timeout", "DURATION", "give up waiting after this long, exit 3 (default 24h)"},
                {"format", "FORMAT", "report on stdout", {"text", "markdown", "json"}},
                {"junit", "FILE", "also write JUnit XML"},
                {"markdown", "FILE", "also write Markdown"},
                {"json", "FILE", "also write JSON"},
                {"html", "FILE", "also write an HTML report"},
                LocalDbFlag()},
      .needs_controller = true,
      .check = [](const Args& a,
                  std::ostream& err) { return GateArgsOk(a, err) ? 0 : kGateCouldNotRun; },
      .run = [](const Args& a, Client* c, std::ostream& out,
                std::ostream& err) { return CmdGate(*c, a, out, err); },
      .usage_exit = kGateCouldNotRun};
}

}  // namespace blkbench
