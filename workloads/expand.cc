// Cartesian expansion of a matrix's axes into cells, with cross-key checks per cell.
#include "workloads/expand.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "blkbench/v1/workload.pb.h"
#include "workloads/cell_checks.h"
#include "workloads/format.h"
#include "workloads/job_options.h"

namespace blkbench::workloads {
namespace {

// Where one cell's value of a key came from.
struct Source {
  std::string_view canonical;
  Position pos;
  bool is_axis;
};

const Source* FindSource(const std::vector<Source>& sources, std::string_view canonical) {
  for (const Source& s : sources) {
    if (s.canonical == canonical) return &s;
  }
  return nullptr;
}

// Where each named job's own keys (and its group) were written.
struct JobSources {
  std::string_view name;
  std::vector<Source> sources;
};

// Reports `cell`'s cross-key problems that involve no broken key. A named job's problem
// is blamed on the job's own keys before the cell's.
void ReportIssues(const v1::CellSpec& cell, const std::vector<Source>& sources,
                  const std::vector<JobSources>& job_sources,
                  const std::vector<std::string_view>& broken_keys,
                  absl::flat_hash_set<std::string>& seen, ErrorList& errors) {
  for (const CellIssue& issue : CheckCell(cell)) {
    const bool involves_broken = std::any_of(issue.keys.begin(), issue.keys.end(), [&](auto k) {
      return std::find(broken_keys.begin(), broken_keys.end(), k) != broken_keys.end();
    });
    if (involves_broken) continue;
    const std::vector<Source>* own = nullptr;
    for (const JobSources& js : job_sources) {
      if (!issue.job.empty() && js.name == issue.job) own = &js.sources;
    }
    const Source* blame = nullptr;
    bool from_axis = false;
    for (std::string_view key : issue.keys) {
      const Source* s = own != nullptr ? FindSource(*own, key) : nullptr;
      if (s == nullptr) s = FindSource(sources, key);
      if (s == nullptr) continue;
      if (blame == nullptr) blame = s;
      from_axis = from_axis || s->is_axis;
    }
    const Position pos = blame != nullptr ? blame->pos : Position{};
    // The same problem in many cells is reported once, at its first cell.
    if (!seen.insert(absl::StrCat(pos.line, ":", pos.column, ":", issue.message)).second) continue;
    std::string message = issue.message;
    if (from_axis) absl::StrAppend(&message, " (cell ", cell.index(), ": ", CellLabel(cell), ")");
    errors.Add(pos, std::move(message));
  }
}

}  // namespace

Expansion ExpandCells(const std::vector<Binding>& bindings, const std::vector<NamedJobDef>& jobs,
                      const v1::CellSpec& base, const std::vector<std::string_view>& broken_keys,
                      Position matrix_pos, ErrorList& errors) {
  Expansion out;
  std::vector<const Binding*> axes;
  std::vector<const Binding*> scalars;
  std::vector<std::string_view> broken = broken_keys;
  uint64_t total = 1;
  for (const Binding& b : bindings) {
    if (!b.valid) {
      broken.push_back(b.def->canonical);
      continue;
    }
    if (b.is_axis) {
      axes.push_back(&b);
      out.axes.push_back(b.key);
      total = std::min<uint64_t>(total * b.values.size(), kMaxCells + 1);
    } else {
      scalars.push_back(&b);
    }
  }
  if (total > kMaxCells) {
    std::vector<std::string> sizes;
    sizes.reserve(axes.size());
    for (const Binding* b : axes) sizes.push_back(absl::StrCat(b->key, "=", b->values.size()));
    errors.Add(matrix_pos,
               absl::StrCat("the matrix expands to more than ", kMaxCells, " cells (",
                            absl::StrJoin(sizes, " x "), "); split it into smaller matrices"));
    return out;
  }

  std::vector<Source> base_sources;  // the scalars are already applied to `base`
  base_sources.reserve(scalars.size());
  for (const Binding* b : scalars) {
    base_sources.push_back({b->def->canonical, b->values[0].pos, false});
  }

  std::vector<JobSources> job_sources;
  for (const NamedJobDef& job : jobs) {
    JobSources& js = job_sources.emplace_back(JobSources{job.name, {}});
    for (const Binding& b : job.options) {
      if (!b.valid) broken.push_back(b.def->canonical);
      js.sources.push_back({b.def->canonical, b.values[0].pos, false});
    }
    js.sources.push_back({"group", job.group.empty() ? job.pos : job.group_pos, false});
  }

  absl::flat_hash_set<std::string> seen;
  std::vector<size_t> pick(axes.size(), 0);  // odometer; the last axis turns fastest
  out.cells.reserve(total);
  for (uint64_t index = 0; index < total; ++index) {
    v1::CellSpec cell = base;
    cell.set_index(static_cast<uint32_t>(index));
    std::vector<Source> sources = base_sources;
    for (size_t a = 0; a < axes.size(); ++a) {
      const Value& v = axes[a]->values[pick[a]];
      axes[a]->def->Apply(v.text, cell);
      v1::AxisValue* axis = cell.add_axes();
      axis->set_key(axes[a]->key);
      axis->set_value(v.text);
      sources.push_back({axes[a]->def->canonical, v.pos, true});
    }
    ApplyNamedJobs(jobs, cell);
    ResolveDerivedDefaults(cell);
    ReportIssues(cell, sources, job_sources, broken, seen, errors);
    out.cells.push_back(std::move(cell));
    for (size_t a = axes.size(); a-- > 0;) {
      if (++pick[a] < axes[a]->values.size()) break;
      pick[a] = 0;
    }
  }
  return out;
}

}  // namespace blkbench::workloads
