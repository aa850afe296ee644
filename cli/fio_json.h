// fio-compatible JSON export of results: the shape of fio 3.33's --output-format=json
// (and json+), key for key and type for type, so the tools that read fio's output —
// LKP-tests' fio parser, fio_jsonplus_clat2csv, fio-plot, scripts — read blkbench's.
// docs/fio-json.md says where each value comes from and what is approximated.
#ifndef BLKBENCH_CLI_FIO_JSON_H_
#define BLKBENCH_CLI_FIO_JSON_H_

#include <string>
#include <vector>

#include "blkbench/v1/controller.pb.h"

namespace blkbench {

struct FioJsonOptions {
  // What one fio "job" is. kCell: a cell, its finished repeats merged as fio's
  // group_reporting merges jobs (I/Os, bytes and histograms summed, over the summed
  // runtime: the time-weighted mean rate). kRun: one run.
  enum class Per { kCell, kRun };
  Per per = Per::kCell;
  bool plus = false;  // json+: clat_ns.bins, the histogram's buckets (fio's own layout)
  // A cell with named jobs (CellSpec.jobs) is one fio job per named job, as fio writes
  // one per section, all with the cell's groupid; group_reporting: one fio job for all of
  // them (the run's total), as fio's group_reporting merges a group.
  bool group_reporting = false;
};

// One fio document holding one job per cell (or run), groupid the cell index (or run id).
// Tools that sum jobs[] would add unrelated cells: give them FioJsonFiles instead.
std::string FioJsonDocument(const v1::GetResultsResponse& resp, const FioJsonOptions& options);

struct FioJsonFile {
  // "<cell label>[-<named job>].json", with "_rep<N>" per run; filesystem-safe ('=' as
  // '-', other punctuation as '_'), "-2", "-3" added only if two would still collide.
  std::string name;
  std::string json;  // a whole fio document with one job
};
// One document per cell (or run): what running fio once per cell would have written.
std::vector<FioJsonFile> FioJsonFiles(const v1::GetResultsResponse& resp,
                                      const FioJsonOptions& options);

// A label as a file name: letters, digits, '-', '.', '_' kept, '=' as '-', the rest as
// '_' ("bs=4k iodepth=8" -> "bs-4k_iodepth-8"); "" -> "cell".
std::string SafeName(const std::string& label);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_FIO_JSON_H_
