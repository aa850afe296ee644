// Several fio jobs that run at once (sections without stonewall) imported as one cell's
// named jobs, and the end of every imported matrix: the phases' axis, the target, what
// was not imported, and the block that lists what changes the workload.
#include "workloads/fio_import_jobs.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "blkbench/v1/workload.pb.h"
#include "workloads/absl_compat.h"
#include "workloads/job_options.h"
#include "workloads/labels.h"
#include "workloads/matrix.h"
#include "workloads/named_jobs.h"
#include "workloads/yaml_scalar.h"

namespace blkbench::workloads {
namespace {

// fio's numjobs of a converted job (1 when not given).
uint64_t Numjobs(const Converted& c) {
  auto it = c.values.find("numjobs");
  uint64_t n = 0;
  return it != c.values.end() && absl::SimpleAtoi(it->second.value, &n) && n > 0 ? n : 1;
}

// Job options one run shares (cell_checks.cc CheckCell: one clock, one launcher).
constexpr std::string_view kRunKeys[] = {"runtime", "ramp_time", "thread"};

bool IsRunKey(std::string_view key) {
  return std::find(std::begin(kRunKeys), std::end(kRunKeys), key) != std::end(kRunKeys);
}

}  // namespace

void AppendKey(std::string& y, const char* indent, const std::string& key, const Carried& c) {
  absl::StrAppend(&y, indent, key, ": ", YamlScalar(c.value, ScalarKind::kOptionValue));
  if (c.fio_key != key && !c.where.empty())
    absl::StrAppend(&y, "  # fio ", c.fio_key, " (", c.where, ")");
  absl::StrAppend(&y, "\n");
}

absl::StatusOr<FioImport> ImportConcurrentFio(const FioJobs& first_phase, const FioJobs& all,
                                              const PhasePlan& plan,
                                              const FioImportOptions& options) {
  FioImport result;
  std::vector<Converted> conv;
  for (const FioJob& job : first_phase.jobs) {
    conv.push_back(ConvertJob(job));
    AddDrops(conv.back().drops, result);
  }
  const Converted& first = conv[0];

  // What every job sets alike is fio's [global]: job:. The cell's own keys (scheduler, ...)
  // and those its jobs share go there too, the first job's value when they differ, with a
  // comment and a loss.
  std::vector<std::string> global_keys, global_comments;
  std::set<std::string> global;
  for (const std::string& key : first.key_order) {
    bool same = true;
    std::string differs, differs_where;
    for (const Converted& c : conv) {
      auto it = c.values.find(key);
      if (it == c.values.end() || it->second.value != first.values.at(key).value) {
        same = false;
        if (differs.empty()) {
          differs = c.name;
          differs_where = it == c.values.end() ? "" : it->second.where;
        }
      }
    }
    const OptionDef* def = FindOption(key);
    if (same || (def != nullptr && !IsPerJobOption(*def)) || IsRunKey(key)) {
      global_keys.push_back(key);
      global.insert(key);
      if (!same) {
        global_comments.push_back(absl::StrCat(key, " differs between the fio jobs (job '", differs,
                                               "'); a cell has one: job '", first.name,
                                               "''s [changes the workload]"));
        AddDrops({{differs_where, absl::StrCat(key, " of job '", differs, "'"),
                   absl::StrCat("a cell has one ", key, " for all its jobs: job '", first.name,
                                "''s is used"),
                   true}},
                 result);
      }
    }
  }
  for (const Converted& c : conv) {
    for (std::string_view k : kRunKeys) {
      const std::string run_key(k);
      auto it = c.values.find(run_key);
      if (first.values.count(run_key) || it == c.values.end()) continue;
      global_comments.push_back(absl::StrCat(run_key, "=", it->second.value, " of job '", c.name,
                                             "': not carried over: the jobs share job '",
                                             first.name, "''s [changes the workload]"));
      AddDrops({{it->second.where, absl::StrCat(run_key, "=", it->second.value),
                 absl::StrCat("a cell's jobs share one ", run_key, ": job '", first.name,
                              "''s (fio's default) is used"),
                 true}},
               result);
    }
  }
  for (const std::string& comment : first.comments) {
    bool everywhere = true;
    for (const Converted& c : conv) {
      everywhere &= std::find(c.comments.begin(), c.comments.end(), comment) != c.comments.end();
    }
    if (everywhere) global_comments.push_back(comment);
  }

  // fio's cgroup= per job: a layout of named groups, each job in its own.
  std::string layout;
  std::vector<std::string> group_of(conv.size());
  size_t with_cgroup = 0;
  for (const Converted& c : conv) with_cgroup += c.cgroup_name.empty() ? 0 : 1;
  if (with_cgroup == conv.size()) {
    std::vector<std::string> names;
    std::map<std::string, std::pair<std::string, uint64_t>> groups;  // weight, jobs
    for (size_t j = 0; j < conv.size(); ++j) {
      const Converted& c = conv[j];
      auto [it, fresh] = groups.emplace(
          c.cgroup_name, std::make_pair(c.cgroup_weight.empty() ? "100" : c.cgroup_weight, 0));
      if (fresh) names.push_back(c.cgroup_name);
      it->second.second += Numjobs(c);
      group_of[j] = c.cgroup_name;
    }
    std::vector<std::string> items;
    items.reserve(names.size());
    for (const std::string& n : names) {
      items.push_back(absl::StrCat(n, ":", groups[n].first, "*", groups[n].second));
    }
    layout = absl::StrJoin(items, ",");
    v1::CellSpec scratch = DefaultCell();
    if (!FindOption("cgroup")->Apply(layout, scratch)) {
      global_comments.push_back(absl::StrCat("cgroup layout '", layout,
                                             "' from the jobs' cgroup= and cgroup_weight=: not "
                                             "carried over (names [a-z0-9_-], weights 1 to 1000)"));
      AddDrops({{first.cgroup_where, absl::StrCat("cgroup layout '", layout, "'"),
                 "cgroup names are [a-z0-9_-], weights 1 to 1000", true}},
               result);
      layout.clear();
      group_of.assign(conv.size(), "");
    }
  } else if (with_cgroup > 0) {
    global_comments.emplace_back(
        "cgroup=: not carried over: only some jobs set it, and a cell places all its jobs in "
        "groups or none [changes the workload]");
    AddDrops({{"", "cgroup=", "only some jobs set it; a cell places all its jobs in groups or none",
               true}},
             result);
  }

  // fio's jobs run on their own files; a cell's jobs share the target.
  for (const Converted& c : conv) {
    if (c.filename == first.filename) continue;
    AddDrops({{c.filename_where, absl::StrCat("filename=", c.filename, " of job '", c.name, "'"),
               absl::StrCat("a cell's jobs share one target: job '", first.name, "''s (",
                            first.filename.empty() ? "none" : first.filename, ")"),
               true}},
             result);
  }
  const TargetClass target = ChooseClass(first, options, result);

  std::string y = absl::StrCat(
      "# Imported from ", options.source,
      " by blkbench import. The fio jobs that run at once are the named\n"
      "# jobs of jobs:, what they all set alike is under job: (fio's [global]); fio options it\n"
      "# could not carry over are comments, each with the reason.\n");
  const std::string matrix_name =
      plan.axis_key.empty() ? first.name : PhasedName(options.source, first.name);
  absl::StrAppend(&y, "name: ", YamlScalar(MatrixName(matrix_name)), "\n");
  for (const Converted& c : conv) {
    if (c.description.empty()) continue;
    absl::StrAppend(&y, "description: ", YamlScalar(c.description), "\n");
    break;
  }
  absl::StrAppend(&y, "job:\n");
  for (const std::string& key : global_keys) AppendKey(y, "  ", key, first.values.at(key));
  if (!layout.empty())
    absl::StrAppend(&y, "  cgroup: ", YamlScalar(layout, ScalarKind::kOptionValue),
                    "  # fio cgroup= and cgroup_weight=\n");
  for (const std::string& c : global_comments) absl::StrAppend(&y, "  # ", c, "\n");
  if (global_keys.empty() && layout.empty()) absl::StrAppend(&y, "  {}\n");
  absl::StrAppend(&y, "jobs:\n");
  std::set<std::string> taken;
  for (size_t j = 0; j < conv.size(); ++j) {
    const Converted& c = conv[j];
    std::string name =
        c.name.empty() || !LabelProblem(c.name).empty() ? absl::StrCat("job", j) : c.name;
    for (int k = 2; !taken.insert(name).second; ++k) name = absl::StrCat(c.name, "-", k);
    absl::StrAppend(&y, "  ", YamlScalar(name), ":\n");
    bool any = false;
    for (const std::string& key : c.key_order) {
      if (global.count(key) || IsRunKey(key)) continue;
      AppendKey(y, "    ", key, c.values.at(key));
      any = true;
    }
    if (!group_of[j].empty()) {
      absl::StrAppend(&y, "    group: ", YamlScalar(group_of[j]), "\n");
      any = true;
    }
    for (const std::string& comment : c.comments) {
      if (std::find(global_comments.begin(), global_comments.end(), comment) !=
          global_comments.end()) {
        continue;
      }
      absl::StrAppend(&y, "    # ", comment, "\n");
    }
    if (!any) absl::StrAppend(&y, "    {}\n");
  }
  return FinishImport(std::move(y), target, options, all, plan, std::move(result));
}

FioImport FinishImport(std::string y, const TargetClass& target, const FioImportOptions& options,
                       const FioJobs& all, const PhasePlan& plan, FioImport result) {
  if (!plan.axis_key.empty()) {
    absl::StrAppend(&y, "matrix:\n  ", plan.axis_key, ":  # fio's ", plan.phases,
                    " phases (stonewall), one cell each, in fio's order\n");
    for (size_t p = 0; p < plan.axis_values.size(); ++p) {
      absl::StrAppend(&y, "    - ", YamlScalar(plan.axis_values[p], ScalarKind::kOptionValue),
                      "  # ", plan.axis_sources[p], "\n");
    }
    result.notes.push_back(absl::StrCat(
        "fio's ", plan.phases, " phases became the axis ", plan.axis_key,
        ": each a cell, a run of its own (a phase does not start from what the one before "
        "left on the device)"));
  }
  absl::StrAppend(&y, "target:\n  device_class: ", YamlScalar(target.device_class));
  if (!target.comment.empty()) absl::StrAppend(&y, "  # ", target.comment);
  absl::StrAppend(&y, "\n");
  if (!options.kernel.empty()) absl::StrAppend(&y, "  kernel: ", YamlScalar(options.kernel), "\n");
  const size_t dropped_from = plan.axis_key.empty() ? plan.first_phase_jobs : all.jobs.size();
  for (size_t j = dropped_from; j < all.jobs.size(); ++j) {
    const FioJob& other = all.jobs[j];
    absl::StrAppend(&y, "# fio job '", other.name, "' (", other.where,
                    ") runs after the jobs before it (stonewall) and was not imported: ",
                    plan.no_axis_why, ". Its options:\n");
    for (const FioOption& o : other.options) {
      absl::StrAppend(&y, "#   ", o.key, o.has_value ? "=" : "", o.value, "\n");
    }
    AddDrops({{other.where, absl::StrCat("job '", other.name, "'"),
               absl::StrCat("it runs after the jobs before it (stonewall) and ", plan.no_axis_why,
                            "; import it on its own"),
               true}},
             result);
  }
  for (const FioOption& o : all.program_options) {
    absl::StrAppend(&y, "# fio's own option --", o.key, o.has_value ? "=" : "", o.value, " (",
                    o.where, "): not a job option; blkbench stores every result\n");
  }
  // What the matrix does not run that fio would, first thing a reader sees.
  std::string lost;
  for (const FioDrop& d : result.dropped) {
    if (!d.changes_workload) continue;
    absl::StrAppend(&lost, "#   ", d.where.empty() ? "" : d.where + ": ", d.what, ": ", d.why,
                    "\n");
  }
  if (!lost.empty()) {
    y = absl::StrCat("# LOSSY IMPORT: this matrix does not run what ", options.source,
                     " runs. Lost:\n", lost, "#\n", y);
  }
  if (absl::StatusOr<Matrix> check = ParseMatrix(y, options.output_name); !check.ok()) {
    result.problems = std::string(check.status().message());
  }
  result.yaml = std::move(y);
  return result;
}

}  // namespace blkbench::workloads
