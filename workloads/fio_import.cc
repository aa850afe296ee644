// fio job files and command lines → matrix YAML (fio_import.h). fio's rules followed
// here: init.c (command-line jobs, global options before the first --name), parse.c
// (bare boolean options mean 1) and the HOWTO's job-file format.
#include "workloads/fio_import.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "blkbench/v1/workload.pb.h"
#include "common/resolved_job.h"
#include "common/sim_vocabulary.h"
#include "workloads/absl_compat.h"
#include "workloads/fio_import_jobs.h"
#include "workloads/job_options.h"
#include "workloads/labels.h"
#include "workloads/matrix.h"
#include "workloads/yaml_scalar.h"

namespace blkbench::workloads {
namespace {

// fio's own options (fio --help), which configure the fio program, not a job.
constexpr std::string_view kProgramOptions[] = {
    "output",         "output-format",   "bandwidth-log", "minimal",       "append-terse",
    "terse-version",  "version",         "help",          "cpuclock-test", "crctest",
    "cmdhelp",        "enghelp",         "showcmd",       "eta",           "eta-interval",
    "eta-newline",    "status-interval", "readonly",      "section",       "alloc-size",
    "warnings-fatal", "max-jobs",        "server",        "daemonize",     "client",
    "remote-config",  "idle-prof",       "inflate-log",   "trigger-file",  "trigger-timeout",
    "trigger",        "trigger-remote",  "aux-path",      "parse-only",    "merge-blktrace-only",
    "debug",          "latency-log",
};

// Job options that take no value (fio's FIO_OPT_STR_SET and booleans written bare):
// `--time_based` alone, never `--time_based VALUE`.
constexpr std::string_view kFlagOptions[] = {
    "time_based",
    "group_reporting",
    "thread",
    "norandommap",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "exitall",
    "exitall_on_error",
    "hipri",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "direct",
    "buffered",
    "randrepeat",
    "end_fsync",
    "fsync_on_close",
    "create_only",
    "unlink",
    "unlink_each_loop",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "clat_percentiles",
    "lat_percentiles",
    "verify_only",
    "do_verify",
    "allrandrepeat",
    "per_job_logs",
    "serialize_overlap",
    "nonvectored",
    "uncached",
    "nowait",
};

template <size_t N>
bool In(const std::string_view (&list)[N], std::string_view s) {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

std::string_view ToStd(absl::string_view s) { return {s.data(), s.size()}; }

// fio accepts "key = value" with spaces around '=' in job files.
FioOption OptionFromText(absl::string_view text, std::string where) {
  FioOption o;
  o.where = std::move(where);
  const size_t eq = text.find('=');
  if (eq == absl::string_view::npos) {
    o.key = std::string(absl::StripAsciiWhitespace(text));
  } else {
    o.key = std::string(absl::StripAsciiWhitespace(text.substr(0, eq)));
    o.value = std::string(absl::StripAsciiWhitespace(text.substr(eq + 1)));
    o.has_value = true;
  }
  return o;
}

// Builds jobs from a stream of (section start | option) as both inputs produce them:
// options under "global" accumulate for the jobs that follow.
class JobBuilder {
 public:
  void StartSection(std::string name, std::string where) {
    Flush();
    current_ = FioJob{std::move(name), {}, std::move(where)};
    in_global_ = current_->name == "global";
  }
  void Add(FioOption o) {
    if (in_global_) {
      global_.push_back(std::move(o));
    } else {
      current_->options.push_back(std::move(o));
    }
  }
  bool HasSection() const { return current_.has_value(); }
  FioJobs Finish() {
    Flush();
    return std::move(out_);
  }
  FioJobs& out() { return out_; }

 private:
  void Flush() {
    if (!current_.has_value() || in_global_) return;
    FioJob job;
    job.name = current_->name;
    job.where = current_->where;
    job.options = global_;
    for (FioOption& o : current_->options) job.options.push_back(std::move(o));
    out_.jobs.push_back(std::move(job));
    current_.reset();
  }
  std::optional<FioJob> current_;
  bool in_global_ = false;
  std::vector<FioOption> global_;
  FioJobs out_;
};

}  // namespace

absl::StatusOr<FioJobs> ParseFioJobFile(std::string_view text, std::string_view file_name) {
  JobBuilder b;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(ToAbsl(text), '\n')) {
    ++line_no;
    std::string_view line = ToStd(raw);
    // fio strips comments starting with '#' or ';' at the start of a line or after
    // whitespace (a ';' inside a value such as a path is kept).
    for (size_t i = 0; i < line.size(); ++i) {
      if ((line[i] == '#' || line[i] == ';') &&
          (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
        line = line.substr(0, i);
        break;
      }
    }
    line = ToStd(absl::StripAsciiWhitespace(ToAbsl(line)));
    if (line.empty()) continue;
    const std::string where = absl::StrCat(ToAbsl(file_name), ":", line_no);
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": expected a section header like [job1], got '", ToAbsl(line), "'"));
      }
      b.StartSection(std::string(line.substr(1, line.size() - 2)), where);
      continue;
    }
    if (!b.HasSection()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": option '", ToAbsl(line), "' before the first section ([global] or [job])"));
    }
    FioOption o = OptionFromText(ToAbsl(line), where);
    if (o.key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected key=value, got '", ToAbsl(line), "'"));
    }
    b.Add(std::move(o));
  }
  return b.Finish();
}

