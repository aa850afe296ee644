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
#include "engine/sim/time.h"

namespace blkbench::engine {

// Modelled kernel: "sim:<major>.<minor>[+patch...]".
struct KernelSpec {
  int major = 6;
  int minor = 16;
  std::vector<std::string> patches;  // in the order given
  // Patch flags (ENGINE.md "Kernel profiles and patches are data").
  bool plug_batch_retry = false;  // seed 003 (Xue He): 6.19 multi-pass batch tag allocation
};

// Patch names ParseKernel accepts, for error messages and docs.
const std::vector<std::string>& KnownPatches();

// Parses "sim:6.16", "sim:6.10+plug-batch-retry"; "" means "sim:6.16". InvalidArgument
// for a missing "sim:" prefix, a malformed version or an unknown patch (the message lists
// the known ones).
absl::StatusOr<KernelSpec> ParseKernel(std::string_view kernel);

// Parses a fio cpus_allowed list ("0-3,8,10-11"); every CPU must be < nr_cpus.
absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view list, int nr_cpus);

// fio job options in the units the model uses.
struct JobOptions {
  bool random = true;
  int read_percent = 100;  // 100 = all reads, 0 = all writes (rwmixread for mixed modes)
  uint64_t bs = 4096;
  int iodepth = 1;
  int numjobs = 1;
  int batch_submit = 1;        // iodepth_batch_submit
  int batch_complete_min = 1;  // iodepth_batch_complete_min
  int batch_complete_max = 1;  // iodepth_batch_complete_max (default: _min, as fio)
  SimTime runtime_ns = 0;      // measured time after ramp; 0 = bytes-limited only
  SimTime ramp_ns = 0;
  uint64_t bytes_per_job = 0;  // io_size / size when not time_based; 0 = unlimited
  uint64_t size = 0;           // region per job; 0 = whole device
  uint64_t offset = 0;
  uint64_t offset_increment = 0;
  std::string cpus_allowed;  // parsed against the machine profile later
  uint64_t randseed = 0;
  bool psync = false;  // synchronous QD1 (ioengine=psync)
};

struct QueueOptions {
  std::string scheduler;        // "none" (v0)
  uint32_t nr_requests = 0;     // 0 = leave (driver tags = device queue depth)
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
};

struct EngineConfig {
  std::string device_kind;                           // "null_blk", "hdd", "ssd", ...
  std::map<std::string, std::string> device_params;  // without the "engine.*" keys
  std::string machine = "desktop-16";                // machine profile name or path
  KernelSpec kernel;
  JobOptions job;
  QueueOptions queue;
};

inline constexpr SimTime kDefaultRuntimeNs = 1'000'000'000;  // 1 s simulated
inline constexpr uint32_t kDefaultMaxSectorsKb = 512;

// Derives the model configuration from a cell. InvalidArgument for anything malformed
// (device class not "sim:<kind>", bad kernel string, zero bs, ...); Unimplemented for an
// elevator (mq-deadline, bfq, kyber) until the elevators land.
absl::StatusOr<EngineConfig> DeriveConfig(const v1::CellSpec& cell);

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_CONFIG_H_
