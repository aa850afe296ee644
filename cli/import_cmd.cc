// `blkbench import` (import_cmd.h).
#include "cli/import_cmd.h"

#include <fstream>
#include <string>
#include <vector>

#include "cli/command_registry.h"
#include "workloads/fio_import.h"

namespace blkbench {
int CmdImport(const Args& a, Client*, std::ostream& out, std::ostream& err) {
  const std::vector<std::string> args(a.positional.begin() + 1, a.positional.end());
  if (args.empty()) {
    err << "blkbench import: give a fio job file, or a fio command line after --\n";
    return 2;
  }
  // One argument that is not an option or "fio" is a job file; anything else, fio's argv.
  const bool is_file = args.size() == 1 && args[0].rfind('-', 0) != 0 && args[0] != "fio";
  absl::StatusOr<workloads::FioJobs> jobs;
  std::string source;
  if (is_file) {
    source = args[0];
    std::ifstream in(source);
    if (!in) {
      err << "blkbench import: cannot read '" << source << "'\n";
      return 1;
    }
    // Bounded like a matrix (a pipe such as /dev/stdin is fine, /dev/zero is not).
    constexpr size_t kMaxJobFileBytes = 4 << 20;
    std::string text(kMaxJobFileBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxJobFileBytes) {
      err << "blkbench import: '" << source << "' is larger than " << kMaxJobFileBytes
          << " bytes\n";
      return 1;
    }
    jobs = workloads::ParseFioJobFile(text, source);
  } else {
    source = "a fio command line";
    jobs = workloads::ParseFioCommandLine(args);
  }
  if (!jobs.ok()) {
    err << "blkbench import: " << jobs.status().message() << "\n";
    return 1;
  }
  const std::string output = a.Get("output");
  workloads::FioImportOptions options{
      .source = source, .device_class = a.Get("device-class"), .kernel = a.Get("kernel")};
  if (!output.empty()) options.output_name = output;
  auto imported = workloads::ImportFio(*jobs, options);
  if (!imported.ok()) {
    err << "blkbench import: " << imported.status().message() << "\n";
    return 1;
  }
  // Every option not carried over, where the fio input has it.
  for (const workloads::FioDrop& d : imported->dropped) {
    err << "blkbench import: " << (d.where.empty() ? source : d.where) << ": " << d.what << ": "
        << (d.changes_workload ? "lost, the workload changes: " : "not carried over: ") << d.why
        << "\n";
  }
  for (const std::string& note : imported->notes) err << "blkbench import: " << note << "\n";
  if (imported->ChangesWorkload() && !a.flags.count("lossy")) {
    err << "blkbench import: refused: the matrix would not run what " << source
        << " runs (the losses above); --lossy writes it anyway, with them listed at its top\n";
    return 1;
  }
  if (output.empty()) {
    out << imported->yaml;
  } else {
    std::ofstream file(output, std::ios::trunc);
    file << imported->yaml;
    if (!file.flush()) {
      err << "blkbench import: cannot write '" << output << "'\n";
      return 1;
    }
  }
  if (!imported->problems.empty()) {
    err << "blkbench import: " << (output.empty() ? "the matrix above" : output)
        << " does not validate; edit it:\n"
        << imported->problems << "\n";
    return 1;
  }
  return 0;
}

CommandSpec ImportCommand() {
  return {.name = "import",
          .args = {"[FILE]", "[FIO-ARGS...]"},
          .summary = "turn a fio job file or a fio command line into a matrix",
          .description =
              "Writes a matrix that validates to stdout: fio's [global] and per-job inheritance, "
              "options before the first --name as global, stonewall phases that differ in one "
              "option as that option's axis, every option it cannot carry over as a comment with "
              "the reason and on stderr with its place in the fio input. When something lost "
              "changes the workload (an ioengine, access pattern or size mix blkbench lacks, jobs "
              "it cannot run) it refuses (exit 1) unless --lossy. Give a .fio FILE, or the command "
              "line after '--' (with or without the leading 'fio'). What to confirm (a device "
              "class guessed from filename=) goes to stderr.",
          .flags = {{"device-class", "CLASS", "target.device_class (default: from filename=)"},
                    {"kernel", "GLOB", "target.kernel, e.g. 6.* or sim:6.16"},
                    {"lossy", "",
                     "write the matrix although it loses what changes the workload (listed at its "
                     "top)"},
                    {"output",
                     "FILE",
                     "write the matrix to FILE (errors then name it), not stdout",
                     {},
                     'o'}},
          .run = CmdImport};
}

}  // namespace blkbench
