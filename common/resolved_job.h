// One resolved fio job: the defaults and fixups fio applies to a job section (its option
// table's .def values and init.c fixup_options) and the limits of the I/O engine that runs
// it, applied once, here. The matrix parser reports the problems at validate time (with
// file, line and column), the agent re-checks them on every assignment, and the executor
// and the scheduler engine run the resolved job instead of re-reading the proto — so a
// cell means the same thing on a real device and on a simulated one.
//
// Also here, because every layer needs them: whether a device class or kernel names the
// simulator, and the cell a given repeat of a run executes.
#ifndef BLKBENCH_COMMON_RESOLVED_JOB_H_
#define BLKBENCH_COMMON_RESOLVED_JOB_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "blkbench/v1/workload.pb.h"

namespace blkbench {

// Limits of the options, the same for the parser, the agent and the engine.
inline constexpr uint32_t kMaxIodepth = 65536;
inline constexpr uint32_t kMaxUringDepth = 32768;  // the kernel's IORING_MAX_ENTRIES
inline constexpr uint32_t kMaxNumjobs = 4096;
inline constexpr uint64_t kSectorSize = 512;
// fio's defaults for values a JobSpec leaves 0.
inline constexpr uint64_t kFioDefaultBs = 4096;

enum class IoEngineKind { kPsync, kIoUring, kLibaio, kSync, kPvsync2, kNop };

// fio file_service_type: how a job spreads its I/O over several files (devices).
// kUring is blkbench's own, "t/io_uring": the files dealt out to the job's threads (file
// f to thread f % numjobs), and each thread stays on a file until it holds
// ceil(iodepth / its files) I/Os not yet reaped, then moves to its next (file_depth).
enum class FileService : uint8_t { kRoundRobin, kRandom, kUring };

// fio random_distribution: how random offsets are drawn over the job's blocks.
// kZoned/kZonedAbs: fio's zoned forms, a zone picked by its share of the accesses, then a
// uniform block inside the zone's part of the region (ZoneSplit).
enum class RandomDist : uint8_t { kRandom, kZipf, kPareto, kNormal, kZoned, kZonedAbs };

// One zone of fio's zoned/zoned_abs random_distribution: its share of the accesses and its
// extent, a percentage of the region (zoned) or bytes (zoned_abs). Zones follow each other
// from the region's start; what the zones do not cover is never accessed (fio io_u.c
// __get_next_rand_offset_zoned{,_abs}).
struct ZoneSplit {
  uint32_t access_percent = 0;
  uint32_t size_percent = 0;  // zoned
  uint64_t size_bytes = 0;    // zoned_abs
};
inline constexpr size_t kMaxZones = 256;  // fio ZONESPLIT_MAX

// One bssplit entry: a block size and its share of the I/Os in percent.
struct BsShare {
  uint64_t bs = 0;
  uint32_t percent = 0;
};
inline constexpr size_t kMaxBsSplit = 64;  // fio BSSPLIT_MAX

// One direction's block sizes (fio's min_bs, max_bs, bssplit and ba of a ddir): with a
// split, its sizes by share; else min..max in multiples of min (bsrange). Random offsets
// align to `align` (fio blockalign; min unless set).
struct BlockSizes {
  uint64_t min = kFioDefaultBs;
  uint64_t max = kFioDefaultBs;
  std::vector<BsShare> split;
  uint64_t align = kFioDefaultBs;
  bool variable() const { return max != min || !split.empty(); }
  friend bool operator==(const BlockSizes& a, const BlockSizes& b) {
    return a.min == b.min && a.max == b.max && a.align == b.align &&
           std::equal(a.split.begin(), a.split.end(), b.split.begin(), b.split.end(),
                      [](const BsShare& x, const BsShare& y) {
                        return x.bs == y.bs && x.percent == y.percent;
                      });
  }
};
// Linux ioprio classes (include/uapi/linux/ioprio.h), fio's prioclass values.
inline constexpr uint32_t kIoprioClassRt = 1, kIoprioClassBe = 2, kIoprioClassIdle = 3;
inline constexpr uint32_t kIoprioDefaultLevel = 4;  // IOPRIO_BE_NORM

// What an I/O engine can do, and so which job options it takes (fio's FIO_SYNCIO flag
// and each engine's own options). The executor's engines declare the same flags.
enum IoEngineCap : uint32_t {
  kEngineSync = 1u << 0,           // one I/O at a time, done when queue() returns: iodepth is 1
  kEngineHipri = 1u << 1,          // hipri: polled completions
  kEngineFixedBufs = 1u << 2,      // fixedbufs: buffers registered with the kernel
  kEngineRegisterFiles = 1u << 3,  // registerfiles
  kEngineSqThreadPoll = 1u << 4,   // sqthread_poll: a kernel thread submits
  kEngineNoIo = 1u << 5,  // completes requests without touching the target (fio FIO_FAKEIO)
};

// One ioengine= value: the vocabulary every layer shares (parser, agent, executor, model).
struct IoEngineInfo {
  std::string_view name;  // fio's ioengine= name
  v1::IoEngine proto;
  IoEngineKind kind;
  uint32_t caps;                   // IoEngineCap bits
  uint32_t max_depth;              // the engine's own iodepth limit (<= kMaxIodepth)
  std::string_view max_depth_why;  // completes "exceeds <name>'s ..."; "" = kMaxIodepth only
  std::string_view fio_name;       // fio's name where it differs (nop: null); "" = name
};

// The known engines, in the order error messages list them (fio's default, psync, is
// what an unset ioengine means).
std::span<const IoEngineInfo> IoEngines();
// nullptr when unknown. IO_ENGINE_UNSPECIFIED is psync. A name may be blkbench's or fio's
// ("null" finds nop, so imported fio job files keep their meaning).
const IoEngineInfo* FindIoEngine(v1::IoEngine e);
const IoEngineInfo* FindIoEngine(std::string_view name);
// "io_uring, psync, ..." — for "expected one of" messages.
std::string IoEngineNames();

struct ResolvedJob {
  IoEngineKind engine = IoEngineKind::kPsync;  // fio's default ioengine is psync
  std::string_view engine_name = "psync";      // IoEngineInfo::name
  uint32_t engine_caps = kEngineSync;          // IoEngineInfo::caps
  bool random = false;
  bool reads = true;
  bool writes = false;
  uint32_t read_percent = 100;  // 100 all reads, 0 all writes; rwmixread for mixed modes
  uint64_t bs = kFioDefaultBs;
  uint32_t iodepth = 1;  // 1 for sync engines (kEngineSync): one I/O in flight
  uint32_t numjobs = 1;
  uint32_t batch_submit = 1;  // iodepth_batch_submit: 1..iodepth (0 in the spec = iodepth)
  uint32_t complete_min = 1;  // iodepth_batch_complete_min: 0..iodepth
  uint32_t complete_max = 1;  // max(1, complete_min)..iodepth (0 in the spec = complete_min)
  bool direct = false;
  bool hipri = false;
  bool fixedbufs = false;
  bool registerfiles = false;
  bool sqthread_poll = false;
  bool thread = false;
  bool time_based = false;
  uint64_t runtime_ns = 0;  // 0 = none (bytes-limited)
  uint64_t ramp_ns = 0;
  uint64_t size = 0;  // region per job; 0 = from offset to the end of the target
  uint64_t offset = 0;
  uint64_t offset_increment = 0;
  uint64_t io_size = 0;  // bytes per job when not time_based; 0 = the region
  std::string cpus_allowed;
  uint64_t randseed = 0;

