// Argument helpers shared by the command files; see command_args.h.
#include "cli/command_args.h"

#include <memory>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "cli/local_matrix.h"
#include "workloads/matrix.h"

namespace blkbench {

bool ParseId(const Args& a, uint64_t* id, std::ostream& err) {
  if (a.positional.size() < 2 || !absl::SimpleAtoi(a.positional[1], id) || *id == 0) {
    err << "blkbench: " << (a.positional.empty() ? "" : a.positional[0])
        << ": expected an experiment id (a number from 'blkbench list')\n";
    return false;
  }
  return true;
}

int CheckId(const Args& a, std::ostream& err) {
  uint64_t id = 0;
  return ParseId(a, &id, err) ? 0 : 2;
}

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

absl::StatusOr<std::vector<v1::AgentInfo>> FetchAgents(Client& c) {
  grpc::ClientContext ctx;
  c.Deadline(&ctx);
  v1::ListAgentsResponse resp;
  grpc::Status s = c.stub().ListAgents(&ctx, v1::ListAgentsRequest(), &resp);
  if (!s.ok()) return absl::UnavailableError(s.error_message());
  return std::vector<v1::AgentInfo>(resp.agents().begin(), resp.agents().end());
}

std::string IsoTime(int64_t unix_ms) {
  if (unix_ms <= 0) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(unix_ms), absl::UTCTimeZone());
}

FlagSpec FormatTableFlag() {
  return {"format", "FORMAT", "output format", {"table", "json", "csv"}};
}

FlagSpec FioLogsFlag() {
  return {"logs", "DIR", "write fio's log files (write_bw_log, ...) in DIR, a folder per run"};
}

FlagSpec LocalDbFlag() {
  // Commands that read experiments take them from a local store instead of a controller.
  return {"db", "FILE",
          "read a local store (what blkbench run or sim --db wrote) instead of asking the "
          "controller"};
}

}  // namespace blkbench
