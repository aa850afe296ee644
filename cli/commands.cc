// Parsing, help, completion and the man page from the command table; see commands.h.
#include "cli/commands.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/man/roff.h"

namespace blkbench {
namespace {

const FlagSpec* FindFlag(const std::vector<FlagSpec>& flags, const std::string& name) {
  for (const FlagSpec& f : flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const FlagSpec* FindShort(const std::vector<FlagSpec>& flags, char c) {
  for (const FlagSpec& f : flags) {
    if (f.short_name == c) return &f;
  }
  return nullptr;
}

std::string ValueText(const FlagSpec& f) {
  return f.choices.empty() ? f.value : absl::StrJoin(f.choices, "|");
}

std::string FlagText(const FlagSpec& f) {
  std::string s = absl::StrCat("--", f.name);
  if (!f.value.empty()) absl::StrAppend(&s, " ", ValueText(f));
  return s;
}

size_t RequiredArgs(const CommandSpec& c) {
  return static_cast<size_t>(std::count_if(c.args.begin(), c.args.end(),
                                           [](const std::string& a) { return a[0] != '['; }));
}

std::string ArgsText(const CommandSpec& c) { return absl::StrJoin(c.args, " "); }

// The commands that declare --`name`, for "belongs to" errors.
std::vector<std::string> Owners(const std::vector<CommandSpec>& commands, const std::string& name) {
  std::vector<std::string> out;
  for (const CommandSpec& c : commands) {
    if (FindFlag(c.flags, name) != nullptr) out.push_back(c.name);
  }
  return out;
}

// `text` broken into lines of at most `width` columns at spaces.
std::string Wrap(const std::string& text, size_t width) {
  std::string out, line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      absl::StrAppend(&out, line, "\n");
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  return out + line;
}

// "  -q, --quiet        print only the id", one line per flag, help texts aligned.
std::string FlagList(const std::vector<FlagSpec>& flags) {
  size_t width = 0;
  for (const FlagSpec& f : flags) width = std::max(width, FlagText(f).size() + 4);
  std::string out;
  for (const FlagSpec& f : flags) {
    const std::string head =
        (f.short_name ? absl::StrCat("-", std::string(1, f.short_name), ", ") : "    ") +
        FlagText(f);
    absl::StrAppend(&out, "  ", head, std::string(width + 2 - std::min(width, head.size()), ' '),
                    f.help, "\n");
  }
  return out;
}

}  // namespace

const std::vector<FlagSpec>& GlobalFlags() {
  static const std::vector<FlagSpec> kGlobal = {
      {"controller", "ADDR",
       "controller address: unix:/path or host:port (default $BLKBENCH_CONTROLLER or "
       "unix:/run/blkbench/controller.sock)"},
      {"tls_dir", "DIR",
       "dial with mutual TLS, the CA and client certificate in DIR (default $BLKBENCH_TLS_DIR)"},
      {"insecure", "",
       "dial a controller on another host without TLS (refused otherwise; says so on stderr)"},
      {"tls_cert", "NAME",
       "the client certificate cli-NAME.pem in --tls_dir (default: the only one)"},
      {"help", "", "print this command's usage and exit", {}, 'h'},
      {"version", "", "print the version and git revision and exit"},
  };
  return kGlobal;
}

const CommandSpec* FindCommand(const std::vector<CommandSpec>& commands, const std::string& name) {
  for (const CommandSpec& c : commands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

absl::StatusOr<Args> ParseCommandLine(const std::vector<std::string>& argv,
                                      const std::vector<CommandSpec>& commands) {
  Args a;
  a.positional.emplace_back();
  const CommandSpec* cmd = nullptr;
  // Flags before the command are checked once it is known.
  std::vector<std::pair<std::string, std::string>> pending;  // (flag as typed, name)
  auto where = [&] { return cmd ? absl::StrCat("blkbench ", cmd->name) : std::string("blkbench"); };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& s = argv[i];
    if (s == "--") {
      for (++i; i < argv.size(); ++i) a.positional.push_back(argv[i]);
      break;
    }
    const bool is_long = s.rfind("--", 0) == 0 && s.size() > 2;
    const bool is_short = !is_long && s.size() == 2 && s[0] == '-' && s[1] != '-';
    if (!is_long && !is_short) {
      if (cmd == nullptr) {
        cmd = FindCommand(commands, s);
        if (cmd == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat("blkbench: unknown command '", s, "' (see 'blkbench --help')"));
        }
        a.positional[0] = s;
      } else {
        a.positional.push_back(s);
      }
      continue;
    }
    std::string name, value;
    bool has_value = false;
    const FlagSpec* spec = nullptr;
    if (is_short) {
      spec = FindShort(GlobalFlags(), s[1]);
      if (spec == nullptr && cmd != nullptr) spec = FindShort(cmd->flags, s[1]);
      if (spec == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(where(), ": unknown option '", s, "'"));
      }
      name = spec->name;
    } else {
      name = s.substr(2);
      const size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      spec = FindFlag(GlobalFlags(), name);
      if (spec == nullptr && cmd != nullptr) spec = FindFlag(cmd->flags, name);
      if (spec == nullptr && cmd == nullptr) {
        // Before the command: accept any command's flag for now, check it later.
        for (const CommandSpec& c : commands) {
          if ((spec = FindFlag(c.flags, name)) != nullptr) break;
        }
        if (spec != nullptr) pending.emplace_back(s, name);
      }
      if (spec == nullptr) {
        const std::vector<std::string> owners = Owners(commands, name);
        if (!owners.empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where(), ": option '--", name, "' is for 'blkbench ",
                           absl::StrJoin(owners, "', 'blkbench "), "', not this command"));
        }
        return absl::InvalidArgumentError(absl::StrCat(where(), ": unknown option '--", name,
                                                       "' (see 'blkbench ",
                                                       cmd ? cmd->name + " " : "", "--help')"));
      }
    }
    if (spec->value.empty()) {
      if (has_value) {
        return absl::InvalidArgumentError(
            absl::StrCat(where(), ": option '--", name, "' takes no value"));
      }
    } else if (!has_value) {
      if (i + 1 >= argv.size()) {
        return absl::InvalidArgumentError(absl::StrCat(where(), ": option '--", name,
                                                       "' needs a value (", ValueText(*spec), ")"));
      }
      value = argv[++i];
    }
    if (!spec->choices.empty() &&
        std::find(spec->choices.begin(), spec->choices.end(), value) == spec->choices.end()) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": --", name, ": expected ",
                                                     absl::StrJoin(spec->choices, ", "), ", got '",
                                                     value, "'"));
    }
    a.flags[name] = value;
    a.values[name].push_back(value);
  }
  for (const auto& [typed, name] : pending) {
    if (cmd == nullptr || FindFlag(cmd->flags, name) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("blkbench: option '", typed, "' is for 'blkbench ",
                       absl::StrJoin(Owners(commands, name), "', 'blkbench "), "'",
                       cmd ? absl::StrCat(", not '", cmd->name, "'") : std::string()));
    }
  }
  if (a.flags.count("controller")) a.controller = a.flags["controller"];
  if (cmd != nullptr && !a.flags.count("help")) {
    const size_t given = a.positional.size() - 1;
    if (given < RequiredArgs(*cmd)) {
      return absl::InvalidArgumentError(absl::StrCat("usage: ", Synopsis(*cmd)));
    }
    // A last argument named "...]" or "..." takes any number (`import -- fio ARGS`).
    const bool variadic = !cmd->args.empty() && absl::StrContains(cmd->args.back(), "...");
    if (given > cmd->args.size() && !variadic) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": unexpected argument '",
                                                     a.positional[cmd->args.size() + 1],
                                                     "'\nusage: ", Synopsis(*cmd)));
    }
  }
  return a;
}

