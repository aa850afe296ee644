// The command table, one line per command; see command_registry.h.
#include "cli/command_registry.h"

namespace blkbench {

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec> kCommands = {
      ValidateCommand(), SubmitCommand(),  ListCommand(),      ShowCommand(),       WatchCommand(),
      ResultsCommand(),  ReportCommand(),  CancelCommand(),    AgentsCommand(),     TlsCommand(),
      GateCommand(),     HistoryCommand(), GateProofCommand(), ImportCommand(),     SimCommand(),
      RunCommand(),      BisectCommand(),  CalibrateCommand(), CompletionCommand(), ManCommand(),
      HelpCommand(),
  };
  return kCommands;
}

}  // namespace blkbench