absl::StatusOr<FioJobs> ParseFioCommandLine(const std::vector<std::string>& argv) {
  JobBuilder b;
  std::vector<FioOption> loose;  // job options before any --name
  size_t i = 0;
  if (!argv.empty() && (argv[0] == "fio" || absl::EndsWith(argv[0], "/fio"))) i = 1;
  bool named = false;
  for (; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    const std::string where = absl::StrCat("argument ", i + 1);
    if (arg.size() < 2 || arg[0] != '-') {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": '", arg,
                       "' is not an option (a job file? import it with 'blkbench import FILE')"));
    }
    FioOption o = OptionFromText(
        absl::StripPrefix(absl::StripPrefix(absl::string_view(arg), "-"), "-"), where);
    if (!o.has_value && !In(kFlagOptions, o.key) && !In(kProgramOptions, o.key) &&
        i + 1 < argv.size() && argv[i + 1].rfind('-', 0) != 0) {
      o.value = argv[++i];  // --opt value
      o.has_value = true;
    }
    if (In(kProgramOptions, o.key)) {
      b.out().program_options.push_back(std::move(o));
      continue;
    }
    if (o.key == "name") {
      if (!named) {
        b.StartSection("global", where);
        for (FioOption& l : loose) b.Add(std::move(l));
        loose.clear();
        named = true;
      }
      b.StartSection(o.value, where);
      continue;
    }
    if (named) {
      b.Add(std::move(o));
    } else {
      loose.push_back(std::move(o));
    }
  }
  if (!named) {
    b.StartSection("job", "the command line");
    for (FioOption& l : loose) b.Add(std::move(l));
  }
  return b.Finish();
}

absl::StatusOr<FioImport> ImportFio(const FioJobs& jobs, const FioImportOptions& options) {
  if (jobs.jobs.empty()) {
    return absl::InvalidArgumentError(
        "no fio job to import: a job file needs a section other than [global], a command "
        "line options beside --name");
  }
  // fio starts every job at once unless one waits (stonewall, wait_for_previous): the
  // first jobs that do not wait are one cell's named jobs; later phases an axis or lost.
  const PhasePlan plan = PlanPhases(jobs);
  const FioJobs first_phase = FirstPhase(jobs, plan);
  if (plan.first_phase_jobs > 1) return ImportConcurrentFio(first_phase, jobs, plan, options);
  FioImport result;
  // A simulated target without a per-LUN budget can be several devices (engine.devices).
  const bool several_devices =
      IsSimulated(options.device_class) &&
      SeveralDevicesProblem(std::string_view(options.device_class).substr(kSimPrefix.size()), "", 2)
          .empty();
  Converted converted = ConvertJob(first_phase.jobs.front(), several_devices);
  std::vector<std::string>& comments = converted.comments;
  auto set = [&](const std::string& key, const std::string& value, const std::string& fio_key) {
    if (!converted.values.count(key)) converted.key_order.push_back(key);
    converted.values[key] = {value, "", fio_key};
  };
  const std::string &cgroup_name = converted.cgroup_name, &cgroup_weight = converted.cgroup_weight;
  if (!cgroup_name.empty() || !cgroup_weight.empty()) {
    // fio puts every job of the section in one cgroup, weighted if asked.
    std::string layout = cgroup_weight.empty() ? "one" : absl::StrCat("one:", cgroup_weight);
    v1::CellSpec scratch = DefaultCell();
    if (FindOption("cgroup")->Apply(layout, scratch)) {
      set("cgroup", layout, "cgroup");
      comments.push_back(absl::StrCat(
          "cgroup=", cgroup_name, cgroup_weight.empty() ? "" : " cgroup_weight=", cgroup_weight,
          ": as the layout '", layout, "' (the group is named g0, not '", cgroup_name, "')"));
    } else {
      comments.push_back(absl::StrCat("cgroup_weight=", cgroup_weight,
                                      ": not carried over: weights are 1 to 1000"));
      converted.drops.push_back({converted.cgroup_where,
                                 absl::StrCat("cgroup_weight=", cgroup_weight),
                                 "weights are 1 to 1000", true});
    }
  }
  AddDrops(converted.drops, result);
  const TargetClass target = ChooseClass(converted, options, result);

  std::string y = absl::StrCat("# Imported from ", options.source,
                               " by blkbench import. fio options it could not carry over are\n"
                               "# comments under job:, each with the reason.\n");
  const std::string name =
      plan.axis_key.empty() ? converted.name : PhasedName(options.source, converted.name);
  absl::StrAppend(&y, "name: ", YamlScalar(MatrixName(name)), "\n");
  if (!converted.description.empty()) {
    absl::StrAppend(&y, "description: ", YamlScalar(converted.description), "\n");
  }
  absl::StrAppend(&y, "job:\n");
  for (const std::string& key : converted.key_order) {
    AppendKey(y, "  ", key, converted.values[key]);
  }
  for (const std::string& c : comments) absl::StrAppend(&y, "  # ", c, "\n");
  if (converted.key_order.empty()) absl::StrAppend(&y, "  {}\n");
  if (converted.files > 1) {
    absl::StrAppend(&y, "device:\n  engine: {devices: ", converted.files, "}  # filename with ",
                    converted.files, " files (", converted.filename_where,
                    "); file_service_type picks among them\n");
  }
  return FinishImport(std::move(y), target, options, jobs, plan, std::move(result));
}

bool LooksLikeFioJobFile(std::string_view text, int* header_line) {
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(ToAbsl(text), '\n')) {
    ++line_no;
    std::string_view line = ToStd(absl::StripAsciiWhitespace(raw));
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (header_line != nullptr) *header_line = line_no;
    // A YAML flow list ("[1, 2]") is not a section name.
    return line.size() >= 3 && line.front() == '[' && line.back() == ']' &&
           line.find(',') == std::string_view::npos;
  }
  return false;
}

}  // namespace blkbench::workloads
