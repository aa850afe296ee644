// The `blkbench validate` cell table.
#include "workloads/format.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "blkbench/v1/workload.pb.h"
#include "common/resolved_job.h"
#include "common/units.h"
#include "workloads/job_options.h"
#include "workloads/named_jobs.h"

namespace blkbench::workloads {
namespace {

std::string RwName(const v1::JobSpec& job) {
  const std::string name = FioRwName(job.rw());
  if (job.rw() == v1::RANDRW || job.rw() == v1::READWRITE) {
    return absl::StrCat(name, " ", job.rwmixread(), "/", 100 - job.rwmixread());
  }
  return name.empty() ? "?" : name;
}

std::string OrDash(std::string s) {
  if (s.empty()) return "-";
  return s;
}

// A fixed column: the option it shows (skipped when that option is an axis).
struct Column {
  std::string_view canonical;
  std::function<std::string(const v1::CellSpec&)> text;
};

std::vector<Column> FixedColumns() {
  return {
      {"rw", [](const v1::CellSpec& c) { return RwName(c.job()); }},
      {"bs",
       [](const v1::CellSpec& c) {
         const v1::JobSpec& j = c.job();
         return j.write_bs() != 0 && j.write_bs() != j.bs()
                    ? absl::StrCat(FormatSize(j.bs()), ",", FormatSize(j.write_bs()))
                    : FormatSize(j.bs());
       }},
      {"iodepth", [](const v1::CellSpec& c) { return absl::StrCat(c.job().iodepth()); }},
      {"numjobs", [](const v1::CellSpec& c) { return absl::StrCat(c.job().numjobs()); }},
      {"ioengine",
       [](const v1::CellSpec& c) {
         const IoEngineInfo* e = FindIoEngine(c.job().ioengine());
         return e != nullptr ? std::string(e->name) : absl::StrCat(c.job().ioengine());
       }},
      {"direct", [](const v1::CellSpec& c) { return absl::StrCat(c.job().direct() ? 1 : 0); }},
      {"runtime",
       [](const v1::CellSpec& c) {
         return c.job().runtime_ns() == 0 ? std::string("-")
                                          : FormatDurationNs(c.job().runtime_ns());
       }},
      {"scheduler", [](const v1::CellSpec& c) { return OrDash(c.queue().scheduler()); }},
      {"device_class", [](const v1::CellSpec& c) { return OrDash(c.target().device_class()); }},
      {"kernel", [](const v1::CellSpec& c) { return OrDash(c.target().kernel()); }},
  };
}

}  // namespace

std::string FormatCells(const Matrix& m) {
  const size_t runs = m.cells.size() * m.repeats;
  std::string out = absl::StrCat(m.name, " (", m.file_name, "): ", m.cells.size(),
                                 m.cells.size() == 1 ? " cell" : " cells", " x ", m.repeats,
                                 m.repeats == 1 ? " repeat" : " repeats", " = ", runs,
                                 runs == 1 ? " run\n" : " runs\n");
  if (!m.description.empty()) absl::StrAppend(&out, m.description, "\n");

  // rows[0] is the header; column 0 the cell index, then axes, then fixed fields. A cell
  // with named jobs has a row per job: the first with the cell's columns, the others with
  // only the job's (a "job" column names them).
  bool named = false;
  for (const v1::CellSpec& cell : m.cells) named |= cell.jobs_size() > 0;
  std::vector<std::vector<std::string>> rows(1);
  rows[0].push_back("cell");
  if (named) rows[0].push_back("job");
  std::vector<std::string_view> axis_options;
  for (const std::string& axis : m.axes) {
    const OptionDef* def = FindOption(axis);
    if (def != nullptr) axis_options.push_back(def->canonical);
    rows[0].push_back(axis);
  }
  std::vector<const Column*> columns;
  const std::vector<Column> fixed = FixedColumns();  // `columns` points into it
  for (const Column& column : fixed) {
    // With named jobs an axis's column stays: each job's row shows what it runs.
    const OptionDef* def = FindOption(column.canonical);
    const bool per_job = def != nullptr && IsPerJobOption(*def);
    if ((!named || !per_job) && std::find(axis_options.begin(), axis_options.end(),
                                          column.canonical) != axis_options.end()) {
      continue;
    }
    columns.push_back(&column);
    rows[0].push_back(std::string(column.canonical));
  }
  for (size_t i = 0; i < m.cells.size(); ++i) {
    const v1::CellSpec& cell = m.cells[i];
    const int jobs = std::max(cell.jobs_size(), 1);
    for (int k = 0; k < jobs; ++k) {
      v1::CellSpec view = cell;  // the cell as its job k sees it
      if (cell.jobs_size() > 0) *view.mutable_job() = cell.jobs(k).job();
      std::vector<std::string>& row = rows.emplace_back();
      row.push_back(k == 0 ? absl::StrCat(i) : "");
      if (named) row.push_back(cell.jobs_size() > 0 ? cell.jobs(k).name() : "-");
      const auto& axes = cell.axes();
      for (size_t a = 0; a < m.axes.size(); ++a) {
        const std::string value = a < static_cast<size_t>(axes.size()) ? axes[a].value() : "?";
        row.push_back(k == 0 ? value : "");
      }
      for (const Column* column : columns) {
        const OptionDef* def = FindOption(column->canonical);
        const bool per_job = def != nullptr && IsPerJobOption(*def);
        row.push_back(k == 0 || per_job ? column->text(view) : "");
      }
    }
  }

  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      absl::StrAppend(&line, row[c]);
      if (c + 1 < row.size()) line.append(width[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();  // blank trailing columns
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

}  // namespace blkbench::workloads
