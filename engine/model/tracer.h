// Tracer: the blktrace-style export of D (issue) and C (complete) events as blkparse
// lines. Tracing never changes the run.
#ifndef BLKBENCH_ENGINE_MODEL_TRACER_H_
#define BLKBENCH_ENGINE_MODEL_TRACER_H_

#include <ostream>
#include <vector>

#include "engine/model/blk_mq.h"

namespace blkbench::engine {

class Tracer {
 public:
  explicit Tracer(BlkMq& q) : q_(q) {}
  // The device's major number and one sequence counter per CPU.
  void Init(int major, int nr_cpus);

  // Writes the first `max_events` events from now on to `out`; nullptr stops.
  void set_sink(std::ostream* out, uint64_t max_events);
  bool enabled() const { return out_ != nullptr; }
  uint64_t written() const { return written_; }
  // One line; pid -1 = a kblockd worker on `cpu`.
  void Event(char action, uint32_t rq_index, int cpu, int pid);

 private:
  BlkMq& q_;
  std::ostream* out_ = nullptr;
  uint64_t left_ = 0;
  uint64_t written_ = 0;
  std::vector<uint64_t> seq_;  // blktrace sequence numbers are per CPU
  int major_ = 0;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_TRACER_H_
