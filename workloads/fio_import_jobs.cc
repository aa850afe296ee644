// Several fio jobs that run at once (sections without stonewall) imported as one cell's
// named jobs, and the comments for those that wait.
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

namespace blkbench::workloads {
namespace {

bool Waits(const FioJob& job) {
  for (const FioOption& o : job.options) {
    const bool on = !o.has_value || (o.value != "0" && !o.value.empty());
    if ((o.key == "stonewall" || o.key == "wait_for_previous") && on) return true;
    if (o.key == "wait_for" && o.has_value && !o.value.empty()) return true;
  }
  return false;
}

// fio's numjobs of a converted job (1 when not given).
uint64_t Numjobs(const Converted& c) {
  auto it = c.values.find("numjobs");
  uint64_t n = 0;
  return it != c.values.end() && absl::SimpleAtoi(it->second.value, &n) && n > 0 ? n : 1;
}

void AppendKey(std::string& y, const char* indent, const std::string& key, const Carried& c) {
  absl::StrAppend(&y, indent, key, ": ", YamlScalar(c.value));
  if (c.fio_key != key && !c.where.empty())
    absl::StrAppend(&y, "  # fio ", c.fio_key, " (", c.where, ")");
  absl::StrAppend(&y, "\n");
}

}  // namespace

size_t ConcurrentJobs(const FioJobs& jobs) {
  size_t n = jobs.jobs.empty() ? 0 : 1;
  while (n < jobs.jobs.size() && !Waits(jobs.jobs[n])) ++n;
  return n;
}

absl::StatusOr<FioImport> ImportConcurrentFio(const FioJobs& jobs, size_t concurrent,
                                              const FioImportOptions& options) {
  FioImport result;
  std::vector<Converted> conv;
  for (size_t j = 0; j < concurrent; ++j) conv.push_back(ConvertJob(jobs.jobs[j]));
  const Converted& first = conv[0];

  // What every job sets alike is fio's [global]: job:. The cell's own keys (scheduler, ...)
  // go there too, the first job's value when they differ, with a comment.
  std::vector<std::string> global_keys, global_comments;
  std::set<std::string> global;
  for (const std::string& key : first.key_order) {
    bool same = true;
    std::string differs;
    for (const Converted& c : conv) {
      auto it = c.values.find(key);
      if (it == c.values.end() || it->second.value != first.values.at(key).value) {
        same = false;
        if (differs.empty()) differs = c.name;
      }
    }
    const OptionDef* def = FindOption(key);
    if (same || (def != nullptr && !IsPerJobOption(*def))) {
      global_keys.push_back(key);
      global.insert(key);
      if (!same) {
        global_comments.push_back(absl::StrCat(key, " differs between the fio jobs (job '", differs,
                                               "'); a cell has one: job '", first.name, "''s"));
      }
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
    if (!FindOption("cgroup")->apply(layout, scratch)) {
      global_comments.push_back(absl::StrCat("cgroup layout '", layout,
                                             "' from the jobs' cgroup= and cgroup_weight=: not "
                                             "carried over (names [a-z0-9_-], weights 1 to 1000)"));
      layout.clear();
      group_of.assign(conv.size(), "");
    }
  } else if (with_cgroup > 0) {
    global_comments.emplace_back(
        "cgroup=: not carried over: only some jobs set it, and a cell places all its jobs in "
        "groups or none");
  }

  std::string device_class = options.device_class;
  std::string class_comment;
  if (device_class.empty()) {
    device_class = first.filename.empty() ? "CHANGE-ME" : GuessClass(first.filename);
    class_comment = first.filename.empty()
                        ? "no filename given: the device class agents offer for the target disk"
                        : absl::StrCat("from filename=", first.filename, " (", first.filename_where,
                                       "): confirm, or give --device-class");
    result.notes.push_back(absl::StrCat("target.device_class '", device_class, "' was guessed",
                                        first.filename.empty() ? "" : " from ", first.filename,
                                        "; confirm it or give --device-class"));
  } else if (!first.filename.empty()) {
    class_comment = absl::StrCat("filename=", first.filename, " (", first.filename_where, ")");
  }

  std::string y = absl::StrCat(
      "# Imported from ", options.source,
      " by blkbench import. The fio jobs that run at once are the named\n"
      "# jobs of jobs:, what they all set alike is under job: (fio's [global]); fio options it\n"
      "# could not carry over are comments, each with the reason.\n");
  absl::StrAppend(&y, "name: ", YamlScalar(MatrixName(first.name)), "\n");
  for (const Converted& c : conv) {
    if (c.description.empty()) continue;
    absl::StrAppend(&y, "description: ", YamlScalar(c.description), "\n");
    break;
  }
  absl::StrAppend(&y, "job:\n");
  for (const std::string& key : global_keys) AppendKey(y, "  ", key, first.values.at(key));
  if (!layout.empty())
    absl::StrAppend(&y, "  cgroup: ", YamlScalar(layout), "  # fio cgroup= and cgroup_weight=\n");
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
      if (global.count(key)) continue;
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
  return FinishImport(std::move(y), device_class, class_comment, options, jobs, concurrent,
                      std::move(result));
}

FioImport FinishImport(std::string y, const std::string& device_class,
                       const std::string& class_comment, const FioImportOptions& options,
                       const FioJobs& jobs, size_t concurrent, FioImport result) {
  absl::StrAppend(&y, "target:\n  device_class: ", YamlScalar(device_class));
  if (!class_comment.empty()) absl::StrAppend(&y, "  # ", class_comment);
  absl::StrAppend(&y, "\n");
  if (!options.kernel.empty()) absl::StrAppend(&y, "  kernel: ", YamlScalar(options.kernel), "\n");
  AppendTrailer(jobs, concurrent, y, result);
  // Positions are in the YAML written, not in the fio input: label them so.
  if (absl::StatusOr<Matrix> check = ParseMatrix(y, "the matrix above"); !check.ok()) {
    result.problems = std::string(check.status().message());
  }
  result.yaml = std::move(y);
  return result;
}

void AppendTrailer(const FioJobs& jobs, size_t concurrent, std::string& y, FioImport& result) {
  for (size_t j = concurrent; j < jobs.jobs.size(); ++j) {
    const FioJob& other = jobs.jobs[j];
    absl::StrAppend(&y, "# fio job '", other.name,
                    "' waits for the jobs before it in fio (stonewall); a cell runs its jobs\n"
                    "# at once, so it was not imported (import it on its own). Its options:\n");
    for (const FioOption& o : other.options) {
      absl::StrAppend(&y, "#   ", o.key, o.has_value ? "=" : "", o.value, "\n");
    }
    result.notes.push_back(absl::StrCat("fio job '", other.name,
                                        "' was not imported (it waits for the jobs before it)"));
  }
  for (const FioOption& o : jobs.program_options) {
    absl::StrAppend(&y, "# fio's own option --", o.key, o.has_value ? "=" : "", o.value, " (",
                    o.where, "): not a job option; blkbench stores every result\n");
  }
}

}  // namespace blkbench::workloads