std::string Synopsis(const CommandSpec& c) {
  std::string s = absl::StrCat("blkbench ", c.name);
  if (!c.args.empty()) absl::StrAppend(&s, " ", ArgsText(c));
  for (const FlagSpec& f : c.flags) absl::StrAppend(&s, " [", FlagText(f), "]");
  return s;
}

std::string GlobalUsage(const std::vector<CommandSpec>& commands) {
  std::string out = "usage: blkbench [--controller ADDR] COMMAND [ARGS] [OPTIONS]\n\ncommands:\n";
  size_t width = 0;
  for (const CommandSpec& c : commands) {
    width = std::max(width, c.name.size() + 1 + ArgsText(c).size());
  }
  for (const CommandSpec& c : commands) {
    std::string head = c.name + (c.args.empty() ? "" : " " + ArgsText(c));
    absl::StrAppend(&out, "  ", head, std::string(width + 2 - head.size(), ' '), c.summary, "\n");
  }
  absl::StrAppend(&out, "\noptions:\n");
  for (const FlagSpec& f : GlobalFlags()) {
    absl::StrAppend(
        &out, "  ",
        f.short_name ? absl::StrCat("-", std::string(1, f.short_name), ", ") : std::string(),
        FlagText(f), "  ", f.help, "\n");
  }
  absl::StrAppend(&out,
                  "\n'blkbench COMMAND --help' prints a command's options. Exit codes: 0 ok, 1 "
                  "the command failed,\n2 usage, 3 controller unreachable (gate: 0 pass, 1 "
                  "regression, 2 inconclusive,\n3 could not run).\n");
  return out;
}

