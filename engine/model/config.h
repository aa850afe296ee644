// EngineConfig: what the blk-mq model runs, derived from a matrix cell (device, kernel
// profile and patches, machine profile, fio job options, queue settings).
#ifndef BLKBENCH_ENGINE_MODEL_CONFIG_H_
#define BLKBENCH_ENGINE_MODEL_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "blkbench/v1/workload.pb.h"
#include "common/resolved_job.h"
#include "engine/sim/time.h"

namespace blkbench::engine {

// Modelled kernel: "sim:<major>.<minor>[+patch...]".
struct KernelSpec {
  int major = 6;
  int minor = 16;
  // Patch flags (ENGINE.md "Kernel profiles and patches are data"), in the order given;
  // each is one modelled change, combinable with any version. A scheduler's own flags
  // (dd-batch-dispatch, bfq-one-group-no-idle, ...) are read by its factory from this list
  // (ElevatorSetup); the core's own are the fields below.
  std::vector<std::string> patches;
  bool plug_batch_retry = false;  // seed 003 (Xue He): 6.19 multi-pass batch tag allocation
  // Seed 001 (Yu Kuai 2022 RFC): split a bio into all its pieces up front, wake waiters
  // by the number of tags they need, and no new allocation while others wait.
  bool split_whole_bio = false;
  bool wake_by_tags = false;
  bool tag_no_preempt = false;

  int version() const { return major * 100 + minor; }
};

// Patch names ParseKernel accepts, for error messages and docs.
const std::vector<std::string>& KnownPatches();

// Parses "sim:6.16", "sim:6.10+plug-batch-retry"; "" means "sim:6.16". InvalidArgument
// for a missing "sim:" prefix, a malformed version or an unknown patch (the message lists
// the known ones).
absl::StatusOr<KernelSpec> ParseKernel(std::string_view kernel);

// Parses a fio cpus_allowed list ("0-3,8,10-11"); every CPU must be < nr_cpus.
absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view list, int nr_cpus);

// The job as ResolveJob resolved it (fio's defaults, fixups and the engines' limits, the
// same ResolvedJob the executor runs), with what the model reads differently:
// complete_min is at least 1 (the model reaps at least one completion per wait) and
// runtime_ns is never 0 for a job limited by neither time nor bytes (a simulated device
// has no end to run into: the default simulated second).
struct JobOptions : ResolvedJob {
  std::string name;            // the named job (CellSpec.jobs); "" for a one-job cell
  uint64_t bytes_per_job = 0;  // io_size, else size, when not time_based; 0 = unlimited
  // ramp_ns includes the latest job's startdelay_ns here (the measured phase starts after
  // both).
  // A synchronous engine at QD1 (psync, sync, pvsync2).
  bool synchronous() const { return (engine_caps & kEngineSync) != 0; }
};

struct QueueOptions {
  std::string scheduler = "none";  // none, mq-deadline, bfq, kyber
  // 0 = leave: "none" keeps driver tags = device queue depth, an elevator gets
  // 2 * min(queue depth, 128) scheduler tags (blk_mq_init_sched).
  uint32_t nr_requests = 0;
  uint32_t max_sectors = 1024;  // 512-byte sectors (max_sectors_kb * 2)
  // SCSI host tags (shost->can_queue: the tag set's depth) for devices with a per-LUN
  // budget; 0 = the device's queue depth (AHCI: both 32). Device param "engine.can_queue".
  uint32_t can_queue = 0;
  // /sys/block/<dev>/queue/rq_affinity: 0 complete where the interrupt arrives, 1 (the
  // default) on the submitting CPU unless it shares the cache, 2 always on the submitter.
  // Device param "engine.rq_affinity".
  int rq_affinity = 1;
  // The CPU that takes a single-vector (SCSI-like) device's interrupts; -1 = the first
  // CPU mapped to the hardware queue. Device param "engine.irq_cpu".
  int irq_cpu = -1;
  // Identical devices the jobs drive (fio filename=a:b, spread by file_service_type),
  // each its own request queue: tags, hardware queues and device model. Device param
  // "engine.devices"; more than one needs scheduler none on a device without a budget.
  uint32_t devices = 1;
  // The scheduler's tunables the cell sets (QueueSettings.iosched: sysfs name -> decimal
  // value, common/iosched_tunables.h), each the scheduler's own; the elevator's factory
  // reads them (elevator_registry.cc). Empty: the kernel's defaults.
  std::map<std::string, std::string> iosched;
};

// The cell's cgroup layout as the model sees it: group 0 is the root; groups 1..n are
// the layout's children in order.
struct CgroupOptions {
  std::vector<uint32_t> weights;    // weights[g - 1] for group g (1..1000)
  std::vector<uint32_t> job_group;  // per job; empty = every job in the root
  uint32_t GroupOf(int job) const {
    return job_group.empty() ? 0 : job_group[static_cast<size_t>(job) % job_group.size()];
  }
};

struct EngineConfig {
  std::string device_kind;                           // "null_blk", "hdd", "ssd", ...
  std::map<std::string, std::string> device_params;  // without the "engine.*" keys
  std::string machine = "desktop-16";  // machine profile name (or the file it came from)
  // The profile's YAML when the matrix named a file (carried in the cell; never a path
  // opened here). Empty: `machine` is a name, resolved in MachineProfilesDir().
  std::string machine_profile;
  KernelSpec kernel;
  // The cell's jobs in order: its named jobs, or its one job. `job` is jobs[0] with the
  // run's clock (ramp, runtime) over all of them; tasks run with their own job's options.
  JobOptions job;
  std::vector<JobOptions> jobs;
  QueueOptions queue;
  CgroupOptions cgroups;
  // fio thread=1: jobs are threads of one process. Each still has its own io context
  // (pthreads are created without CLONE_IO), so no scheduler sees a difference.
  bool threads = false;
};

inline constexpr SimTime kDefaultRuntimeNs = 1'000'000'000;  // 1 s simulated
inline constexpr uint32_t kDefaultMaxSectorsKb = 512;

// Derives the model configuration from a cell. InvalidArgument for anything malformed
// (device class not "sim:<kind>", bad kernel string, unknown scheduler, zero bs, ...).
absl::StatusOr<EngineConfig> DeriveConfig(const v1::CellSpec& cell);

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_CONFIG_H_
