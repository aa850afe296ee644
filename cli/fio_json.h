// fio-compatible JSON export of results (fio --output-format=json shape).
#ifndef BLKBENCH_CLI_FIO_JSON_H_
#define BLKBENCH_CLI_FIO_JSON_H_

#include <string>

#include "blkbench/v1/controller.pb.h"

namespace blkbench {

// One fio job per finished run: read/write io_bytes, bw, iops, runtime, total_ios,
// clat_ns/lat_ns with fio's default percentile list (from the merged histograms),
// usr_cpu/sys_cpu in percent, and the cell's options under "job options".
std::string ResultsAsFioJson(const v1::GetResultsResponse& resp);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_FIO_JSON_H_