std::string CommandUsage(const CommandSpec& c) {
  std::string summary = c.summary;
  if (!summary.empty()) summary[0] = absl::ascii_toupper(summary[0]);
  std::string out = absl::StrCat("usage: ", Wrap(Synopsis(c), 88), "\n\n", summary, ".\n");
  if (!c.description.empty()) absl::StrAppend(&out, "\n", Wrap(c.description, 88), "\n");
  if (!c.flags.empty()) absl::StrAppend(&out, "\noptions:\n", FlagList(c.flags));
  absl::StrAppend(&out, "\nglobal options:\n", FlagList(GlobalFlags()));
  return out;
}

std::string BashCompletion(const std::vector<CommandSpec>& commands) {
  std::string names;
  for (const CommandSpec& c : commands) absl::StrAppend(&names, names.empty() ? "" : " ", c.name);
  std::string globals;
  for (const FlagSpec& f : GlobalFlags()) absl::StrAppend(&globals, " --", f.name);
  std::string out = absl::StrCat(
      "# bash completion for blkbench, generated by 'blkbench completion bash'.\n"
      "_blkbench() {\n"
      "  local cur prev cmd i\n"
      "  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
      "  prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
      "  cmd=\"\"\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case \"${COMP_WORDS[i]}\" in\n"
      "      --controller) i=$((i + 1)) ;;\n"
      "      -*) ;;\n"
      "      *) cmd=\"${COMP_WORDS[i]}\"; break ;;\n"
      "    esac\n"
      "  done\n"
      "  [ \"$prev\" = --controller ] && return 0\n"
      "  case \"$cmd\" in\n    \"\") COMPREPLY=($(compgen -W \"",
      names, globals, "\" -- \"$cur\")); return 0 ;;\n");
  for (const CommandSpec& c : commands) {
    absl::StrAppend(&out, "    ", c.name, ")\n      case \"$prev\" in\n");
    // A flag's value: its choices, files for FILE, nothing to offer otherwise.
    for (const FlagSpec& f : c.flags) {
      if (f.value.empty()) continue;
      if (!f.choices.empty()) {
        absl::StrAppend(&out, "        --", f.name, ") COMPREPLY=($(compgen -W \"",
                        absl::StrJoin(f.choices, " "), "\" -- \"$cur\")); return 0 ;;\n");
      } else if (f.value == "FILE") {
        absl::StrAppend(&out, "        --", f.name,
                        ") COMPREPLY=($(compgen -f -- \"$cur\")); return 0 ;;\n");
      } else {
        absl::StrAppend(&out, "        --", f.name, ") return 0 ;;\n");
      }
    }
    std::string flags = globals;
    for (const FlagSpec& f : c.flags) absl::StrAppend(&flags, " --", f.name);
    const bool files = !c.args.empty() && c.args[0] == "FILE";
    const bool shells = !c.args.empty() && c.args[0] == "SHELL";
    const bool commands_arg = !c.args.empty() && c.args[0] == "[COMMAND]";
    absl::StrAppend(&out, "      esac\n      COMPREPLY=($(compgen -W \"", flags,
                    shells ? " bash zsh" : "", commands_arg ? " " + names : "", "\" -- \"$cur\")",
                    files ? " $(compgen -f -- \"$cur\")" : "", ") ;;\n");
  }
  absl::StrAppend(&out, "  esac\n}\ncomplete -F _blkbench blkbench\n");
  return out;
}

