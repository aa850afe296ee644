// The key table: each matrix key, where it may appear, what it expects, and the
// parser that writes it into a CellSpec. fio names and ranges follow fio options.c.
#include "workloads/job_options.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "blkbench/v1/workload.pb.h"
#include "common/resolved_job.h"
#include "common/sim_vocabulary.h"
#include "workloads/cgroup_layout.h"
#include "workloads/labels.h"
#include "workloads/units.h"

namespace blkbench::workloads {
namespace {

using v1::CellSpec;
using v1::JobSpec;

// --- Field parsers, templated on the protobuf setter so each table row is one line.

template <auto Setter, uint64_t kLo, uint64_t kHi>
bool JobUint(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseUint(s);
  if (!v.ok() || *v < kLo || *v > kHi) return false;
  (cell.mutable_job()->*Setter)(*v);
  return true;
}

// A size that must be a multiple of kMultiple and at least kMin.
template <auto Setter, uint64_t kMultiple, uint64_t kMin>
bool JobSize(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseSize(s);
  if (!v.ok() || *v % kMultiple != 0 || *v < kMin) return false;
  (cell.mutable_job()->*Setter)(*v);
  return true;
}

template <auto Setter>
bool JobDuration(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseDurationNs(s);
  if (!v.ok()) return false;
  (cell.mutable_job()->*Setter)(*v);
  return true;
}

template <auto Setter>
bool JobBool(std::string_view s, CellSpec& cell) {
  absl::StatusOr<bool> v = ParseBool(s);
  if (!v.ok()) return false;
  (cell.mutable_job()->*Setter)(*v);
  return true;
}

bool ApplyRw(std::string_view s, CellSpec& cell) {
  struct Mode {
    std::string_view name;
    v1::RwMode mode;
  };
  static constexpr Mode kModes[] = {
      {"read", v1::READ},           {"write", v1::WRITE},   {"randread", v1::RANDREAD},
      {"randwrite", v1::RANDWRITE}, {"randrw", v1::RANDRW}, {"rw", v1::READWRITE},
      {"readwrite", v1::READWRITE},
  };
  for (const Mode& m : kModes) {
    if (m.name == s) {
      cell.mutable_job()->set_rw(m.mode);
      return true;
    }
  }
  return false;
}

// fio's rwmixwrite is the inverse of rwmixread (fio options.c .inverse).
bool ApplyRwmixwrite(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseUint(s);
  if (!v.ok() || *v > 100) return false;
  cell.mutable_job()->set_rwmixread(static_cast<uint32_t>(100 - *v));
  return true;
}

// The engine vocabulary is common/resolved_job.h's (IoEngines), shared with the agent.
bool ApplyIoengine(std::string_view s, CellSpec& cell) {
  const IoEngineInfo* e = FindIoEngine(s);
  if (e == nullptr) return false;
  cell.mutable_job()->set_ioengine(e->proto);
  return true;
}

bool ApplyCpusAllowed(std::string_view s, CellSpec& cell) {
  if (!CheckCpuList(s).ok()) return false;
  cell.mutable_job()->set_cpus_allowed(std::string(s));
  return true;
}

bool ApplyScheduler(std::string_view s, CellSpec& cell) {
  if (!IsKnownScheduler(s)) return false;
  cell.mutable_queue()->set_scheduler(std::string(s));
  return true;
}

template <auto Setter>
bool QueueUint(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseUint(s);
  if (!v.ok() || *v < 1 || *v > UINT32_MAX) return false;
  (cell.mutable_queue()->*Setter)(static_cast<uint32_t>(*v));
  return true;
}

// The layout's label as written (CellSpec.cgroup, "" for root) and its parsed form; the
// groups of one and per-job depend on numjobs and are filled by ResolveDerivedDefaults.
bool ApplyCgroup(std::string_view s, CellSpec& cell) {
  absl::StatusOr<v1::CgroupLayout> layout = ParseCgroupLayout(s);
  if (!layout.ok()) return false;
  cell.set_cgroup(layout->kind() == v1::CgroupLayout::ROOT ? "" : std::string(s));
  *cell.mutable_cgroup_layout() = std::move(*layout);
  return true;
}

// Real classes are free-form labels; a simulated one names its model after "sim:".
bool ApplyDeviceClass(std::string_view s, CellSpec& cell) {
  if (s.empty() || s == "sim:" || !LabelProblem(s).empty()) return false;
  cell.mutable_target()->set_device_class(std::string(s));
  return true;
}

bool ApplyKernel(std::string_view s, CellSpec& cell) {
  if (s.empty() || s == "sim:") return false;
  cell.mutable_target()->set_kernel(std::string(s));
  return true;
}

// A machine profile name (engine/profiles/<name>.yaml) or a path to one.
bool ApplyMachine(std::string_view s, CellSpec& cell) {
  if (s.empty()) return false;
  cell.mutable_target()->set_machine(std::string(s));
  return true;
}

// null_blk configfs attributes are written as decimal text; normalize to that.
bool SetNullBlk(std::string_view s, std::string_view param, uint64_t lo, uint64_t hi,
                CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseUint(s);
  if (!v.ok() || *v < lo || *v > hi) return false;
  (*cell.mutable_device_params())[std::string(param)] = absl::StrCat(*v);
  return true;
}

constexpr std::string_view kBool = "a boolean (0, 1, true or false)";
constexpr std::string_view kSize = "a size (e.g. 512k, 1g, or bytes)";
// common/resolved_job.h IoEngineNames(), in its order (matrix_errors_test checks they agree).
constexpr std::string_view kIoengineChoices = "one of io_uring, libaio, psync, sync, pvsync2";
constexpr std::string_view kDuration = "a duration (e.g. 30s, 500ms, 2m; a bare number is seconds)";

constexpr OptionDef kOptions[] = {
    // fio job options (fio HOWTO names and meanings).
    {"rw", "rw", Scope::kJob, "one of read, write, randread, randwrite, randrw, rw, readwrite",
     &ApplyRw},
    {"rwmixread", "rwmixread", Scope::kJob, "a percentage from 0 to 100",
     &JobUint<&JobSpec::set_rwmixread, 0, 100>},
    {"rwmixwrite", "rwmixread", Scope::kJob, "a percentage from 0 to 100", &ApplyRwmixwrite},
    {"bs", "bs", Scope::kJob, "a size that is a multiple of 512 (e.g. 4k)",
     &JobSize<&JobSpec::set_bs, kSectorSize, kSectorSize>},
    {"size", "size", Scope::kJob, kSize, &JobSize<&JobSpec::set_size, 1, 0>},
    {"offset", "offset", Scope::kJob, kSize, &JobSize<&JobSpec::set_offset, 1, 0>},
    {"offset_increment", "offset_increment", Scope::kJob, kSize,
     &JobSize<&JobSpec::set_offset_increment, 1, 0>},
    {"io_size", "io_size", Scope::kJob, kSize, &JobSize<&JobSpec::set_io_size, 1, 0>},
    {"iodepth", "iodepth", Scope::kJob, "an integer from 1 to 65536",
     &JobUint<&JobSpec::set_iodepth, 1, kMaxIodepth>},
    {"numjobs", "numjobs", Scope::kJob, "an integer from 1 to 4096",
     &JobUint<&JobSpec::set_numjobs, 1, kMaxNumjobs>},
    {"iodepth_batch_submit", "iodepth_batch_submit", Scope::kJob,
     "an integer from 0 to 65536 (0 means iodepth)",
     &JobUint<&JobSpec::set_iodepth_batch_submit, 0, kMaxIodepth>},
    {"iodepth_batch", "iodepth_batch_submit", Scope::kJob,
     "an integer from 0 to 65536 (0 means iodepth)",
     &JobUint<&JobSpec::set_iodepth_batch_submit, 0, kMaxIodepth>},
    {"iodepth_batch_complete_min", "iodepth_batch_complete_min", Scope::kJob,
     "an integer from 0 to 65536",
     &JobUint<&JobSpec::set_iodepth_batch_complete_min, 0, kMaxIodepth>},
    {"iodepth_batch_complete", "iodepth_batch_complete_min", Scope::kJob,
     "an integer from 0 to 65536",
     &JobUint<&JobSpec::set_iodepth_batch_complete_min, 0, kMaxIodepth>},
    {"iodepth_batch_complete_max", "iodepth_batch_complete_max", Scope::kJob,
     "an integer from 0 to 65536 (0 means iodepth_batch_complete_min)",
     &JobUint<&JobSpec::set_iodepth_batch_complete_max, 0, kMaxIodepth>},
    {"direct", "direct", Scope::kJob, kBool, &JobBool<&JobSpec::set_direct>},
    {"runtime", "runtime", Scope::kJob, kDuration, &JobDuration<&JobSpec::set_runtime_ns>},
    {"ramp_time", "ramp_time", Scope::kJob, kDuration, &JobDuration<&JobSpec::set_ramp_time_ns>},
    {"time_based", "time_based", Scope::kJob, kBool, &JobBool<&JobSpec::set_time_based>},
    {"ioengine", "ioengine", Scope::kJob, kIoengineChoices, &ApplyIoengine},
    {"hipri", "hipri", Scope::kJob, kBool, &JobBool<&JobSpec::set_hipri>},
    {"fixedbufs", "fixedbufs", Scope::kJob, kBool, &JobBool<&JobSpec::set_fixedbufs>},
    {"registerfiles", "registerfiles", Scope::kJob, kBool, &JobBool<&JobSpec::set_registerfiles>},
    {"sqthread_poll", "sqthread_poll", Scope::kJob, kBool, &JobBool<&JobSpec::set_sqthread_poll>},
    {"thread", "thread", Scope::kJob, kBool, &JobBool<&JobSpec::set_thread>},
    {"cpus_allowed", "cpus_allowed", Scope::kJob, "a CPU list like 0-3,6", &ApplyCpusAllowed},
    {"randseed", "randseed", Scope::kJob, "an unsigned integer (decimal or 0x hex)",
     &JobUint<&JobSpec::set_randseed, 0, UINT64_MAX>},
    // Block-layer settings applied through sysfs and cgroupfs.
    // The text lists common/sim_vocabulary.h's Schedulers() (matrix_test.cc checks).
    {"scheduler", "scheduler", Scope::kJob, "one of none, mq-deadline, bfq, kyber",
     &ApplyScheduler},
    {"nr_requests", "nr_requests", Scope::kJob, "a positive integer",
     &QueueUint<&v1::QueueSettings::set_nr_requests>},
    {"max_sectors_kb", "max_sectors_kb", Scope::kJob, "a positive integer",
     &QueueUint<&v1::QueueSettings::set_max_sectors_kb>},
    {"cgroup", "cgroup", Scope::kJob,
     "root, one, one:<weight>, per-job, or groups as name:weight*jobs,... (e.g. "
     "heavy:1000*1,light:100*1; weights 1 to 1000, names of a-z 0-9 _ -)",
     &ApplyCgroup},
    // Block-layer evidence (agent/device/block_trace.h): off unless asked for, as it
    // costs IOPS (docs/performance.md).
    {"trace", "trace", Scope::kJob, "0 (off) or 1 (block-layer trace summary)",
     [](std::string_view s, CellSpec& c) {
       absl::StatusOr<uint64_t> v = ParseUint(s);
       if (!v.ok() || *v > kMaxTrace) return false;
       c.set_trace(static_cast<uint32_t>(*v));
       return true;
     }},
    // Where a cell may run.
    {"device_class", "device_class", Scope::kTarget,
     "a device class of up to 128 printable characters (e.g. null_blk, nvme, sim:null_blk)",
     &ApplyDeviceClass},
    {"kernel", "kernel", Scope::kTarget, "a kernel release glob (e.g. 6.*) or sim:<profile>",
     &ApplyKernel},
    {"machine", "machine", Scope::kTarget,
     "an engine machine profile (e.g. small-vm, desktop-16, server-128-4node)", &ApplyMachine},
    // null_blk configfs parameters (Documentation/block/null_blk.rst).
    {"null_blk.submit_queues", "null_blk.submit_queues", Scope::kNullBlk,
     "an integer from 1 to 65536",
     [](std::string_view s, CellSpec& c) {
       return SetNullBlk(s, "null_blk.submit_queues", 1, 65536, c);
     }},
    {"null_blk.hw_queue_depth", "null_blk.hw_queue_depth", Scope::kNullBlk,
     "an integer from 1 to 65536",
     [](std::string_view s, CellSpec& c) {
       return SetNullBlk(s, "null_blk.hw_queue_depth", 1, 65536, c);
     }},
    {"null_blk.completion_nsec", "null_blk.completion_nsec", Scope::kNullBlk,
     "an integer number of nanoseconds",
     [](std::string_view s, CellSpec& c) {
       return SetNullBlk(s, "null_blk.completion_nsec", 0, UINT32_MAX, c);
     }},
    {"null_blk.irqmode", "null_blk.irqmode", Scope::kNullBlk, "0 (none), 1 (softirq) or 2 (timer)",
     [](std::string_view s, CellSpec& c) { return SetNullBlk(s, "null_blk.irqmode", 0, 2, c); }},
    {"null_blk.blocksize", "null_blk.blocksize", Scope::kNullBlk, "512, 1024, 2048 or 4096",
     [](std::string_view s, CellSpec& c) {
       absl::StatusOr<uint64_t> v = ParseSize(s);
       if (!v.ok() || *v < 512 || *v > 4096 || (*v & (*v - 1)) != 0) return false;
       (*c.mutable_device_params())["null_blk.blocksize"] = absl::StrCat(*v);
       return true;
     }},
    {"null_blk.memory_backed", "null_blk.memory_backed", Scope::kNullBlk, kBool,
     [](std::string_view s, CellSpec& c) {
       absl::StatusOr<bool> v = ParseBool(s);
       if (!v.ok()) return false;
       (*c.mutable_device_params())["null_blk.memory_backed"] = absl::StrCat(*v ? 1 : 0);
       return true;
     }},
    {"null_blk.size", "null_blk.size", Scope::kNullBlk, "the device size in MiB, 1 or more",
     [](std::string_view s, CellSpec& c) {
       return SetNullBlk(s, "null_blk.size", 1, UINT32_MAX, c);
     }},
    {"null_blk.home_node", "null_blk.home_node", Scope::kNullBlk, "a NUMA node from 0 to 1023",
     [](std::string_view s, CellSpec& c) {
       return SetNullBlk(s, "null_blk.home_node", 0, 1023, c);
     }},
    {"null_blk.queue_mode", "null_blk.queue_mode", Scope::kNullBlk,
     "0 (bio), 1 (single queue) or 2 (multi-queue)",
     [](std::string_view s, CellSpec& c) { return SetNullBlk(s, "null_blk.queue_mode", 0, 2, c); }},
};

}  // namespace

const OptionDef* FindOption(std::string_view name) {
  for (const OptionDef& def : kOptions) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

std::vector<std::string_view> OptionNames(Scope scope) {
  std::vector<std::string_view> names;
  for (const OptionDef& def : kOptions) {
    if (def.scope == scope) names.push_back(def.name);
  }
  return names;
}

CellSpec DefaultCell() {
  CellSpec cell;
  JobSpec* job = cell.mutable_job();
  job->set_rw(v1::READ);
  job->set_rwmixread(kDefaultRwmixread);
  job->set_bs(kDefaultBs);
  job->set_iodepth(kDefaultIodepth);
  job->set_numjobs(kDefaultNumjobs);
  job->set_iodepth_batch_submit(kDefaultBatchSubmit);
  job->set_iodepth_batch_complete_min(kDefaultBatchCompleteMin);
  job->set_iodepth_batch_complete_max(0);
  job->set_ioengine(v1::PSYNC);
  job->set_randseed(kDefaultRandseed);
  return cell;
}

void ResolveDerivedDefaults(CellSpec& cell) {
  JobSpec* job = cell.mutable_job();
  // The stored cell shows what runs: fio's "0 means ..." rules (common/resolved_job.h).
  ApplyFioFixups(*job);
  FillCgroupGroups(job->numjobs(), *cell.mutable_cgroup_layout());
}

}  // namespace blkbench::workloads
