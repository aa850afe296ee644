// What several command files share: an experiment id argument, the check of commands
// that take a matrix, and the flags declared alike by several commands.
#ifndef BLKBENCH_CLI_COMMAND_ARGS_H_
#define BLKBENCH_CLI_COMMAND_ARGS_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/cli_common.h"
#include "cli/commands.h"

namespace blkbench {

// The experiment id in the command's first argument: true, or false after saying on
// `err` that a number from 'blkbench list' was expected (also for 0).
bool ParseId(const Args& a, uint64_t* id, std::ostream& err);
// ParseId as a command's check: 0, or 2 (usage) for a bad id.
int CheckId(const Args& a, std::ostream& err);

// The check of every command that takes a matrix FILE: reads the file once and parses it
// once, keeping both in `a` (Args::matrix_text, Args::matrix) for the run, and prints the
// matrix's warnings. 1 (the command failed, nothing sent) for a file it cannot read or
// parse, with the parser's positioned errors on `err`.
int CheckMatrix(Args& a, std::ostream& err);

// The controller's agents (ListAgents), or Unavailable with the call's message.
absl::StatusOr<std::vector<v1::AgentInfo>> FetchAgents(Client& c);

// "2026-12-07T07:00:00Z", or "" for 0 (not set).
std::string IsoTime(int64_t unix_ms);

// --format table|json|csv.
FlagSpec FormatTableFlag();
// --db FILE: read a local store instead of asking the controller.
FlagSpec LocalDbFlag();
// --logs DIR: fio's log files of the experiment's runs (cli/fio_logs.h, docs/fio-logs.md).
FlagSpec FioLogsFlag();

}  // namespace blkbench

#endif  // BLKBENCH_CLI_COMMAND_ARGS_H_
