// Virtual CPUs: per-CPU busy time by blk-mq stage, and the report of CPU ns per I/O
// that the engine shows next to the kernel's "sys%".
#ifndef BLKBENCH_ENGINE_SIM_CPU_H_
#define BLKBENCH_ENGINE_SIM_CPU_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sim/time.h"

namespace blkbench::engine {

// Where CPU time goes. kLockSpin is time spent waiting for a lock (the kernel's
// queued_spin_lock_slowpath); critical sections are charged to the stage that holds it.
enum class Stage : uint8_t {
  kSubmit,
  kRequestAlloc,
  kTagAlloc,
  kPlugFlush,
  kMerge,
  kInsert,
  kDispatch,
  kDriver,
  kCompletion,
  kLockSpin,
  kOther,
};
inline constexpr int kStageCount = static_cast<int>(Stage::kOther) + 1;
std::string_view StageName(Stage stage);

// One simulated CPU. A CPU runs one piece of work at a time: Run() starts work at the
// later of `now` and busy_until(), so two contexts on one CPU serialise.
class VirtualCpu {
 public:
  explicit VirtualCpu(int id) : id_(id) {}

  int id() const { return id_; }
  SimTime busy_until() const { return busy_until_; }

  // Runs `ns` of `stage` work starting no earlier than `now`; returns when it ends.
  SimTime Run(SimTime now, Stage stage, SimTime ns) {
    SimTime start = now > busy_until_ ? now : busy_until_;
    busy_until_ = start + ns;
    Account(stage, ns);
    return busy_until_;
  }

  // Accounts `ns` of `stage` time without moving busy_until (e.g. when the caller has
  // already placed the work in time, as for lock spin and hold from Spinlock::Acquire).
  void Account(Stage stage, SimTime ns) { busy_ns_[static_cast<int>(stage)] += ns; }
  // Marks the CPU busy until `t` (no accounting).
  void OccupyUntil(SimTime t) {
    if (t > busy_until_) busy_until_ = t;
  }

  SimTime busy_ns(Stage stage) const { return busy_ns_[static_cast<int>(stage)]; }
  SimTime total_busy_ns() const;

 private:
  int id_;
  SimTime busy_until_ = 0;
  std::array<SimTime, kStageCount> busy_ns_{};
};

// All CPUs of a simulated machine, plus totals.
class CpuSet {
 public:
  explicit CpuSet(int cpus);

  int size() const { return static_cast<int>(cpus_.size()); }
  VirtualCpu& operator[](int cpu) { return cpus_[static_cast<size_t>(cpu)]; }
  const VirtualCpu& operator[](int cpu) const { return cpus_[static_cast<size_t>(cpu)]; }

  SimTime TotalNs(Stage stage) const;
  SimTime TotalBusyNs() const;
  // Mean CPU ns per I/O spent in `stage` (0 when ios == 0).
  double NsPerIo(Stage stage, uint64_t ios) const;
  // Busy share of `elapsed` x size() (the model's sys%).
  double Utilisation(SimTime elapsed) const;
  // One line per stage with a non-zero total: "submit  123.4 ns/io  12.3%".
  std::string Report(uint64_t ios) const;

 private:
  std::vector<VirtualCpu> cpus_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SIM_CPU_H_
