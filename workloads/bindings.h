// Internal to workloads/: a key read from the matrix file with its value(s) and
// where they were written, and the checks that need only the bindings themselves.
#ifndef BLKBENCH_WORKLOADS_BINDINGS_H_
#define BLKBENCH_WORKLOADS_BINDINGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "blkbench/v1/workload.pb.h"
#include "workloads/errors.h"
#include "workloads/job_options.h"

namespace blkbench::workloads {

struct Value {
  std::string text;  // the scalar as written (quotes removed)
  Position pos;
};

struct Binding {
  std::string key;       // as written; null_blk parameters as "null_blk.<param>"
  const OptionDef* def;  // never null
  std::string section;   // "job", "matrix", "target" or "device: null_blk"
  Position key_pos;
  std::vector<Value> values;  // one for a scalar, the list's values for an axis
  bool is_axis = false;
  bool valid = true;  // false once the key or any of its values was rejected
};

// Reports keys that set the same option twice (job: and matrix:, or an alias and
// its option) at the later one, and removes the later binding.
void RemoveConflicts(std::vector<Binding>& bindings, ErrorList& errors);

// Parses every value of every binding and reports bad values and repeated values
// within an axis (compared by meaning: "4k" repeats "4096"). Marks bindings with any
// bad value invalid. Returns DefaultCell() with every valid scalar binding applied, in
// order: the cell every expanded cell starts from, so a scalar is applied once per
// parse (an axis value once here, to check it, and once per cell that holds it).
v1::CellSpec CheckValues(std::vector<Binding>& bindings, ErrorList& errors);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_BINDINGS_H_
