// fio job files and fio command lines turned into matrix YAML (`blkbench import`).
//
// A kernel developer arrives with `fio -filename=/dev/nullb0 -name=test -rw=randwrite …`
// pasted from a mailing list, or with a `.fio` job file. The importer reads either the
// way fio does — `[global]` sections apply to the jobs after them, a job's own options
// override them, on the command line options before the first `--name` are global —
// and writes a matrix that `blkbench validate` accepts, with every fio option it could
// not carry over as a comment that says why and in `dropped` (never silently lost). What
// each option becomes is the matrix key table's business (job_options.h): an option the
// table knows and whose value it accepts is carried over as written; anything else is
// dropped. A drop that makes the matrix run something else than fio would (an ioengine
// or access pattern blkbench lacks, a job it cannot run) changes the workload: the caller
// refuses the import unless told to be lossy, and the matrix then lists them at its top.
//
//   auto file = ParseFioJobFile(text, "seed.fio");          // or ParseFioCommandLine(argv)
//   auto imported = ImportFio(*file, {.source = "seed.fio", .device_class = "sda"});
//   if (imported->ChangesWorkload() && !lossy) refuse;       // dropped, notes: stderr
//   std::cout << imported->yaml;
#ifndef BLKBENCH_WORKLOADS_FIO_IMPORT_H_
#define BLKBENCH_WORKLOADS_FIO_IMPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace blkbench::workloads {

// One option as written: `key=value`, or a bare `key` (value "", has_value false).
struct FioOption {
  std::string key;
  std::string value;
  bool has_value = false;
  std::string where;  // "seed.fio:7" or "argument 4", for comments and notes
};

// One fio job (a section other than [global], or a --name on the command line) with the
// global options in force where it was defined, then its own, in the order written.
struct FioJob {
  std::string name;
  std::vector<FioOption> options;
  std::string where;  // its section header or --name: "seed.fio:12", "argument 3"
};

struct FioJobs {
  std::vector<FioJob> jobs;
  // Options that are fio's own, not any job's (--output-format, --eta, …).
  std::vector<FioOption> program_options;
};

// Parses a fio job file (INI: `[section]`, `key=value` or a bare `key`, comments after
// `#` or `;`). InvalidArgument "FILE:LINE: …" for a line that is none of these or for an
// option before the first section. A file with only [global] yields no jobs.
absl::StatusOr<FioJobs> ParseFioJobFile(std::string_view text, std::string_view file_name);

// Parses a fio command line: `argv` with or without the leading `fio`, options as
// `--opt=value`, `-opt=value`, a bare `--opt` / `-opt`, or `--opt value` for options
// that take one. `--name` starts a job; options before the first one are global. With no
// --name at all the options form one job called "job" (as fio would refuse, but a
// pasted line often omits it).
absl::StatusOr<FioJobs> ParseFioCommandLine(const std::vector<std::string>& argv);

struct FioImportOptions {
  std::string source;        // named in the header comment ("seed.fio", "the command line")
  std::string device_class;  // target.device_class; "" = from filename (flagged if guessed)
  std::string kernel;        // target.kernel; "" = none
  // The name `problems` gives the matrix written: the output file, or "the matrix above"
  // when it goes to stdout. Its lines and columns are the matrix's, not the fio file's.
  std::string output_name = "the matrix above";
};

// A fio option or job the matrix does not carry over.
struct FioDrop {
  std::string where;  // "seed.fio:7", "argument 4"
  std::string what;   // "ioengine=net", "job 'rand-read'"
  std::string why;    // "blkbench's 'ioengine' expects one of io_uring, ..."
  // The matrix runs something else than fio would: another engine, access pattern or
  // size mix, fewer jobs. False for what only changes fio's reports and logs.
  bool changes_workload = false;
};

struct FioImport {
  std::string yaml;  // the matrix (drops that change the workload listed at its top)
  // Every option and job not carried over, in input order, each once.
  std::vector<FioDrop> dropped;
  std::vector<std::string> notes;  // what the user should confirm or know, one per line
  // ParseMatrix's errors for `yaml` ("" when it validates): what fio accepted and
  // blkbench does not, seen together (time_based with a runtime it could not carry over).
  std::string problems;

  bool ChangesWorkload() const;
};

// The matrix for `jobs`, checked with ParseMatrix. Jobs that fio runs one phase after
// another (stonewall) and that differ in one option only become that option's matrix
// axis, one cell per phase; other phases are dropped. Fails with InvalidArgument only
// when there is no job.
absl::StatusOr<FioImport> ImportFio(const FioJobs& jobs, const FioImportOptions& options);

// Whether `text` reads as a fio job file rather than YAML: its first line that is not
// blank or a comment is a `[section]` header (its 1-based line in `*header_line` when
// given). ParseMatrix then says "convert it with blkbench import".
bool LooksLikeFioJobFile(std::string_view text, int* header_line = nullptr);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_FIO_IMPORT_H_
