// fifo-test: the scheduler, its ElevatorType and its vocabulary rows.
#include "engine/sched/fifo_test/fifo_test.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common/iosched_tunables.h"
#include "common/sim_vocabulary.h"

namespace blkbench::engine {
namespace {

constexpr std::string_view kName = "fifo-test";
constexpr std::string_view kLifo = "fifo-test-lifo";
constexpr std::string_view kSort = "sort";

class FifoTest final : public Elevator {
 public:
  FifoTest(bool lifo, bool sort) : lifo_(lifo), sort_(sort) {}

  absl::Status Init(const ElevatorQueueLimits& /*limits*/) override { return absl::OkStatus(); }
  void PrepareRequest(SchedRequest& rq) override { counted_.Reset(rq); }
  void InsertRequests(std::span<SchedRequest* const> rqs, InsertFlags /*flags*/,
                      uint64_t /*now_ns*/, std::vector<SchedRequest*>& /*freed*/) override {
    for (SchedRequest* rq : rqs) {
      bool& counted = counted_[*rq].counted;
      (counted ? counters_.reinserted : counters_.inserted) += 1;
      counted = true;
      queue_.push_back(rq);
    }
  }
  SchedRequest* DispatchRequest(uint64_t /*now_ns*/) override {
    if (queue_.empty()) return nullptr;
    auto it = lifo_ ? queue_.end() - 1 : queue_.begin();
    if (sort_) {
      it = std::min_element(
          queue_.begin(), queue_.end(),
          [](const SchedRequest* a, const SchedRequest* b) { return a->sector < b->sector; });
    }
    SchedRequest* rq = *it;
    queue_.erase(it);
    ++counters_.dispatched;
    return rq;
  }
  bool HasWork() const override { return !queue_.empty(); }
  const ElevatorCounters& counters() const override { return counters_; }

 private:
  struct Counted {
    bool counted = false;
  };
  const bool lifo_;
  const bool sort_;
  RequestData<Counted> counted_;
  std::deque<SchedRequest*> queue_;
  ElevatorCounters counters_;
};

std::unique_ptr<Elevator> CreateFifoTest(const ElevatorSetup& setup) {
  int sort = 0;
  setup.SetInt(kSort, sort);
  return std::make_unique<FifoTest>(setup.HasPatch(kLifo), sort != 0);
}

constexpr std::string_view kSchedulers[] = {kName};
constexpr PatchFlagDef kPatches[] = {
    {kLifo, kSchedulers, "test", "fifo-test dispatches the newest request first"}};
constexpr IoschedTunableDef kTunables[] = {{kSort, kName, 0, 1, "",
                                            "dispatch the lowest sector first (default 0)", 0, "",
                                            IoschedEngine::kModelled, 0}};

}  // namespace

const ElevatorType& FifoTestType() {
  static const ElevatorType* const kType = new ElevatorType{
      .name = std::string(kName),
      .create = &CreateFifoTest,
      .patches = {kLifo},
      .tunables = {kSort},
  };
  return *kType;
}

absl::Status RegisterFifoTestVocabulary() {
  if (IsKnownScheduler(kName)) return absl::OkStatus();
  if (absl::Status s = RegisterScheduler(kName, kPatches); !s.ok()) return s;
  return RegisterIoschedTunables(kTunables);
}

}  // namespace blkbench::engine
