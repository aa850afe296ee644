// Which of fio's log files blkbench writes as fio does (log_options.h).
#include "common/log_options.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace blkbench {

bool WantsLogs(const v1::JobSpec& spec) {
  return spec.has_write_bw_log() || spec.has_write_iops_log() || spec.has_write_lat_log() ||
         spec.has_write_hist_log();
}

uint32_t LogSampleIntervalMs(const v1::JobSpec& spec) {
  return spec.log_avg_msec() != 0 ? spec.log_avg_msec() : spec.log_hist_msec();
}

void CheckLogOptions(const v1::JobSpec& spec, const ResolvedJob& job,
                     std::vector<JobProblem>& out) {
  const struct {
    std::string_view key;
    bool set;
  } windowed[] = {{"write_bw_log", spec.has_write_bw_log()},
                  {"write_iops_log", spec.has_write_iops_log()},
                  {"write_lat_log", spec.has_write_lat_log()}};
  for (const auto& log : windowed) {
    if (!log.set || spec.log_avg_msec() != 0) continue;
    out.push_back({{log.key, "log_avg_msec"},
                   absl::StrCat(std::string(log.key),
                                " without log_avg_msec: fio would log every I/O; blkbench keeps "
                                "interval samples, not per-I/O records, so it writes fio's "
                                "windowed log only: set log_avg_msec (e.g. 1000)")});
  }
  if (spec.has_write_hist_log() && spec.log_hist_msec() == 0) {
    out.push_back({{"write_hist_log", "log_hist_msec"},
                   "write_hist_log without log_hist_msec: fio writes an empty histogram log; "
                   "set log_hist_msec (e.g. 1000)"});
  }
  if (spec.log_avg_msec() != 0 && spec.log_hist_msec() != 0 &&
      spec.log_hist_msec() % spec.log_avg_msec() != 0) {
    out.push_back({{"log_hist_msec", "log_avg_msec"},
                   absl::StrCat("log_hist_msec (", spec.log_hist_msec(),
                                ") is not a multiple of log_avg_msec (", spec.log_avg_msec(),
                                "): blkbench cuts its samples every log_avg_msec and sums them "
                                "into histogram log entries")});
  }
  if (spec.has_write_lat_log() && (job.engine_caps & kEngineSync) == 0) {
    out.push_back({{"write_lat_log", "ioengine"},
                   absl::StrCat("write_lat_log with ioengine ", std::string(job.engine_name),
                                ": fio splits an asynchronous I/O's latency into slat and clat; "
                                "blkbench times each I/O only from submission to completion, "
                                "so it writes lat logs only for synchronous engines (psync, "
                                "sync, ...), where fio's slat log is empty and clat is lat")});
  }
  if (WantsLogs(spec) && job.numjobs > 1) {
    out.push_back({{spec.has_write_bw_log()     ? "write_bw_log"
                    : spec.has_write_iops_log() ? "write_iops_log"
                    : spec.has_write_lat_log()  ? "write_lat_log"
                                                : "write_hist_log",
                    "numjobs"},
                   absl::StrCat("fio writes one log per job clone (numjobs ", job.numjobs,
                                "); blkbench samples a job's clones together: use numjobs 1, "
                                "or named jobs, for logs")});
  }
}

}  // namespace blkbench
