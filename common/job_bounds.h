// Upper bounds of a job's sizes and times, each with the reason its error gives. The
// parser takes any size that fits 64 bits (bs: 4294967296g) and any duration; these
// bounds turn a typo or a hostile value into a validate-time error instead of a run that
// splits, overflows or holds a device for years. ResolveJob reports them, so the matrix
// parser, the agent's CheckCellBounds and the engine agree.
#ifndef BLKBENCH_COMMON_JOB_BOUNDS_H_
#define BLKBENCH_COMMON_JOB_BOUNDS_H_

#include <cstdint>
#include <vector>

#include "blkbench/v1/workload.pb.h"
#include "common/resolved_job.h"

namespace blkbench {

// bs, each bssplit size, bsrange's maximum. Linux splits a bio larger than the queue's
// max_sectors_kb (at most max_hw_sectors_kb: a few MiB on real devices; bio_split_rw), so
// a larger block measures the split, not the size asked; fio's own buffers are bs ×
// iodepth per job. 64 MiB is above every device's max I/O size.
inline constexpr uint64_t kMaxBs = uint64_t{64} << 20;
// size, offset, offset_increment, io_size: 1 EiB, beyond any block device. File offsets
// are signed 64-bit (loff_t, below 8 EiB) and a job's region ends at offset +
// offset_increment × job + size, which must stay below that too (kMaxFileOffset).
inline constexpr uint64_t kMaxJobBytes = uint64_t{1} << 60;
inline constexpr uint64_t kMaxFileOffset = (uint64_t{1} << 63) - 1;  // loff_t's maximum
// runtime, ramp_time, startdelay: a run holds its device and its lease the whole time,
// and a bare number is seconds, so "runtime: 3000000" (35 days) is a slip more often than
// a plan. Longer soaks are several runs (repeats).
inline constexpr uint64_t kMaxJobDurationNs = uint64_t{30} * 24 * 3600 * 1'000'000'000;

// nr_requests: the kernel refuses more than the hardware queue's tags without a scheduler
// (at most BLK_MQ_MAX_DEPTH, 10240) and more than MAX_SCHED_RQ (2048) with one
// (blk_mq_tag_update_depth), so a larger value fails on every device.
inline constexpr uint32_t kMaxNrRequests = 10240;

// Appends a problem for each of `spec`'s values above its bound (keys as in JobProblem).
// `numjobs` is the resolved count (offset_increment applies per job).
void CheckJobBounds(const v1::JobSpec& spec, uint32_t numjobs, std::vector<JobProblem>& out);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_JOB_BOUNDS_H_
