// Internal to workloads/: what fio_import.cc's job conversion shares with the import of
// several fio jobs that run at once (fio_import_jobs.cc): one fio job's options as matrix
// keys, and the YAML helpers.
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
// first-written order) and a comment for each option not carried over.
struct Converted {
  std::vector<std::string> key_order;
  std::map<std::string, Carried> values;
  std::vector<std::string> comments;  // each without the leading "# "
  std::string name, description, filename, filename_where;
  std::string cgroup_name, cgroup_weight;
  uint32_t files = 1;  // filename=a:b:... (when several devices are allowed)
};

// `several_devices`: the target can be several devices (a sim: class engine.devices
// takes), so filename=a:b becomes `files`; otherwise the first file is the target and the
// rest a comment.
Converted ConvertJob(const FioJob& job, bool several_devices = false);

// `v` as a YAML scalar: plain when it can be, else single-quoted.
std::string YamlScalar(std::string_view v);
// A device class guessed from a fio filename (/dev/nvme0n1 -> nvme, ...).
std::string GuessClass(std::string_view filename);
// A valid matrix name from a fio job name.
std::string MatrixName(std::string_view job);

// How many of `jobs`, from the first, fio starts at once: up to (not including) the
// first job that waits for the ones before it (stonewall, wait_for_previous, wait_for).
size_t ConcurrentJobs(const FioJobs& jobs);

// The matrix for the first `concurrent` (> 1) jobs as one cell's named jobs (jobs:):
// options every job sets alike under job:, the rest per job, fio's cgroup= and
// cgroup_weight= per job as a layout of named groups. ImportFio's contract otherwise.
absl::StatusOr<FioImport> ImportConcurrentFio(const FioJobs& jobs, size_t concurrent,
                                              const FioImportOptions& options);

// Appends to `y` the jobs from `concurrent` on (not imported: they wait for the earlier
// ones, and a cell runs its jobs at once) and fio's own options, as comments, with notes.
void AppendTrailer(const FioJobs& jobs, size_t concurrent, std::string& y, FioImport& result);

// Ends the matrix text `y` (its job keys written) for both importers: the target with the
// device class and its note, the kernel, the trailer, then the result's yaml and, if the
// matrix parser refuses it, its problems.
FioImport FinishImport(std::string y, const std::string& device_class,
                       const std::string& class_comment, const FioImportOptions& options,
                       const FioJobs& jobs, size_t concurrent, FioImport result);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_FIO_IMPORT_JOBS_H_
