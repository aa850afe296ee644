// The registered elevators (the kernel's elv_list) and the factory of each: how it is
// built from the cell's kernel profile, patch flags and configuration. Adding an
// elevator = its files in engine/sched/ and one line in kBuiltin.
#include "engine/model/elevator_registry.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/iosched_tunables.h"
#include "engine/model/config.h"
#include "engine/sched/bfq.h"
#include "engine/sched/kyber.h"
#include "engine/sched/mq_deadline.h"

namespace blkbench::engine {
namespace {

constexpr uint64_t kNsPerUs = 1'000;  // bfq's slice_idle_us

// The cell's iosched tunables (QueueOptions.iosched), as the elevator's sysfs store
// functions take them after the switch: each Set* leaves a field alone unless the cell
// sets its tunable. DeriveConfig has checked names, ranges and the scheduler.
class CellTunables {
 public:
  explicit CellTunables(const EngineConfig& config) : iosched_(config.queue.iosched) {}

  template <typename T>
  void SetInt(std::string_view name, T& field) const {
    if (const std::string* v = Find(name)) field = static_cast<T>(IoschedValueInt(*v));
  }
  template <typename T>
  void SetUint(std::string_view name, T& field) const {
    if (const std::string* v = Find(name)) field = static_cast<T>(IoschedValueUint(*v));
  }
  // A time written in `unit_ns` units (kNsPerMs for the _expire ms attributes).
  void SetNs(std::string_view name, uint64_t unit_ns, uint64_t& field_ns) const {
    if (const std::string* v = Find(name)) field_ns = IoschedValueUint(*v) * unit_ns;
  }

