// The table of keys a matrix file may set: fio job options (with fio's names and
// meanings), block-layer queue settings, target selectors and null_blk parameters,
// each with a parser that writes one field of a CellSpec. Constant data but for the
// schedulers' tunables registered at start-up (common/iosched_tunables.h); thread-safe.
#ifndef BLKBENCH_WORKLOADS_JOB_OPTIONS_H_
#define BLKBENCH_WORKLOADS_JOB_OPTIONS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "blkbench/v1/workload.pb.h"
#include "common/iosched_tunables.h"
#include "common/resolved_job.h"

namespace blkbench::workloads {

// Where a key may be written in the matrix file.
enum class Scope {
  kJob,      // fio options and block-layer keys: under job: or matrix:
  kTarget,   // device_class, kernel: under target: or matrix:
  kNullBlk,  // null_blk configfs parameters: under device: null_blk:
};

struct OptionDef {
  // The key as written in the file ("iodepth_batch"); null_blk parameters are
  // qualified ("null_blk.irqmode").
  std::string_view name;
  // The option it sets; differs from `name` only for aliases (iodepth_batch sets
  // iodepth_batch_submit, rwmixwrite sets rwmixread). Two keys with the same
  // canonical name may not both appear in one file.
  std::string_view canonical;
  Scope scope;
  // What a valid value looks like, completing "expected ...".
  std::string_view expected;
  // Parses `value` into its field of `cell`. Returns false, leaving `cell` in an
  // unspecified state, when the value is not what `expected` describes.
  bool (*apply)(std::string_view value, v1::CellSpec& cell);
  // A scheduler's tunable (common/iosched_tunables.h) instead of `apply`: the value goes
  // to QueueSettings.iosched[name] in sysfs's decimal.
  const IoschedTunableDef* tunable = nullptr;

  // What every caller uses: `apply`, or the tunable's store.
  bool Apply(std::string_view value, v1::CellSpec& cell) const;
};

// fio's defaults for the fields a matrix does not set (fio options.c .def values).
inline constexpr uint32_t kDefaultRwmixread = 50;  // fio: "rwmixread ... .def = 50"
inline constexpr uint64_t kDefaultBs = 4096;       // fio: bs=4k
inline constexpr uint32_t kDefaultIodepth = 1;
inline constexpr uint32_t kDefaultNumjobs = 1;
inline constexpr uint32_t kDefaultBatchSubmit = 1;       // fio iodepth_batch .def = 1
inline constexpr uint32_t kDefaultBatchCompleteMin = 1;  // fio .def = 1
inline constexpr uint64_t kDefaultRandseed = 0x89;       // fio randseed .def = "0x89"
// The highest `trace:` level (1: the block-layer summary; CellSpec.trace).
inline constexpr uint32_t kMaxTrace = 1;
// kMaxIodepth, kMaxUringDepth, kMaxNumjobs and kSectorSize: common/resolved_job.h.

// The option named `name` (as written), or nullptr.
const OptionDef* FindOption(std::string_view name);

// Every key valid in `scope`, in table order (for suggestions and docs).
std::vector<std::string_view> OptionNames(Scope scope);

// A cell holding fio's defaults, before any key is applied:
//   rw=read, rwmixread=50, bs=4k, size=0 (whole device), offset=0, iodepth=1,
//   numjobs=1, iodepth_batch_submit=1 (submit each I/O as it is queued),
//   iodepth_batch_complete_min=1 (wait for at least one completion),
//   iodepth_batch_complete_max=0 (unset; see ResolveDerivedDefaults), direct=0
//   (buffered), runtime=0 (run until size/io_size is done), ramp_time=0,
//   time_based=0, ioengine=psync, hipri/fixedbufs/registerfiles/sqthread_poll=0,
//   thread=0 (jobs are processes), cpus_allowed="" (any), randseed=0x89.
//   Queue settings are empty (leave the device as found), cgroup "" (root).
v1::CellSpec DefaultCell();

// Fills fields whose fio default depends on other fields (fio init.c
// fixup_options): iodepth_batch_submit=0 means iodepth; iodepth_batch_complete_max
// unset (0) means iodepth_batch_complete_min (at least 1), which is what fio uses
// when it is not given. Also fills the groups of a one or per-job cgroup layout, which
// depend on numjobs (FillCgroupGroups). Call after every key has been applied.
void ResolveDerivedDefaults(v1::CellSpec& cell);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_JOB_OPTIONS_H_
