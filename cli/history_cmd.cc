// `blkbench history --metric M --cell k=v,k=v [--device-class C] [--name N] [--limit N]
// [--min-segment N] [--format table|json]`: asks the controller's GetHistory and prints
// the points and change points (controller/gate/history.h renders them).
#include "cli/history_cmd.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "cli/command_args.h"
#include "cli/command_registry.h"
#include "controller/gate/history.h"

namespace blkbench {
namespace {

constexpr char kUsage[] =
    "usage: blkbench history --metric iops|bw|mean_lat|pNN --cell KEY=VALUE[,KEY=VALUE...]\n"
    "       [--device-class CLASS] [--name EXPERIMENT_NAME] [--limit N] [--min-segment N]\n"
    "       [--format table|json]\n";

bool ParseCell(const std::string& text, v1::GetHistoryRequest* req) {
  for (absl::string_view kv : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    std::pair<std::string, std::string> parts = absl::StrSplit(kv, absl::MaxSplits('=', 1));
    if (parts.first.empty() || kv.find('=') == absl::string_view::npos) return false;
    v1::AxisValue* a = req->add_cell();
    a->set_key(parts.first);
    a->set_value(parts.second);
  }
  return req->cell_size() > 0;
}

bool BuildRequest(const Args& a, v1::GetHistoryRequest* req, std::ostream& err) {
  if (!a.flags.count("metric") || !a.flags.count("cell") || a.positional.size() != 1) {
    err << kUsage;
    return false;
  }
  req->set_metric(a.flags.at("metric"));
  if (!ParseCell(a.flags.at("cell"), req)) {
    err << "blkbench history: --cell: expected KEY=VALUE[,KEY=VALUE...], e.g. bs=4k,iodepth=32\n";
    return false;
  }
  if (a.flags.count("device-class")) req->set_device_class(a.flags.at("device-class"));
  if (a.flags.count("name")) req->set_name(a.flags.at("name"));
  uint32_t n = 0;
  if (a.flags.count("limit")) {
    if (!absl::SimpleAtoi(a.flags.at("limit"), &n)) {
      err << "blkbench history: --limit: expected a number of experiments\n";
      return false;
    }
    req->set_limit(n);
  }
  if (a.flags.count("min-segment")) {
    if (!absl::SimpleAtoi(a.flags.at("min-segment"), &n) || n < 1) {
      err << "blkbench history: --min-segment: expected a number >= 1\n";
      return false;
    }
    req->set_min_segment(n);
  }
  const std::string format = a.flags.count("format") ? a.flags.at("format") : "table";
  if (format != "table" && format != "json") {
    err << "blkbench history: --format: expected table or json, got '" << format << "'\n";
    return false;
  }
  if (absl::Status s = gate::CheckHistoryRequest(*req); !s.ok()) {
    err << "blkbench " << s.message() << "\n";
    return false;
  }
  return true;
}

}  // namespace

bool HistoryArgsOk(const Args& a, std::ostream& err) {
  v1::GetHistoryRequest req;
  return BuildRequest(a, &req, err);
}

int CmdHistory(Client& c, const Args& a, std::ostream& out, std::ostream& err) {
  v1::GetHistoryRequest req;
  if (!BuildRequest(a, &req, err)) return 2;
  grpc::ClientContext ctx;
  c.Deadline(&ctx, 120);
  v1::GetHistoryResponse resp;
  grpc::Status s = c.stub().GetHistory(&ctx, req, &resp);
  if (!s.ok()) return c.Fail(s);
  const bool json = a.flags.count("format") && a.flags.at("format") == "json";
  out << (json ? gate::RenderHistoryJson(resp) : gate::RenderHistoryText(resp));
  return 0;
}

CommandSpec HistoryCommand() {
  return {.name = "history",
          .summary = "a cell's metric across experiments, with change points",
          .flags = {{"metric", "METRIC", "iops, bw, mean_lat or pNN (e.g. p99)"},
                    {"cell", "KEY=VALUE,...", "the cell, e.g. bs=4k,iodepth=32"},
                    {"device-class", "CLASS", "only runs on this device class"},
                    {"name", "NAME", "only experiments with this name"},
                    {"limit", "N", "at most N experiments"},
                    {"min-segment", "N", "shortest segment between change points"},
                    {"format", "FORMAT", "output format", {"table", "json"}},
                    LocalDbFlag()},
          .needs_controller = true,
          .check = [](const Args& a, std::ostream& err) { return HistoryArgsOk(a, err) ? 0 : 2; },
          .run = [](const Args& a, Client* c, std::ostream& out,
                    std::ostream& err) { return CmdHistory(*c, a, out, err); }};
}

}  // namespace blkbench
