// fifo-test: a test-only I/O scheduler (see CMakeLists.txt beside it). One FIFO for the
// whole queue, no merging, no depth limit, no lock; its tunable `sort: 1` dispatches the
// queued request with the lowest sector first (a one-way elevator without wrap-around
// state), and its patch flag `fifo-test-lifo` dispatches the newest request first.
#ifndef BLKBENCH_ENGINE_SCHED_FIFO_TEST_FIFO_TEST_H_
#define BLKBENCH_ENGINE_SCHED_FIFO_TEST_FIFO_TEST_H_

#include "absl/status/status.h"
#include "engine/sched/elevator_type.h"

namespace blkbench::engine {

// The registry's entry: name "fifo-test", tunable "sort", patch flag "fifo-test-lifo".
const ElevatorType& FifoTestType();

// Makes the scheduler, its patch flag and its tunable known to the matrix vocabulary
// (common/sim_vocabulary.h RegisterScheduler, RegisterIoschedTunables), as a scheduler
// outside the built-in tables does once at start-up. Idempotent.
absl::Status RegisterFifoTestVocabulary();

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_FIFO_TEST_FIFO_TEST_H_
