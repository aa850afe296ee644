// `blkbench validate FILE` and `blkbench submit FILE`: a matrix checked here (its text
// read and parsed once, by CheckMatrix), then printed or sent to the controller.
#include <map>
#include <string>
#include <vector>

#include "cli/command_args.h"
#include "cli/command_registry.h"
#include "cli/local_matrix.h"
#include "cli/watch_cmd.h"
#include "common/placement.h"
#include "workloads/format.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

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
  if (a.Has("quiet")) {
    out << e.id() << "\n";
  } else {
    out << "experiment " << e.id() << " '" << e.name() << "' submitted: " << e.cells_size()
        << " cells x " << e.repeats() << " repeats = " << e.runs_size() << " runs\n";
  }
  // Say at once when nothing connected can run some cells (they wait, not fail).
  if (auto agents = FetchAgents(*c); agents.ok()) {
    for (const auto& [why, cells] : Unplaceable(e, *agents)) {
      err << "blkbench submit: " << why << "; " << cells << (cells == 1 ? " cell" : " cells")
          << " will wait in the queue\n";
    }
  }
  if (a.Has("watch")) return WatchExperiment(*c, e.id(), a.Get("progress", "auto"), out, err);
  return 0;
}

}  // namespace

CommandSpec ValidateCommand() {
  return {.name = "validate",
          .args = {"FILE"},
          .summary = "check a matrix file and print its expanded cells",
          .description =
              "Reports every mistake with file, line, column and key, and needs no controller.",
          .check = CheckMatrix,
          .run = CmdValidate};
}

CommandSpec SubmitCommand() {
  return {
      .name = "submit",
      .args = {"FILE"},
      .summary = "submit a matrix as a new experiment",
      .description =
          "Validates the matrix first (nothing is sent when it has errors). Warns at once, "
          "on stderr, about cells that no connected agent can run: they wait in the queue.",
      .flags = {{"watch", "", "follow the experiment until it ends (exit 0 only if it ends done)"},
                {"quiet", "", "print only the experiment id", {}, 'q'},
                {"progress",
                 "MODE",
                 "with --watch: live frames, plain lines, or none (auto: live on a terminal)",
                 {"auto", "live", "plain", "none"}}},
      .needs_controller = true,
      .check = CheckMatrix,
      .run = CmdSubmit};
}

}  // namespace blkbench
