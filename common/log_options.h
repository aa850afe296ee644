// fio's log options (write_bw_log, write_iops_log, write_lat_log, write_hist_log,
// log_avg_msec, log_hist_msec, log_offset): what blkbench can write faithfully from its
// interval samples, checked once for the matrix parser, the agent and the log writer.
#ifndef BLKBENCH_COMMON_LOG_OPTIONS_H_
#define BLKBENCH_COMMON_LOG_OPTIONS_H_

#include <cstdint>
#include <vector>

#include "blkbench/v1/workload.pb.h"
#include "common/resolved_job.h"

namespace blkbench {

// True when the job asks for any of fio's log files.
bool WantsLogs(const v1::JobSpec& spec);

// The sample interval the job's logs need, in ms: log_avg_msec, else log_hist_msec, else
// 0 (the agent's default). The histogram log's interval is a multiple of it (checked).
uint32_t LogSampleIntervalMs(const v1::JobSpec& spec);

// Appends a problem for each log fio would write that blkbench cannot write as fio does:
//   bw/iops/lat logs without log_avg_msec (fio logs every I/O; blkbench keeps intervals),
//   a histogram log without log_hist_msec (fio writes it empty), log_hist_msec not a
//   multiple of log_avg_msec (the samples are cut at log_avg_msec), a lat log with an
//   asynchronous engine (fio's slat and clat split the time blkbench measures as one),
//   and any log with numjobs > 1 (fio writes one per clone; blkbench samples a job's
//   clones together). `job` is the resolved `spec`.
void CheckLogOptions(const v1::JobSpec& spec, const ResolvedJob& job, std::vector<JobProblem>& out);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_LOG_OPTIONS_H_
