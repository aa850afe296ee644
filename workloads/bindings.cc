// Per-binding checks: conflicting keys and per-value parsing, before expansion.
#include "workloads/bindings.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "blkbench/v1/workload.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "workloads/absl_compat.h"
#include "workloads/errors.h"
#include "workloads/job_options.h"
#include "workloads/sim_checks.h"

namespace blkbench::workloads {

void RemoveConflicts(std::vector<Binding>& bindings, ErrorList& errors) {
  std::vector<Binding> kept;
  kept.reserve(bindings.size());
  for (Binding& b : bindings) {
    const Binding* first = nullptr;
    for (const Binding& k : kept) {
      if (k.def->canonical == b.def->canonical) {
        first = &k;
        break;
      }
    }
    if (first == nullptr) {
      kept.push_back(std::move(b));
      continue;
    }
    if (first->key == b.key) {
      errors.Add(b.key_pos,
                 absl::StrCat("key '", b.key, "' is given in both ", first->section, ": (line ",
                              first->key_pos.line, ") and ", b.section, ":; give it in one place"));
    } else {
      errors.Add(b.key_pos, absl::StrCat("key '", b.key, "' sets the same option as '", first->key,
                                         "' (", first->section, ":, line ", first->key_pos.line,
                                         "); give only one of them"));
    }
  }
  bindings = std::move(kept);
}

v1::CellSpec CheckValues(std::vector<Binding>& bindings, ErrorList& errors) {
  v1::CellSpec base = DefaultCell();
  for (Binding& b : bindings) {
    // The parsed form of each good value, to spot repeats by meaning.
    std::vector<std::pair<const Value*, v1::CellSpec>> parsed;
    for (const Value& v : b.values) {
      // A scalar is applied to a copy of the base (a rejected value must leave no
      // trace); an axis value to a default cell of its own.
      v1::CellSpec cell = b.is_axis ? DefaultCell() : base;
      if (!b.def->Apply(v.text, cell)) {
        errors.Add(v.pos, absl::StrCat("key '", b.key, "': expected ", ToAbsl(b.def->expected),
                                       ", got '", v.text, "'"));
        b.valid = false;
        continue;
      }
      // Values the engine would refuse at run time (sim: classes, kernels, machines).
      if (std::string problem = SimValueProblem(b.def->canonical, v.text); !problem.empty()) {
        errors.Add(v.pos, std::move(problem));
        b.valid = false;
        continue;
      }
      if (!b.is_axis) {
        base = std::move(cell);
        continue;
      }
      for (const auto& [earlier, earlier_cell] : parsed) {
        if (google::protobuf::util::MessageDifferencer::Equals(cell, earlier_cell)) {
          errors.Add(v.pos, absl::StrCat("key '", b.key, "': duplicate axis value '", v.text,
                                         "' (same as '", earlier->text, "' at line ",
                                         earlier->pos.line, ")"));
          b.valid = false;
          break;
        }
      }
      parsed.emplace_back(&v, std::move(cell));
    }
  }
  return base;
}

}  // namespace blkbench::workloads
