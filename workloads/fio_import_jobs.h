// Internal to workloads/: what fio_import.cc's job conversion shares with the import of
// several fio jobs that run at once (fio_import_jobs.cc) and with fio's stonewall phases
// (fio_import_phases.cc): one fio job's options as matrix keys, the target's class, the
// phases, and the matrix's end.
#ifndef BLKBENCH_WORKLOADS_FIO_IMPORT_JOBS_H_
#define BLKBENCH_WORKLOADS_FIO_IMPORT_JOBS_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "workloads/fio_import.h"

namespace blkbench::workloads {

// One matrix key carried over: its value, where fio's option was, fio's spelling.
struct Carried {
  std::string value, where, fio_key;
};

// What one fio job's options became: matrix keys (last value wins, as in fio; in
// first-written order), a comment for each option not carried over, and the drops.
struct Converted {
  std::vector<std::string> key_order;
  std::map<std::string, Carried> values;
  std::vector<std::string> comments;  // each without the leading "# "
  std::vector<FioDrop> drops;         // each option not carried over (not waits: phases')
  std::string name, description, filename, filename_where;
  std::string cgroup_name, cgroup_weight, cgroup_where;
  uint32_t files = 1;  // filename=a:b:... (when several devices are allowed)
};

// `several_devices`: the target can be several devices (a sim: class engine.devices
// takes), so filename=a:b becomes `files`; otherwise the first file is the target and the
// rest a comment.
Converted ConvertJob(const FioJob& job, bool several_devices = false);

// The option an fio option `key` sets: fio's canonical name for an alias (io_limit ->
// io_size, readwrite -> rw), the matrix table's for its own (bsrange -> bs).
std::string CanonicalKey(std::string_view key);

// A device class from fio's filename, only where the name says it: a block device's
// kernel name (/dev/nvme0n1 -> nvme, /dev/sdb -> sd, /dev/nullb0 -> null_blk, /dev/vda ->
// vd, /dev/loop3 -> loop, ...; `guessed`), a path outside /dev (a regular file -> file,
// not guessed). "" for anything else (/dev/null, /dev/disk/by-id/...): no class to guess.
struct ClassGuess {
  std::string device_class;
  bool guessed = false;
};
ClassGuess GuessClass(std::string_view filename);

// The target's class and its comment: options.device_class when given, else what
// GuessClass makes of the first job's filename (a guess is labelled one, in the comment
// and a note), else the placeholder CHANGE-ME, which validate refuses.
struct TargetClass {
  std::string device_class, comment;
};
TargetClass ChooseClass(const Converted& first, const FioImportOptions& options, FioImport& result);

// A valid matrix name from a fio job name.
std::string MatrixName(std::string_view job);
// The name of a matrix whose cells are fio's phases: the job file's name without its
// directory and .fio ("ssd-test"), or the first job's on a command line.
std::string PhasedName(std::string_view source, std::string_view first_job);

// Appends `indent key: value` to `y`, the value quoted where YAML needs it, with a
// comment naming fio's spelling when it differs (ioscheduler -> scheduler).
void AppendKey(std::string& y, const char* indent, const std::string& key, const Carried& c);

// Adds `drops` to result.dropped, each (where, what) once: a [global] option is in
// every job's conversion.
void AddDrops(const std::vector<FioDrop>& drops, FioImport& result);

// How fio's phases are imported. fio starts every job at once up to one that waits for
// those before it (stonewall, wait_for_previous, wait_for): each such job starts a phase.
// The first phase is always imported (a cell's jobs run at once). The later ones become
// the values of one matrix axis when every phase has as many jobs, each job the same as
// its twin in the first phase but for one key, the same within a phase (fio's
// examples/ssd-test.fio: rw=read, randread, write, randwrite); otherwise they are dropped.
struct PhasePlan {
  size_t first_phase_jobs = 0;           // jobs[0, first_phase_jobs) run at once in fio
  size_t phases = 1;                     // how many phases the jobs make
  std::string axis_key;                  // "" = no axis: the jobs after the first phase are dropped
  std::vector<std::string> axis_values;  // one per phase, in fio's order
  std::vector<std::string> axis_sources;  // each phase's first job: "[seq-read] (ssd.fio:12)"
  std::string no_axis_why;                // why the later phases are not an axis
  // The wait_for= options that are no phase boundary in fio (the job waits for one job
  // while others run on, or the jobs after it do not wait): a phase here runs what fio
  // would not run alone.
  std::vector<FioDrop> wait_drops;
};
PhasePlan PlanPhases(const FioJobs& jobs);

// The jobs of the first phase as the importers convert them: with the axis key and the
// waits (the phases' boundaries, now the axis) taken out; fio's own options kept.
FioJobs FirstPhase(const FioJobs& jobs, const PhasePlan& plan);

// The matrix for the first phase's jobs (`first`, more than one) as one cell's named jobs
// (jobs:): options every job sets alike under job:, the rest per job, fio's cgroup= and
// cgroup_weight= per job as a layout of named groups. ImportFio's contract otherwise.
absl::StatusOr<FioImport> ImportConcurrentFio(const FioJobs& first, const FioJobs& all,
                                              const PhasePlan& plan,
                                              const FioImportOptions& options);

// Ends the matrix text `y` (its job keys written) for both importers: the phases' axis,
// the target with its class, the kernel, the jobs not imported and fio's own options as
// comments; the drops that change the workload as a block at the top; then the result's
// yaml and, if the matrix parser refuses it, its problems.
FioImport FinishImport(std::string y, const TargetClass& target, const FioImportOptions& options,
                       const FioJobs& all, const PhasePlan& plan, FioImport result);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_FIO_IMPORT_JOBS_H_
