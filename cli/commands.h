// The CLI's command table and everything generated from it: argument parsing (a flag is
// valid only for the commands that declare it, stray arguments are errors), the global
// and per-command --help text, bash and zsh completion, and the man page. One table, so
// --help, completion and `man blkbench` cannot drift apart.
#ifndef BLKBENCH_CLI_COMMANDS_H_
#define BLKBENCH_CLI_COMMANDS_H_

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/cli_common.h"

namespace blkbench {

struct FlagSpec {
  FlagSpec(std::string name_, std::string value_, std::string help_,
           std::vector<std::string> choices_ = {}, char short_name_ = 0)
      : name(std::move(name_)),
        value(std::move(value_)),
        help(std::move(help_)),
        choices(std::move(choices_)),
        short_name(short_name_) {}

  std::string name;                  // "format" for --format
  std::string value;                 // what it takes, e.g. "FILE"; "" for a switch
  std::string help;                  // one line
  std::vector<std::string> choices;  // the only values accepted, when not empty
  char short_name;                   // 'q' for -q; 0 for none
};

// How a command runs. `client` is null for commands that need no controller.
using CommandFn =
    std::function<int(const Args& args, Client* client, std::ostream& out, std::ostream& err)>;

// One command, declared with named fields in its own file and listed once in the table
// (command_registry.cc), e.g.
//   CommandSpec SimCommand() {
//     return {.name = "sim", .args = {"FILE"}, .summary = "...", .flags = {...},
//             .check = CheckMatrix, .run = CmdSim};
//   }
struct CommandSpec {
  std::string name = {};               // "results"
  std::vector<std::string> args = {};  // positional names; "[NAME]" is optional, e.g. {"EXP"}
  std::string summary = {};            // one line, for the command list
  std::string description = {};        // a paragraph for `COMMAND --help` and the man page
  std::vector<FlagSpec> flags = {};    // besides the global ones
  bool needs_controller = false;       // dials the controller (or opens --db) before `run`
  // Checks what can be checked without the controller: 0 when the command may run, else
  // the exit code to stop with (after printing why). It may load into `args` what the
  // run needs (Args::matrix), so the run does not read its input again. May be null.
  std::function<int(Args& args, std::ostream& err)> check = nullptr;
  CommandFn run = nullptr;
  int usage_exit = 2;  // exit code for bad arguments (the gate's is its "could not run")
};

// --controller, --help/-h and --version: accepted before or after any command.
const std::vector<FlagSpec>& GlobalFlags();

// Parses argv (without the program name) against `commands`. The command is the first
// argument that is not a flag or a flag's value; Args::positional[0] is its name (empty
// when there is none). `--name=value` and `--name value` are both accepted. An
// InvalidArgument message, meant for the user, when a flag is unknown, belongs to another
// command, lacks its value or is not one of its choices, or when the positional count is
// wrong. `--help` anywhere skips the positional check (help is printed instead).
absl::StatusOr<Args> ParseCommandLine(const std::vector<std::string>& argv,
                                      const std::vector<CommandSpec>& commands);

// The command called `name`, or null.
const CommandSpec* FindCommand(const std::vector<CommandSpec>& commands, const std::string& name);

// "blkbench results EXP [--format table|csv|json|fio-json] [--samples]".
std::string Synopsis(const CommandSpec& c);
// The global usage: synopsis, the commands with their summaries, the global flags.
std::string GlobalUsage(const std::vector<CommandSpec>& commands);
// One command's usage: synopsis, description, its flags, the global flags.
std::string CommandUsage(const CommandSpec& c);

// Shell completion scripts (source them, or install as
// share/bash-completion/completions/blkbench and share/zsh/vendor-completions/_blkbench).
std::string BashCompletion(const std::vector<CommandSpec>& commands);
std::string ZshCompletion(const std::vector<CommandSpec>& commands);
// blkbench(1) in roff (man(7) macros).
std::string ManPage(const std::vector<CommandSpec>& commands, const std::string& version);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_COMMANDS_H_
