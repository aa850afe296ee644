// The controller's queued runs in memory, grouped by where they may run (device class,
// kernel pattern): a placement pass looks at the groups a free device can take, never at
// every queued run, and a queued run costs a few dozen bytes, not a copy of its cell.
#ifndef BLKBENCH_CONTROLLER_RUN_QUEUE_H_
#define BLKBENCH_CONTROLLER_RUN_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/btree_set.h"
#include "blkbench/v1/workload.pb.h"

namespace blkbench {

// Which devices a queued run may take: those of `device_class` on hosts whose kernel
// release matches `kernel` (KernelMatches, common/placement.h). Every run of a cell has
// its cell's key.
struct PlacementKey {
  std::string device_class;
  std::string kernel;  // the cell's target kernel glob ("" or a simulated kernel: any)

  static PlacementKey Of(const v1::CellSpec& cell);
  friend bool operator<(const PlacementKey& a, const PlacementKey& b) {
    return std::tie(a.device_class, a.kernel) < std::tie(b.device_class, b.kernel);
  }
  friend bool operator==(const PlacementKey& a, const PlacementKey& b) {
    return a.device_class == b.device_class && a.kernel == b.kernel;
  }
};

// One queued run: what placement needs to find it again in the store.
struct QueuedRun {
  uint64_t run_id = 0;
  uint64_t experiment_id = 0;
  uint32_t cell_index = 0;
};

// A free device offered to a placement pass: its class and its host's kernel release
// (borrowed; they must outlive the Choose call).
struct FreeDevice {
  const std::string* device_class = nullptr;
  const std::string* kernel_release = nullptr;
};

// Not thread-safe: the controller keeps it under its mutex.
class RunQueue {
 public:
  // Queues `run` under `key`. A run already queued (same id) is left as it is.
  void Add(const PlacementKey& key, const QueuedRun& run);
  // Removes run `run_id` from `key`'s runs; false if it was not queued there.
  bool Remove(const PlacementKey& key, uint64_t run_id);

  size_t size() const { return size_; }           // queued runs
  size_t keys() const { return queues_.size(); }  // keys with queued runs

  // A pass's check of the run it is about to pick.
  enum class Verdict {
    kTake,  // pick it (it stays queued until Remove)
    kGone,  // it is no longer queued (e.g. the store says it ended): drop it, go on
    kStop,  // end the pass here (e.g. the store cannot be read)
  };
  struct Pick {
    size_t device = 0;  // index into the devices given to Choose
    QueuedRun run;
    PlacementKey key;
  };
  // One placement pass over `devices`, given in placement order: queued runs in id order,
  // each to the first device not yet picked that its key matches, one run per device; a
  // run whose key matches no device left is skipped. Exactly what matching every queued
  // run in id order against the devices would choose, but at a cost of O(keys x
  // devices) plus O(log runs) per run considered: keys that match no free device are
  // never looked into. `check` is asked about each run before it is picked.
  std::vector<Pick> Choose(const std::vector<FreeDevice>& devices,
                           const std::function<Verdict(const QueuedRun&)>& check);

 private:
  struct ById {
    bool operator()(const QueuedRun& a, const QueuedRun& b) const { return a.run_id < b.run_id; }
  };
  struct Queue {
    absl::btree_set<QueuedRun, ById> runs;
    // KernelMatches(key.kernel, release) by kernel release: the glob is matched once per
    // kernel the lab runs, not once per pass and device.
    std::map<std::string, bool> kernel_matches;
  };
  bool Matches(const PlacementKey& key, Queue& queue, const std::string& kernel_release);

  std::map<PlacementKey, Queue> queues_;  // no empty queues
  size_t size_ = 0;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_RUN_QUEUE_H_