std::string ZshCompletion(const std::vector<CommandSpec>& commands) {
  auto zsh_quote = [](const std::string& s) {
    return absl::StrReplaceAll(s, {{"'", "'\\''"}, {"[", "\\["}, {"]", "\\]"}, {":", "\\:"}});
  };
  auto flag_spec = [&](const FlagSpec& f) {
    std::string s = absl::StrCat("'--", f.name, "[", zsh_quote(f.help), "]");
    if (!f.choices.empty()) {
      absl::StrAppend(&s, ":", f.value.empty() ? "value" : f.value, ":(",
                      absl::StrJoin(f.choices, " "), ")");
    } else if (f.value == "FILE") {
      absl::StrAppend(&s, ":file:_files");
    } else if (!f.value.empty()) {
      absl::StrAppend(&s, ":", absl::AsciiStrToLower(f.value), ": ");
    }
    return s + "'";
  };
  std::string out =
      "#compdef blkbench\n# zsh completion for blkbench, generated by 'blkbench completion "
      "zsh'.\n_blkbench() {\n  local -a commands\n  commands=(\n";
  for (const CommandSpec& c : commands) {
    absl::StrAppend(&out, "    '", c.name, ":", zsh_quote(c.summary), "'\n");
  }
  absl::StrAppend(&out, "  )\n  local -a global\n  global=(\n");
  for (const FlagSpec& f : GlobalFlags()) absl::StrAppend(&out, "    ", flag_spec(f), "\n");
  absl::StrAppend(&out,
                  "  )\n  if (( CURRENT == 2 )); then\n    _describe command commands\n"
                  "    _arguments $global\n    return\n  fi\n  case $words[2] in\n");
  for (const CommandSpec& c : commands) {
    absl::StrAppend(&out, "    ", c.name, ") _arguments $global");
    for (const FlagSpec& f : c.flags) absl::StrAppend(&out, " ", flag_spec(f));
    if (!c.args.empty() && c.args[0] == "FILE") absl::StrAppend(&out, " '*:file:_files'");
    absl::StrAppend(&out, " ;;\n");
  }
  absl::StrAppend(&out, "  esac\n}\n_blkbench \"$@\"\n");
  return out;
}

std::string ManPage(const std::vector<CommandSpec>& commands, const std::string& version) {
  std::string out = absl::StrCat(
      ".\\\" blkbench(1), generated by 'blkbench man' from the CLI's command table.\n"
      ".TH BLKBENCH 1 \"\" \"blkbench ",
      Roff(version),
      "\" \"User Commands\"\n"
      ".SH NAME\nblkbench \\- submit, watch and gate block-layer benchmark matrices\n"
      ".SH SYNOPSIS\n.B blkbench\n[\\fB\\-\\-controller\\fR \\fIADDR\\fR] \\fICOMMAND\\fR "
      "[\\fIARGS\\fR] [\\fIOPTIONS\\fR]\n"
      ".SH DESCRIPTION\nblkbench answers one question for Linux block-layer developers: does "
      "this kernel change make I/O faster or slower, where, and by how much? A matrix of "
      "fio-style jobs is expanded into runs, placed on agents with real or simulated devices, "
      "and its results are stored, exported and gated.\n"
      ".SH COMMANDS\n");
  for (const CommandSpec& c : commands) {
    absl::StrAppend(&out, ".TP\n.B ", Roff(c.name), c.args.empty() ? "" : " ",
                    c.args.empty() ? "" : "\\fI" + Roff(ArgsText(c)) + "\\fR", "\n",
                    Roff(c.summary), ".");
    if (!c.description.empty()) absl::StrAppend(&out, " ", Roff(c.description));
    absl::StrAppend(&out, "\n");
    for (const FlagSpec& f : c.flags) {
      absl::StrAppend(&out, ".RS\n.TP\n.B \\-\\-", Roff(f.name),
                      f.value.empty() ? "" : " \\fI" + Roff(ValueText(f)) + "\\fR", "\n",
                      Roff(f.help), "\n.RE\n");
    }
  }
  absl::StrAppend(&out, ".SH OPTIONS\n");
  for (const FlagSpec& f : GlobalFlags()) {
    absl::StrAppend(&out, ".TP\n.B \\-\\-", Roff(f.name),
                    f.value.empty() ? "" : " \\fI" + Roff(f.value) + "\\fR", "\n", Roff(f.help),
                    "\n");
  }
  absl::StrAppend(
      &out,
      ".SH ENVIRONMENT\n.TP\n.B BLKBENCH_CONTROLLER\nthe controller address when "
      "\\-\\-controller is not given.\n"
      ".SH EXIT STATUS\n0 ok, 1 the command failed, 2 usage error, 3 controller unreachable. "
      "\\fBgate\\fR: 0 pass, 1 regression, 2 inconclusive, 3 could not run.\n"
      ".SH SEE ALSO\n.BR blkbench\\-controller (8),\n.BR blkbench\\-agent (8),\n.BR fio (1)\n");
  return out;
}

}  // namespace blkbench
