// fio's log files (write_bw_log, write_iops_log, write_lat_log, write_hist_log) from the
// per-job interval samples of finished runs, in fio 3.33's windowed formats and file
// names, so fio_generate_plots, fiologparser_hist.py and fio-plot read them.
// docs/fio-logs.md says what each column holds and what blkbench refuses to write.
#ifndef BLKBENCH_CLI_FIO_LOGS_H_
#define BLKBENCH_CLI_FIO_LOGS_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "blkbench/v1/controller.pb.h"

namespace blkbench {

struct FioLogFile {
  // "<run dir>/<prefix>_<type>.<job number>.log": the run dir is the cell label and the
  // repeat ("bs-4k_rep0"), the job number fio's (1 for a one-job cell, the named job's
  // position + 1 otherwise), the prefix write_<type>_log's value or the job's name.
  std::string name;
  std::string text;
};

struct FioLogs {
  std::vector<FioLogFile> files;
  // Runs whose cells ask for logs but that cannot have them, each with the reason (no
  // per-job samples: recorded before Sample.jobs existed).
  std::vector<std::string> skipped;
};

// The log files of every finished run (RUN_DONE) whose cell's jobs set write_*_log.
FioLogs FioLogFiles(const v1::GetResultsResponse& resp);

// Writes FioLogFiles(resp) under `dir` (created, with its run directories); the skipped
// runs are appended to `skipped`. An IO error names the file.
absl::Status WriteFioLogs(const v1::GetResultsResponse& resp, const std::string& dir,
                          std::vector<std::string>* skipped);

// `--logs DIR` of results, sim and run: WriteFioLogs, the skipped runs and any error on
// `err` prefixed with `who` ("blkbench results"). 0, or 1 when a file was not written.
int WriteFioLogsFlag(const v1::GetResultsResponse& resp, const std::string& dir,
                     const std::string& who, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_FIO_LOGS_H_
