// Machine profiles: the one physical cost model (CPU topology, ns per operation,
// cache-line transfers, lock behaviour) that every experiment on a machine shares.
#ifndef BLKBENCH_ENGINE_SIM_MACHINE_PROFILE_H_
#define BLKBENCH_ENGINE_SIM_MACHINE_PROFILE_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/sim/time.h"

namespace blkbench::engine {

// Logical CPU layout. Cores are numbered 0..cores-1; with SMT, logical CPU i runs on
// core i % cores (Linux's usual x86 enumeration: siblings are i and i + cores). Cores
// are grouped consecutively into core complexes (CCX: cores sharing an L3) and NUMA
// nodes; a CCX never spans two nodes.
struct Topology {
  int cores = 1;
  int threads_per_core = 1;
  int cores_per_ccx = 1;
  int cores_per_node = 1;
};

// CPU time of each blk-mq stage, ns, excluding lock spinning and contended-line misses
// (those come from the spinlock model). ENGINE.md §8 "Per-operation costs".
struct StageCosts {
  SimTime submit = 0;                     // blk_mq_submit_bio path outside the stages below
  SimTime request_alloc = 0;              // blk_mq_rq_ctx_init and friends, per request
  SimTime tag_get_single = 0;             // __sbitmap_queue_get
  SimTime tag_get_batch_base = 0;         // __sbitmap_queue_get_batch, fixed part
  SimTime tag_get_batch_per_request = 0;  // ... per request returned
  SimTime plug_flush = 0;                 // blk_mq_flush_plug_list, fixed part
  SimTime elevator_bio_merge = 0;         // dd_bio_merge / bfq_bio_merge body under the lock
  SimTime elevator_insert = 0;            // dd_insert_request body, per request
  SimTime driver_queue_rq = 0;            // null_blk queue_rq (+ end_request when inline)
  SimTime completion = 0;                 // blk_mq_end_request / blk_mq_free_request
};

// Cache-line transfer costs by distance (ENGINE.md §8 "Coherence").
struct CoherenceCosts {
  SimTime same_core = 0;    // SMT sibling (shared L1/L2)
  SimTime same_ccx = 0;     // another core sharing the L3
  SimTime same_node = 0;    // another CCX on the same NUMA node (e.g. across CCDs)
  SimTime remote_node = 0;  // another node, unless node_distance overrides it
  // Optional nodes x nodes matrix of transfer costs between nodes (row-major); the
  // diagonal is ignored. Empty: every remote pair costs remote_node.
  std::vector<SimTime> node_distance;
  SimTime lock_uncontended = 0;  // lock + unlock with the lock line local
};

// Per lock kind: lines the holder misses when the previous holder ran elsewhere.
struct LockCosts {
  double missed_lines = 0;
};

// One I/O scheduler's costs on this machine, kept under the scheduler's name
// (MachineProfile::schedulers), so a scheduler brings its own without a field here.
struct SchedulerCosts {
  SimTime dispatch = 0;  // one dispatch_request body (__dd_dispatch_request, ...)
  // Its global lock (dd->lock, bfqd->lock); absent for a scheduler without one (kyber).
  std::optional<LockCosts> lock;
};

// Collapse of a contended lock (ENGINE.md §8 "Collapse"); see spinlock.h for the rule.
struct CollapseParams {
  double rho_onset = 0.8;       // utilisation at which contended costs start to grow
  double max_multiplier = 3.0;  // coherence-cost multiplier at rho = 1, many waiters
  double half_waiters = 8;      // waiters ahead at which half the growth is reached
  SimTime window_ns = 20'000;   // time constant of the utilisation average
};

// Wake-up latency: from try_to_wake_up() to the woken task running on its CPU (IPI, idle
// exit, context switch; a VM adds the exit to the host and the vCPU's own wake-up).
// Lognormal with this median and 90th percentile; median 0 means none (a woken task
// runs as soon as its CPU is free). Latency, not CPU time.
struct WakeupLatency {
  SimTime median = 0;
  SimTime p90 = 0;
};

struct MachineProfile {
  std::string name;
  std::string description;
  std::string source;  // file it was loaded from
  Topology topology;
  StageCosts stage;
  CoherenceCosts coherence;
  double handoff_transfers = 1.5;  // line transfers per contended hand-off (word + MCS)
  LockCosts generic_lock;
  // By scheduler name ("mq-deadline"): the profile's `schedulers:` mapping.
  std::map<std::string, SchedulerCosts, std::less<>> schedulers;
  CollapseParams collapse;
  WakeupLatency wakeup;

  int cpus() const { return topology.cores * topology.threads_per_core; }
  int numa_nodes() const { return topology.cores / topology.cores_per_node; }
  int ccxs() const { return topology.cores / topology.cores_per_ccx; }
  int CoreOf(int cpu) const { return cpu % topology.cores; }
  int CcxOf(int cpu) const { return CoreOf(cpu) / topology.cores_per_ccx; }
  int NodeOf(int cpu) const { return CoreOf(cpu) / topology.cores_per_node; }

  // The costs of `scheduler`, or nullptr when the profile has none.
  const SchedulerCosts* CostsOf(std::string_view scheduler) const;

  // Where a CPU sits, as LineTransferNs compares it. A hot path (a lock's hand-off) keeps
  // one per CPU rather than paying PlaceOf's divisions on every call.
  struct CpuPlace {
    int cpu = 0;
    int core = 0;
    int ccx = 0;
    int node = 0;
  };
  CpuPlace PlaceOf(int cpu) const { return {cpu, CoreOf(cpu), CcxOf(cpu), NodeOf(cpu)}; }

  // Cost of moving a cache line last written on `from` to `to`. 0 when from == to.
  // REQUIRES: both in [0, cpus()).
  SimTime LineTransferNs(int from, int to) const {
    return LineTransferNs(PlaceOf(from), PlaceOf(to));
  }
  SimTime LineTransferNs(const CpuPlace& from, const CpuPlace& to) const;
};

// Loads the profile named `name` ("desktop-16") from <dir>/<name>.yaml, <dir> =
// MachineProfilesDir() (the shipped profiles, or the administrator's
// BLKBENCH_ENGINE_PROFILES_DIR). A path is refused (InvalidArgument): a profile file named
// in a matrix is read by the CLI and carried in the cell (target.machine_profile), so no
// path from a matrix is ever opened here. Errors are InvalidArgument/NotFound with
// "file:line: key: reason".
absl::StatusOr<MachineProfile> LoadMachineProfile(std::string_view name);

// Parses YAML text; `source` names it in error messages.
absl::StatusOr<MachineProfile> ParseMachineProfile(std::string_view yaml, std::string_view source);

// Where profiles are looked for by a program at `executable`, in order:
// $BLKBENCH_ENGINE_PROFILES_DIR alone when set; else, for a binary inside the build tree,
// the source tree's engine/profiles; else <exe>/../../share/blkbench/profiles (an
// installed or unpacked tree) and the configured install prefix's.
std::vector<std::string> MachineProfileSearchPath(const std::string& executable);

// The directory LoadMachineProfile searches by name: the first of the search path for
// this process (/proc/self/exe) that exists, else the first.
std::string MachineProfilesDir();

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SIM_MACHINE_PROFILE_H_