  // Random offsets (fio norandommap, randrepeat, random_distribution). random_map: every
  // block once per pass (fio's default; off with norandommap, a non-uniform distribution
  // or variable block sizes). randrepeat=0 is accepted: blkbench's streams always derive
  // from randseed (+ the repeat), so runs stay repeatable (docs/matrix.md).
  bool random_map = true;
  bool randrepeat = true;
  RandomDist distribution = RandomDist::kRandom;
  double dist_param = 0;         // zipf theta, pareto power, normal deviation (percent)
  double dist_center = -1;       // fio's second float, 0..1; -1 = fio's default
  std::vector<ZoneSplit> zones;  // kZoned/kZonedAbs, in region order
  // Block sizes per direction [read, write] (fio's per-direction bs, bsrange, bssplit;
  // both the same unless the job sets them apart). `bs` above is the smallest of either
  // direction and bs_max the largest (== bs when fixed): buffers, region and alignment
  // checks.
  uint64_t bs_max = kFioDefaultBs;
  BlockSizes sizes[2];
  // Throttling (fio rate, rate_iops, rate_process), per direction [read, write]; 0 = none.
  uint64_t rate_bps[2] = {0, 0};
  uint64_t rate_iops[2] = {0, 0};
  bool rate_poisson = false;
  uint64_t startdelay_ns = 0;
  uint64_t thinktime_ns = 0;       // stall after thinktime_blocks completions
  uint64_t thinktime_spin_ns = 0;  // of which spent spinning
  uint32_t thinktime_blocks = 1;
  int32_t nice = 0;
  uint32_t ioprio_class = 0;  // 0 = leave the job's I/O priority alone
  uint32_t ioprio_level = 0;
  uint32_t fsync_blocks = 0;  // fsync after every N writes; 0 = never
  bool end_fsync = false;
  uint32_t log_avg_msec = 0;  // sample interval; 0 = the agent's
  // fio file_service_type over a target of several devices (the engine's engine.devices):
  // the next file after file_service_nr I/Os, in turn or at random. With one device (every
  // real run) it has no effect, as in fio with one file.
  FileService file_service = FileService::kRoundRobin;
  uint32_t file_service_nr = 1;

