// `blkbench gate`: compares two experiments (or two values of one axis of an
// experiment) with controller/gate and exits 0 (no regression), 1 (regression) or 2
// (inconclusive or error), writing text/Markdown/JSON and optionally JUnit XML.
#include "controller/cli/gate_cmd.h"

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "controller/gate/gate_report.h"

namespace blkbench {
namespace {

constexpr int kGateError = 2;

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

}  // namespace

bool GateArgsOk(const Args& a, std::ostream& err) {
  const bool axis_mode = a.flags.count("axis") > 0;
  if (!a.flags.count("baseline") || !a.flags.count("candidate") ||
      axis_mode != (a.flags.count("experiment") > 0)) {
    err << "usage: blkbench gate --baseline EXP --candidate EXP [options]\n"
           "       blkbench gate --experiment EXP --axis KEY --baseline VALUE --candidate VALUE\n"
           "options: --metrics iops,bw,p99,p99.9  --min-effect 2%  --alpha 0.05\n"
           "         --format text|markdown|json  --junit FILE  --markdown FILE  --json FILE\n";
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

  v1::GetResultsResponse base, cand;
  uint64_t base_id = 0, cand_id = 0;
  if (a.flags.count("axis")) {
    req.axis = a.flags.at("axis");
    req.baseline_value = a.flags.at("baseline");
    req.candidate_value = a.flags.at("candidate");
    if (!absl::SimpleAtoi(a.flags.at("experiment"), &base_id)) {
      err << "blkbench gate: --experiment: expected an experiment id\n";
      return kGateError;
    }
    if (int rc = Fetch(c, base_id, &base); rc) return rc;
    cand = base;
  } else {
    if (!absl::SimpleAtoi(a.flags.at("baseline"), &base_id) ||
        !absl::SimpleAtoi(a.flags.at("candidate"), &cand_id)) {
      err << "blkbench gate: --baseline/--candidate: expected experiment ids (or use --axis)\n";
      return kGateError;
    }
    if (int rc = Fetch(c, base_id, &base); rc) return rc;
    if (int rc = Fetch(c, cand_id, &cand); rc) return rc;
  }

  auto report = gate::CompareResults(base, cand, req);
  if (!report.ok()) {
    err << "blkbench gate: " << report.status().message() << "\n";
    return kGateError;
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
  return gate::ExitStatus(*report);
}

}  // namespace blkbench
