// One run's results as a flat, script-friendly row: the single schema of the
// controller's /api/v1/results and of `blkbench results|sim --format json|csv`. Numbers
// are numbers (base units: seconds, bytes), names use fio's spellings (`randread`), and
// states are lower case (`done`), never protobuf enum names. See docs/metrics.md.
#ifndef BLKBENCH_COMMON_METRICS_RESULT_ROWS_H_
#define BLKBENCH_COMMON_METRICS_RESULT_ROWS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "blkbench/v1/controller.pb.h"

namespace blkbench {

// A field's value: text, a number, or null (a number the run does not have).
struct ResultValue {
  enum class Kind { kText, kNumber, kNull };
  Kind kind = Kind::kNull;
  std::string text;
  double number = 0;
};

struct ResultRow {
  std::vector<std::pair<std::string, ResultValue>> fields;  // in schema order
  std::vector<std::pair<std::string, std::string>> axes;    // the cell's axes, in order
  std::map<std::string, double> internals;                  // engine internals, by key
  // Per named job (RunResult.jobs) of a done run: its fields (name, options, I/O, rates,
  // latency), in the cell's order; empty for a one-job cell.
  std::vector<std::vector<std::pair<std::string, ResultValue>>> jobs;
};

ResultValue TextValue(std::string s);
ResultValue NumberValue(double v);  // null when not finite

// A value as JSON (a quoted string, a number, or null) and as plain text ("" for null).
std::string ResultValueJson(const ResultValue& v);
std::string ResultValueText(const ResultValue& v);
// `s` as one CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
std::string CsvField(const std::string& s);

// `v` as result rows print numbers: integers exactly, others to 12 significant digits.
std::string ResultNumberText(double v);

// The row of `run`, a run of cell `cell` of experiment (`experiment_id`, `name`). A run
// without a result (not DONE) has null metrics.
ResultRow MakeResultRow(uint64_t experiment_id, const std::string& experiment_name,
                        const v1::CellSpec& cell, const v1::Run& run);

// `{"experiment": 3, ..., "axes": {"bs": "4k"}, ..., "internals": {...}}`, no newline;
// a cell with named jobs ends with `"jobs": [{"name": "reader", ...}, ...]`.
std::string ResultRowJson(const ResultRow& row);
// A JSON array of rows, one per line, ending with a newline ("[]\n" when empty).
std::string ResultRowsJson(const std::vector<ResultRow>& rows);
// CSV (RFC 4180) with a header: the fields in schema order, with one `axes.KEY` column
// per axis key of any row after `cell_without_kernel`, and one `internals.KEY` column
// per internal key at the end. Missing values are empty.
std::string ResultRowsCsv(const std::vector<ResultRow>& rows);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_METRICS_RESULT_ROWS_H_
