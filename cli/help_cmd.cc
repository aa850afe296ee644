// `blkbench help [COMMAND]`, `completion SHELL` and `man`: the usage, the shell
// completion scripts and the man page, all generated from the command table.
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/command_registry.h"
#include "common/build_info.h"

namespace blkbench {
namespace {

int CheckShell(const Args& a, std::ostream& err) {
  if (a.positional[1] == "bash" || a.positional[1] == "zsh") return 0;
  err << "blkbench completion: SHELL: expected bash or zsh, got '" << a.positional[1] << "'\n";
  return 2;
}

int CmdCompletion(const Args& a, Client*, std::ostream& out, std::ostream&) {
  out << (a.positional[1] == "bash" ? BashCompletion(Commands()) : ZshCompletion(Commands()));
  return 0;
}

int CmdMan(const Args&, Client*, std::ostream& out, std::ostream&) {
  out << ManPage(Commands(), absl::StrCat(BuildVersion(), " (", BuildRevision(), ")"));
  return 0;
}

int CmdHelp(const Args& a, Client*, std::ostream& out, std::ostream& err) {
  if (a.positional.size() < 2) {
    out << GlobalUsage(Commands());
    return 0;
  }
  const CommandSpec* c = FindCommand(Commands(), a.positional[1]);
  if (c == nullptr) {
    err << "blkbench help: unknown command '" << a.positional[1] << "'\n";
    return 2;
  }
  out << CommandUsage(*c);
  return 0;
}

}  // namespace

CommandSpec CompletionCommand() {
  return {.name = "completion",
          .args = {"SHELL"},
          .summary = "print the bash or zsh completion script",
          .description =
              "bash: source it, or install it as /usr/share/bash-completion/completions/blkbench. "
              "zsh: install it as _blkbench in a directory of $fpath.",
          .check = CheckShell,
          .run = CmdCompletion};
}

CommandSpec ManCommand() {
  return {.name = "man", .summary = "print the blkbench(1) man page (roff)", .run = CmdMan};
}

CommandSpec HelpCommand() {
  return {.name = "help",
          .args = {"[COMMAND]"},
          .summary = "print the usage of blkbench or of one command",
          .run = CmdHelp};
}

}  // namespace blkbench
