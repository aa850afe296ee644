// The CLI's command table: one spec per command, each defined with named fields in its
// command's file (or its family's), listed once, in `blkbench --help` order, in
// command_registry.cc. Adding a command is its file, its line here and its line there.
#ifndef BLKBENCH_CLI_COMMAND_REGISTRY_H_
#define BLKBENCH_CLI_COMMAND_REGISTRY_H_

#include <vector>

#include "cli/commands.h"

namespace blkbench {

// Every command, in the order --help, completion and the man page list them.
const std::vector<CommandSpec>& Commands();

// The specs, by the file that defines each.
CommandSpec ValidateCommand();    // submit_cmd.cc
CommandSpec SubmitCommand();      // submit_cmd.cc
CommandSpec ListCommand();        // experiments_cmd.cc
CommandSpec ShowCommand();        // experiments_cmd.cc
CommandSpec WatchCommand();       // experiments_cmd.cc
CommandSpec CancelCommand();      // experiments_cmd.cc
CommandSpec AgentsCommand();      // experiments_cmd.cc
CommandSpec ResultsCommand();     // results_cmd.cc
CommandSpec ReportCommand();      // results_cmd.cc
CommandSpec TlsCommand();         // tls_cmd.cc
CommandSpec GateCommand();        // gate_cmd.cc
CommandSpec HistoryCommand();     // history_cmd.cc
CommandSpec GateProofCommand();   // gate_proof_cmd.cc
CommandSpec ImportCommand();      // import_cmd.cc
CommandSpec SimCommand();         // sim.cc
CommandSpec RunCommand();         // run_cmd.cc
CommandSpec BisectCommand();      // bisect_cmd.cc
CommandSpec CalibrateCommand();   // calibrate_cmd.cc
CommandSpec CompletionCommand();  // help_cmd.cc
CommandSpec ManCommand();         // help_cmd.cc
CommandSpec HelpCommand();        // help_cmd.cc

}  // namespace blkbench

#endif  // BLKBENCH_CLI_COMMAND_REGISTRY_H_