  bool variable_bs() const { return sizes[0].variable() || per_direction_bs(); }
  // Reads and writes draw their sizes apart (fio's bs=R,W and the like).
  bool per_direction_bs() const { return !(sizes[0] == sizes[1]); }
  bool paced() const {
    return rate_bps[0] | rate_bps[1] | rate_iops[0] | rate_iops[1] | thinktime_ns;
  }
};

// fio's random_distribution value: "random", "zipf[:theta[:center]]",
// "pareto[:power[:center]]", "normal[:deviation[:center]]" (fio's defaults: zipf 1.1,
// pareto 0.2, normal 0; center 0..1), "zoned:A/R[:A/R...]" (A % of the accesses to the
// next R % of the region) or "zoned_abs:A/SIZE[:...]" (SIZE with fio's units), up to 256
// zones, the accesses adding up to 100 and zoned's regions to at most 100 (fio options.c
// zone_split_ddir). fio's per-direction zone lists (separated by ',') are refused. On
// success fills the outputs (`zones` may be null when the caller only validates); on
// failure returns what was expected ("" = ok).
std::string ParseRandomDistribution(std::string_view s, RandomDist* dist, double* param,
                                    double* center, std::vector<ZoneSplit>* zones = nullptr);

// fio __get_next_rand_offset_zoned{,_abs}: a position in [0, n) of `unit`-byte blocks for a
// kZoned/kZonedAbs job. A draw in [1, 100] picks the zone by the accesses' running sum,
// then a uniform position inside the zone: zoned's zone i spans [before * n / 100,
// +n * percent / 100) positions, zoned_abs's its bytes divided by `unit`, both clipped to
// [0, n) (the executor's plan refuses zoned_abs zones past the region, as fio does). `rng`
// has Uniform(m), uniform in [0, m) (common/rng.h).
template <typename R>
uint64_t ZonedPosition(std::span<const ZoneSplit> zones, bool absolute, uint64_t n, uint64_t unit,
                       R& rng) {
  const uint64_t v = rng.Uniform(100) + 1;
  uint64_t access = 0, before = 0;  // before: percent (zoned) or bytes (zoned_abs)
  for (const ZoneSplit& z : zones) {
    access += z.access_percent;
    const uint64_t extent = absolute ? z.size_bytes : z.size_percent;
    if (v <= access) {
      const uint64_t first = absolute ? before / unit : before * n / 100;
      const uint64_t end = absolute ? (before + extent) / unit : first + n * extent / 100;
      if (first >= n) return n - 1;
      const uint64_t count = std::clamp<uint64_t>(end - first, 1, n - first);
      return first + rng.Uniform(count);
    }
    before += extent;
  }
  return rng.Uniform(n);  // not reached: the accesses add up to 100
}

// fio's file_service_type value: "roundrobin[:N]" or "random[:N]" (N >= 1 I/Os before
// switching; fio's default roundrobin:1), or blkbench's "t/io_uring" (its rules). fio's
// sequential and zipf/pareto/normal/gauss forms are not supported. Fills the outputs and returns ""
// on success, else what was expected.
std::string ParseFileServiceType(std::string_view s, FileService* kind, uint32_t* nr);

// One problem of a job: the canonical option keys it involves (the first is where to
// point the user) and what is wrong, e.g. {{"iodepth", "ioengine"}, "iodepth 40000 exceeds
// io_uring's maximum ring size of 32768"}.
struct JobProblem {
  std::vector<std::string_view> keys;
  std::string message;
};

struct JobResolution {
  ResolvedJob job;                   // meaningful only without problems
  std::vector<JobProblem> problems;  // empty when the job can run
};

// fio's fixup_options on the options themselves: iodepth_batch_submit 0 means iodepth
// and iodepth_batch_complete_max 0 means max(1, iodepth_batch_complete_min), both as
// written (a synchronous engine's single I/O in flight is ResolveJob's business). The
// matrix parser applies this to every cell it stores, so a stored cell shows what runs.
void ApplyFioFixups(v1::JobSpec& spec);

// Resolves `spec` (after ApplyFioFixups on a copy). Checked here (device-independent; the executor
// adds what depends on the target: its size, logical block size and CPUs):
//   rw and ioengine known; rwmixread <= 100; bs, iodepth, numjobs within bounds and bs whole
//   sectors; with direct=1 size/offset/offset_increment whole sectors; the engine's depth
//   limit (io_uring's ring size); iodepth_batch_submit and _complete_min not above iodepth,
//   _min not above _max; engine switches (hipri, fixedbufs, registerfiles, sqthread_poll)
//   only with an engine whose IoEngineCap has them; hipri only with direct=1; time_based
//   only with a runtime; sizes and times within common/job_bounds.h's upper bounds. A sync engine
//   runs at iodepth 1 whatever iodepth says (fio caps it with a note, not an error).
// fio clamps some of these silently (fixup_options); asking for the impossible is more
// likely a typo, so they are problems here.
JobResolution ResolveJob(const v1::JobSpec& spec);

// The resolved job, or InvalidArgument listing every problem ("job option iodepth: ...").
absl::StatusOr<ResolvedJob> ResolveJobOrError(const v1::JobSpec& spec);

// True for a device class or kernel that names the scheduler engine ("sim:ssd",
// "sim:6.16+dd-batch-dispatch").
bool IsSimulated(std::string_view device_class_or_kernel);

// Why the scheduler engine cannot run `job` on a simulated device, or "": an I/O engine
// that issues no I/O (nop) gives a model nothing to time. The matrix checks (with the
// file position) and the engine's config both ask here.
std::string SimulatedJobProblem(const ResolvedJob& job);

// The cell that repeat `repeat` of a run executes: the same cell with randseed + repeat,
// so repeats are independent samples and every run is reproducible.
v1::CellSpec CellForRepeat(const v1::CellSpec& cell, uint32_t repeat);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_RESOLVED_JOB_H_