 private:
  const std::string* Find(std::string_view name) const {
    const auto it = iosched_.find(std::string(name));
    return it == iosched_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, std::string>& iosched_;
};

// mq-deadline (block/mq-deadline.c) of the kernel's era, with seed 000's and 002's patches
// and the cell's deadline_attrs[] values.
std::unique_ptr<Elevator> CreateMqDeadline(const EngineConfig& config) {
  const KernelSpec& k = config.kernel;
  DeadlineProfile p = DeadlineProfile::ForKernel(k.major, k.minor);
  p.batch_dispatch = k.dd_batch_dispatch;
  p.serialize_dispatch = k.dd_serialize_dispatch;
  p.insert_lists = k.dd_insert_lists;
  DeadlineTunables t;
  const CellTunables cell(config);
  cell.SetNs("read_expire", kNsPerMs, t.read_expire_ns);
  cell.SetNs("write_expire", kNsPerMs, t.write_expire_ns);
  cell.SetInt("writes_starved", t.writes_starved);
  cell.SetInt("front_merges", t.front_merges);
  cell.SetInt("fifo_batch", t.fifo_batch);
  cell.SetUint("async_depth", t.async_depth);
  cell.SetNs("prio_aging_expire", kNsPerMs, t.prio_aging_expire_ns);
  return std::make_unique<MqDeadline>(p, t);
}

// bfq (block/bfq-iosched.c) with the cell's cgroup weights and bfq_attrs[] values.
// low_latency and strict_guarantees are only ever 0 here (not modelled; DeriveConfig).
std::unique_ptr<Elevator> CreateBfq(const EngineConfig& config) {
  const KernelSpec& k = config.kernel;
  BfqProfile p = BfqProfile::ForKernel(k.major, k.minor);
  p.one_group_no_idle = k.bfq_one_group_no_idle;
  p.batch_dispatch = k.bfq_batch_dispatch;
  BfqTunables t;
  t.group_weights.push_back(0);  // [0] is the root
  for (const uint32_t w : config.cgroups.weights) t.group_weights.push_back(w);
  const CellTunables cell(config);
  cell.SetNs("slice_idle", kNsPerMs, t.slice_idle_ns);
  cell.SetNs("slice_idle_us", kNsPerUs, t.slice_idle_ns);
  cell.SetNs("timeout_sync", kNsPerMs, t.timeout_ns);
  // bfq_max_budget_store(): 0 asks for bfq_calc_max_budget() from the estimated peak rate,
  // which is not modelled; the model keeps bfq_default_max_budget then.
  int64_t max_budget = 0;
  cell.SetInt("max_budget", max_budget);
  if (max_budget > 0) t.max_budget = max_budget;
  cell.SetNs("fifo_expire_sync", kNsPerMs, t.fifo_expire_sync_ns);
  cell.SetNs("fifo_expire_async", kNsPerMs, t.fifo_expire_async_ns);
  cell.SetUint("back_seek_max", t.back_seek_max_kib);
  cell.SetUint("back_seek_penalty", t.back_seek_penalty);
  return std::make_unique<Bfq>(p, t);
}

// kyber (block/kyber-iosched.c) with the cell's read_lat_nsec / write_lat_nsec.
std::unique_ptr<Elevator> CreateKyber(const EngineConfig& config) {
  KyberTunables t;
  const CellTunables cell(config);
  cell.SetUint("read_lat_nsec", t.read_lat_ns);
  cell.SetUint("write_lat_nsec", t.write_lat_ns);
  return std::make_unique<Kyber>(t);
}

// mq-deadline (block/mq-deadline.c, 6.x), with a few requests queued (rb depth ~2):
// - bio_merge: q->last_merge, a hash bucket, the sort-list root and dd's line holding
//   front_merges (false-shared with batching/starved, written by every dispatch), plus
//   the rb walk (2 lines per visited request of another task): 8.
// - insert: the fifo heads/stats, sort root and fifo_expire lines of dd, q->last_merge,
//   two hash buckets, the previous fifo tail, the rb walk: 10; each further request of
//   the plug batch a new hash bucket and some rebalancing: 1.5.
// - dispatch: dd's three written lines, the rb walk to a leaf, the chosen request's
//   queuelist and fifo_time lines, fifo neighbours, rebalancing, its hash bucket,
//   q->last_merge: 11; each further request of a batch its own lines: 3.5; one that
//   finds nothing reads dd's three lines: 3. No lock at completion.
constexpr LockSiteLines kDeadlineLines = {.merge = 8,
                                          .insert_first = 10,
                                          .insert_extra = 1.5,
                                          .dispatch_first = 11,
                                          .dispatch_extra = 3.5,
                                          .dispatch_empty = 3};
// bfq (block/bfq-iosched.c, 6.x) serving one queue shared by the jobs (stable merge):
// - bio_merge: q->last_merge, the last_merge request, a hash bucket, the queue's sort
//   root and the rb walk: 8.
// - insert, per request: bfqd's queued and position lines, q->last_merge, two hash
//   buckets, the eight lines of the shared bfq_queue (refs, sort list, fifo/entity,
//   allocated, dispatched/flags, think and seek time, ...), the fifo tail, next_rq and
//   the rb walk: 18.
// - dispatch: four bfqd lines (counters, in_service/position, peak-rate sampling), the
//   service tree's vtime, five queue lines, the request, its rb and fifo neighbours, a
//   hash bucket, q->last_merge: 18; each further request of a batch 6; an empty
//   dispatch still checks idling and injection: 8.
// - completion (bfq_completed_request): four bfqd lines, about six queue lines, the
//   submitter's bic: 10.
constexpr LockSiteLines kBfqLines = {.merge = 8,
                                     .insert_first = 18,
                                     .insert_extra = 18,
                                     .dispatch_first = 18,
                                     .dispatch_extra = 6,
                                     .dispatch_empty = 8,
                                     .completion = 10,
                                     .insert_per_request = true};

ElevatorRegistry MakeBuiltin() {
  // name, factory, global lock, its name, insert lock, its name, dispatch cost.
  const ElevatorType kBuiltin[] = {
      {"mq-deadline", &CreateMqDeadline, &MachineProfile::deadline_lock, "dd->lock",
       &MachineProfile::generic_lock, "dd->insert_lock", &StageCosts::deadline_dispatch,
       kDeadlineLines},
      {"bfq", &CreateBfq, &MachineProfile::bfq_lock, "bfqd->lock", nullptr, "",
       &StageCosts::bfq_dispatch, kBfqLines},
      // No global lock: per-ctx lists (kcq->lock, CPU-local) and per-hctx khd->lock.
      {"kyber", &CreateKyber, nullptr, "", nullptr, "", &StageCosts::deadline_dispatch},
  };
  ElevatorRegistry r;
  for (const ElevatorType& t : kBuiltin) {
    [[maybe_unused]] const absl::Status s = r.Register(t);
    assert(s.ok());  // the table above has distinct, complete entries
  }
  return r;
}

}  // namespace

const ElevatorRegistry& ElevatorRegistry::Builtin() {
  static const ElevatorRegistry* const kRegistry = new ElevatorRegistry(MakeBuiltin());
  return *kRegistry;
}

absl::Status ElevatorRegistry::Register(ElevatorType type) {
  if (type.name.empty() || type.create == nullptr || type.dispatch_cost == nullptr) {
    return absl::InvalidArgumentError("an elevator type needs a name, a factory and a cost");
  }
  if (type.insert_lock != nullptr && type.lock == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("elevator \"", type.name, "\": an insert lock needs a global lock"));
  }
  if (Find(type.name) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat("elevator \"", type.name, "\" is registered"));
  }
  types_.push_back(std::move(type));
  return absl::OkStatus();
}

const ElevatorType* ElevatorRegistry::Find(std::string_view name) const {
  const auto it = std::find_if(types_.begin(), types_.end(),
                               [name](const ElevatorType& t) { return t.name == name; });
  return it == types_.end() ? nullptr : &*it;
}

}  // namespace blkbench::engine
