// Test harness: drives a DeviceModel with a closed loop of N outstanding requests (submit,
// jump to NextCompletion, collect, resubmit) and measures IOPS and mean latency.
#ifndef BLKBENCH_ENGINE_DEVICE_CLOSED_LOOP_HARNESS_H_
#define BLKBENCH_ENGINE_DEVICE_CLOSED_LOOP_HARNESS_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/device/device_model.h"
#include "engine/device/splitmix.h"
#include "gtest/gtest.h"

namespace blkbench::engine {

struct ClosedLoopResult {
  double iops = 0;
  double mean_latency_ns = 0;
  SimTime max_latency_ns = 0;
  double mb_per_s = 0;  // MiB/s
  uint64_t measured = 0;
  SimTime elapsed = 0;
  std::vector<uint64_t> completion_order;  // ids, for determinism checks
};

// Makes the i-th request (id and hw_queue are filled in by the harness).
using RequestGen = std::function<DeviceRequest(uint64_t i)>;

// Keeps `depth` requests outstanding. The first `warmup` completions are not measured; the
// window then runs until `measure` more complete, with the loop kept full throughout, so
// Little's law (IOPS x mean latency = depth) holds over the window up to edge effects.
inline ClosedLoopResult RunClosedLoop(DeviceModel& dev, uint32_t depth, const RequestGen& gen,
                                      uint64_t warmup, uint64_t measure) {
  ClosedLoopResult r;
  std::unordered_map<uint64_t, std::pair<SimTime, uint32_t>> issued;  // id -> (time, sectors)
  uint64_t next = 0, completed = 0;
  SimTime now = 0, window_start = 0;
  double latency_sum = 0, bytes = 0;
  auto submit = [&](SimTime t) {
    DeviceRequest rq = gen(next);
    rq.id = next++;
    rq.hw_queue = static_cast<uint32_t>(rq.id % dev.hw_queues());
    issued[rq.id] = {t, rq.sectors};
    dev.Submit(rq, t);
  };
  for (uint32_t i = 0; i < depth; ++i) submit(0);
  std::vector<uint64_t> done;
  while (completed < warmup + measure) {
    const SimTime t = dev.NextCompletion();
    if (t == kNever || t < now) {
      ADD_FAILURE() << dev.name() << ": NextCompletion " << t << " with " << issued.size()
                    << " outstanding at " << now;
      return r;
    }
    now = t;
    done.clear();
    dev.CollectCompleted(now, &done);
    if (done.empty()) {
      ADD_FAILURE() << dev.name() << ": nothing collected at NextCompletion " << now;
      return r;
    }
    for (uint64_t id : done) {
      auto it = issued.find(id);
      if (it == issued.end()) {
        ADD_FAILURE() << dev.name() << ": unknown or duplicate completion " << id;
        return r;
      }
      if (completed == warmup) window_start = now;
      if (completed >= warmup && completed < warmup + measure) {
        latency_sum += static_cast<double>(now - it->second.first);
        r.max_latency_ns = std::max(r.max_latency_ns, now - it->second.first);
        bytes += it->second.second * 512.0;
        ++r.measured;
      }
      ++completed;
      r.completion_order.push_back(id);
      issued.erase(it);
      submit(now);
    }
  }
  r.elapsed = now - window_start;
  const double secs = static_cast<double>(r.elapsed) * 1e-9;
  r.iops = static_cast<double>(r.measured) / secs;
  r.mean_latency_ns = latency_sum / static_cast<double>(r.measured);
  r.mb_per_s = bytes / secs / (1 << 20);
  return r;
}

// Uniformly random, aligned requests of `sectors` within [first, first + span) sectors.
inline RequestGen RandomRequests(uint64_t seed, uint64_t first, uint64_t span, uint32_t sectors,
                                 bool write) {
  auto rng = std::make_shared<SplitMix64>(seed);
  return [=](uint64_t) {
    DeviceRequest rq;
    rq.sector = first + rng->Below(span / sectors) * sectors;
    rq.sectors = sectors;
    rq.write = write;
    return rq;
  };
}

inline RequestGen SequentialRequests(uint64_t first, uint32_t sectors, bool write) {
  return [=](uint64_t i) {
    DeviceRequest rq;
    rq.sector = first + i * sectors;
    rq.sectors = sectors;
    rq.write = write;
    return rq;
  };
}

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_CLOSED_LOOP_HARNESS_H_
