// The engine as a Runner: runs matrix cells on simulated devices.
#ifndef BLKBENCH_ENGINE_MODEL_ENGINE_RUNNER_H_
#define BLKBENCH_ENGINE_MODEL_ENGINE_RUNNER_H_

#include <cstdint>
#include <memory>

#include "common/runner.h"

namespace blkbench::engine {

// The size every simulated device presents (common/runner.h).
using ::blkbench::kSimulatedDeviceBytes;

// Runs cells on simulated devices (device_class "sim:<kind>", e.g. sim:null_blk, sim:hdd,
// sim:ssd, sim:optane). Time is simulated: runtime, ramp and sample_interval are
// simulated nanoseconds, and Sample.offset_ns is simulated time since the ramp end.
// ctx.target_path is ignored; ctx.target_size (if non-zero) bounds the jobs' regions.
// Device params "engine.can_queue" (the SCSI host's tags for budgeted devices),
// "engine.rq_affinity" (0-2) and "engine.irq_cpu" tune the block layer (see QueueOptions).
// Errors: InvalidArgument/NotFound for a cell it cannot model (see DeriveConfig),
// Unimplemented for elevators, Cancelled when ctx.cancel is set (checked every simulated
// millisecond). Each Run is independent; the runner is thread-compatible.
//
// RunResult.internals (doubles; counters cover the measured window after the ramp):
//   engine.trace_hash   low 52 bits of the simulator's trace hash (exact in a double)
//   engine.events       events executed;  engine.sim_ns: simulated time at the end
//   engine.wall_ns      wall-clock time of the whole Run
//   tags.single_allocs  blk_mq_get_tag successes;  tags.batch_allocs: batch attempts
//   tags.batch_requested / tags.batch_obtained: tags asked for / got by batches
//   tags.waits          sleeps in blk_mq_get_tag;  tags.wakeups: waiters woken
//   tags.preempts       a bio's first piece took a tag while others waited for one
//   tags.continuation_waits: sleeps of a split bio's later pieces
//   plug.flushes        blk_mq_flush_plug_list calls with requests
//   split.pieces        requests made from bios that were split
//   dispatch.requests   requests issued to the driver
//   dispatch.requeues   requests that found no budget (SCSI-like devices) and waited on
//                       hctx->dispatch;  dispatch.restarts: SCHED_RESTART queue re-runs
//   merges.plug         bios back-merged into the plug's last request
//   completion.ipis     completions sent to the submitting CPU by IPI (single-vector
//                       devices, rq_affinity);  completion.remote: completed on the
//                       interrupted CPU instead of the submitter
//   seq_ratio           share of issued requests starting at the previous one's end
//   inflight.mean       time-average of I/Os between submission and CQE
//   cpu_ns_per_io.<stage>  simulated CPU ns per completed I/O (StageName(stage))
// sys_cpu_ns is the jobs' simulated CPU busy time; usr_cpu_ns is 0 (fio is not modelled).
std::unique_ptr<Runner> NewEngineRunner();

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_ENGINE_RUNNER_H_
