// Text formatting for the CLI: aligned tables, rates, latencies, progress bars.
#ifndef BLKBENCH_CLI_FORMAT_H_
#define BLKBENCH_CLI_FORMAT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "blkbench/v1/controller.pb.h"
#include "common/metrics/result_rows.h"
#include "common/states.h"

namespace blkbench {

// A table whose columns are padded to the widest cell; numbers right-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string ToString() const;
  std::string ToCsv() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Records for listing commands: the same columns as an aligned table, CSV or a JSON
// array of objects (numbers as numbers, nulls for missing values).
class Records {
 public:
  explicit Records(std::vector<std::string> columns) : columns_(std::move(columns)) {}
  void Add(std::vector<ResultValue> row) { rows_.push_back(std::move(row)); }
  // `format` is "table", "csv" or "json".
  std::string Render(const std::string& format) const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<ResultValue>> rows_;
};
std::string FormatIops(double iops);              // "212.4k"
std::string FormatBandwidth(double bytes_per_s);  // "829.7 MiB/s"
std::string FormatLatency(uint64_t ns);           // "12.3us", "4.1ms"
std::string FormatDuration(int64_t ms);           // "1m05s"
std::string ProgressBar(uint32_t done, uint32_t total, int width);

// One record per stored sample of every run (a GetResults answer with samples): run,
// seq, offset and interval, I/O counts and bytes, IOPS, bandwidth and the interval's
// p50/p99 latency.
Records SampleRecords(const v1::GetResultsResponse& resp);

// Per-run results as a table, or in the results schema (common/metrics/result_rows.h)
// as CSV or JSON, or as fio JSON (format "table", "csv", "json", "fio-json", "fio-json+":
// one job per cell).
void PrintResults(const v1::GetResultsResponse& resp, const std::string& format, std::ostream& out);

// fio-json and fio-json+ (`format`): one document on `out`, or with a non-empty `out_dir`
// one file per cell (per "cell") or per run (per "run") there, each file's name on `out`.
// Returns the exit code; a file that cannot be written is reported on `err` (1).
// group_reporting: a cell's named jobs as one fio job (FioJsonOptions::group_reporting).
int PrintFioJson(const v1::GetResultsResponse& resp, const std::string& format,
                 const std::string& per, const std::string& out_dir, std::ostream& out,
                 std::ostream& err, bool group_reporting = false);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_FORMAT_H_
