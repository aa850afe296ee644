// Text formatting for the CLI: aligned tables, rates, latencies, progress bars.
#ifndef BLKBENCH_CONTROLLER_CLI_FORMAT_H_
#define BLKBENCH_CONTROLLER_CLI_FORMAT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "blkbench/v1/controller.pb.h"

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

std::string FormatIops(double iops);              // "212.4k"
std::string FormatBandwidth(double bytes_per_s);  // "829.7 MiB/s"
std::string FormatLatency(uint64_t ns);           // "12.3us", "4.1ms"
std::string FormatDuration(int64_t ms);           // "1m05s"
std::string ProgressBar(uint32_t done, uint32_t total, int width);
std::string RunStateName(v1::RunState s);  // "done", "running", ...
std::string ExperimentStateName(v1::ExperimentState s);

// Per-run results as a table, CSV or JSON (format "table", "csv", "json").
void PrintResults(const v1::GetResultsResponse& resp, const std::string& format, std::ostream& out);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_CLI_FORMAT_H_
