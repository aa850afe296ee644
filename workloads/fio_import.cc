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

namespace blkbench::workloads {
namespace {

// fio's own options (fio --help), which configure the fio program, not a job.
constexpr std::string_view kProgramOptions[] = {
    "output",
    "output-format",
    "bandwidth-log",
    "minimal",
    "append-terse",
    "terse-version",
    "version",
    "help",
    "cpuclock-test",
    "crctest",
    "cmdhelp",
    "enghelp",
    "showcmd",
    "eta",
    "eta-interval",
    "eta-newline",
    "status-interval",
    "readonly",
    "section",
    "alloc-size",
    "warnings-fatal",
    "max-jobs",
    "server",
    "daemonize",
    "client",
    "remote-config",
    "idle-prof",
    "inflate-log",
    "trigger-file",
    "trigger-timeout",
    "trigger",
    "trigger-remote",
    "aux-path",
    "parse-only",
    "merge-blktrace-only",
    "debug",
    "latency-log",
    "timeout",
    "random_generator",
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

// fio option aliases whose canonical fio name is a matrix key (fio options.c .alias).
const std::map<std::string, std::string, std::less<>>& Aliases() {
  static const auto* kAliases = new std::map<std::string, std::string, std::less<>>{
      {"blocksize", "bs"},
      {"readwrite", "rw"},
      {"ioscheduler", "scheduler"},
      {"iodepth_batch_submit", "iodepth_batch_submit"},
  };
  return *kAliases;
}

// Matrix keys that are blkbench's, not fio's: a fio option of that name is never one
// of them (fio's `cgroup` names a cgroup, the matrix's is a layout).
constexpr std::string_view kBlkbenchOnlyKeys[] = {"scheduler", "nr_requests", "max_sectors_kb",
                                                  "cgroup", "trace"};

// fio options blkbench does not run, with the reason the comment gives (docs/matrix.md's
// "fio option → status" table says the same). Prefix matches end in '*'.
struct Rejected {
  std::string_view key;
  std::string_view why;
};
constexpr std::string_view kLogsWhy =
    "blkbench stores per-interval samples of every run (IOPS, bandwidth, latency histogram "
    "deltas) instead of fio's log files; log_avg_msec sets their interval";
constexpr Rejected kRejected[] = {
    {"verify*", "blkbench measures I/O and does not verify written data"},
    {"do_verify", "blkbench measures I/O and does not verify written data"},
    {"zonemode", "zoned block devices are not supported"},
    {"zone*", "zoned block devices are not supported"},
    {"max_open_zones", "zoned block devices are not supported"},
    {"percentile_list",
     "blkbench keeps the whole latency histogram and computes any percentile from it"},
    {"clat_percentiles", "blkbench keeps the whole latency histogram"},
    {"lat_percentiles", "blkbench keeps the whole latency histogram"},
    {"write_bw_log", kLogsWhy},
    {"write_lat_log", kLogsWhy},
    {"write_iops_log", kLogsWhy},
    {"write_hist_log", kLogsWhy},
    {"log_hist_msec", kLogsWhy},
    {"per_job_logs", kLogsWhy},
    {"log_offset", kLogsWhy},
    {"log_max_value", kLogsWhy},
    {"rate_min", "fio ends a job below this rate; blkbench measures what the device did"},
    {"rate_iops_min", "fio ends a job below this rate; blkbench measures what the device did"},
    {"rate_cycle", "fio ends a job below rate_min; blkbench measures what the device did"},
    {"thinktime_blocks_type", "only fio's default (complete) is supported"},
    {"thinktime_iotime", "not supported; thinktime and thinktime_blocks are"},
    {"fdatasync", "not supported; fsync=N is"},
    {"fsync_on_close", "not supported; end_fsync is"},
    {"random_generator",
     "blkbench has one generator (xoshiro256**, from randseed); the random map covers every "
     "block once per pass as fio's lfsr does"},
    {"allrandrepeat", "every blkbench stream derives from randseed, so runs always repeat"},
};

std::string_view RejectedWhy(std::string_view key) {
  for (const Rejected& r : kRejected) {
    if (r.key.ends_with('*') ? key.starts_with(r.key.substr(0, r.key.size() - 1)) : key == r.key) {
      return r.why;
    }
  }
  return {};
}

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
  void StartSection(std::string name) {
    Flush();
    current_ = FioJob{std::move(name), {}};
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

// `v` as a YAML scalar that reads back as the same string: plain when it can be, else
// double-quoted with escapes. Words a YAML reader takes for null (`null`, `~`, and the
// empty string) are quoted, so `[null]` names a job "null" rather than none.
std::string YamlScalar(std::string_view v) {
  const bool null_word = v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL";
  bool printable = true;
  for (char c : v) printable = printable && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  const bool plain = !null_word && printable &&
                     v.find_first_of(":#{}[],&*!|>'\"%@`\\") == std::string_view::npos &&
                     v.front() != ' ' && v.back() != ' ' && v.front() != '-' && v.front() != '?';
  if (plain) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(u, absl::kZeroPad2));
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

// A device class from fio's filename: for a device, the kernel name without its instance
// number (/dev/nullb0 → null_blk, /dev/nvme0n1 → nvme, /dev/sda → sd, /dev/loop3 → loop);
// anything outside /dev is a regular file, class `file` (fio-rand-read, /tmp/testfile:
// never a class made up from the file's name).
std::string GuessClass(std::string_view filename) {
  if (!absl::StartsWith(ToAbsl(filename), "/dev/")) return "file";
  std::string_view base = filename;
  if (size_t slash = base.rfind('/'); slash != std::string_view::npos)
    base = base.substr(slash + 1);
  if (absl::StartsWith(ToAbsl(base), "nullb")) return "null_blk";
  if (absl::StartsWith(ToAbsl(base), "nvme")) return "nvme";
  if (absl::StartsWith(ToAbsl(base), "loop")) return "loop";
  std::string letters;
  for (char c : base) {
    if (!absl::ascii_isalpha(static_cast<unsigned char>(c))) break;
    letters.push_back(c);
  }
  // sda → sd, vdb → vd, hdc → hd: the driver's prefix; anything else as written.
  if (letters.size() == 3 && (absl::StartsWith(letters, "sd") || absl::StartsWith(letters, "vd") ||
                              absl::StartsWith(letters, "hd"))) {
    letters.resize(2);
  }
  return letters.empty() || !LabelProblem(letters).empty() ? "CHANGE-ME" : letters;
}

// A matrix name from a fio job name: printable, at most 128 characters.
std::string MatrixName(std::string_view job) {
  std::string name;
  for (char c : job) {
    if (name.size() == 128) break;
    name.push_back(absl::ascii_isgraph(static_cast<unsigned char>(c)) ? c : '-');
  }
  return name.empty() || !LabelProblem(name).empty() ? "imported" : name;
}

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
      b.StartSection(std::string(line.substr(1, line.size() - 2)));
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
        b.StartSection("global");
        for (FioOption& l : loose) b.Add(std::move(l));
        loose.clear();
        named = true;
      }
      b.StartSection(o.value);
      continue;
    }
    if (named) {
      b.Add(std::move(o));
    } else {
      loose.push_back(std::move(o));
    }
  }
  if (!named) {
    b.StartSection("job");
    for (FioOption& l : loose) b.Add(std::move(l));
  }
  return b.Finish();
}

Converted ConvertJob(const FioJob& job, bool several_devices) {
  // Last value wins, as in fio; keys kept in first-written order.
  Converted c;
  c.name = job.name;
  std::vector<std::string>& key_order = c.key_order;
  std::map<std::string, Carried>& values = c.values;
  std::vector<std::string>& comments = c.comments;
  std::string &name = c.name, &description = c.description, &filename = c.filename,
              &filename_where = c.filename_where;
  std::string &cgroup_name = c.cgroup_name, &cgroup_weight = c.cgroup_weight;
  auto set = [&](const std::string& key, const std::string& value, const std::string& where,
                 const std::string& fio_key) {
    if (!values.count(key)) key_order.push_back(key);
    values[key] = {value, where, fio_key};
  };
  auto skip = [&](const FioOption& o, std::string_view why) {
    comments.push_back(absl::StrCat(o.key, o.has_value ? "=" : "", o.value, "  (", o.where,
                                    "): not carried over: ", ToAbsl(why)));
  };
  for (const FioOption& o : job.options) {
    std::string key = o.key;
    if (auto a = Aliases().find(key); a != Aliases().end()) key = a->second;
    if (key == "name") {
      name = o.value;
    } else if (key == "description") {
      description = o.value;
    } else if (key == "filename") {
      if (o.value.find(':') != std::string::npos) {
        if (several_devices) {
          c.files = static_cast<uint32_t>(std::count(o.value.begin(), o.value.end(), ':') + 1);
        } else {
          skip(o,
               "several files per job; a blkbench run uses one device (the first is the target)");
        }
      }
      filename = o.value.substr(0, o.value.find(':'));
      filename_where = o.where;
    } else if (key == "directory" || key == "filename_format" || key == "opendir" ||
               key == "nrfiles") {
      skip(o, "blkbench runs on a whole block device (target.device_class), not files");
    } else if (key == "group_reporting") {
      comments.push_back(absl::StrCat(
          "group_reporting  (", o.where,
          "): blkbench reports each run over all its jobs together, as fio does with it"));
    } else if (key == "cgroup") {
      cgroup_name = o.value;
    } else if (key == "cgroup_weight") {
      cgroup_weight = o.value;
    } else if (key == "stonewall" || key == "wait_for" || key == "wait_for_previous" ||
               key == "new_group") {
      skip(o, "a cell's jobs (jobs:) run at once; a job after a stonewall was not imported");
    } else if (std::string_view why = RejectedWhy(key); !why.empty()) {
      skip(o, why);
    } else if (const OptionDef* def = FindOption(key);
               def != nullptr && def->scope == Scope::kJob &&
               (!In(kBlkbenchOnlyKeys, key) || o.key == "ioscheduler")) {
      // Bare booleans mean 1 in fio (parse.c: FIO_OPT_BOOL/STR_SET without a value).
      const std::string value = o.has_value ? o.value : "1";
      v1::CellSpec scratch = DefaultCell();
      if (!def->apply(value, scratch)) {
        skip(o, absl::StrCat("blkbench's '", ToAbsl(key), "' expects ", ToAbsl(def->expected)));
      } else {
        // fio: bs and bsrange set the same sizes; the last one written wins.
        for (auto it = key_order.begin(); it != key_order.end(); ++it) {
          const OptionDef* other = FindOption(*it);
          if (*it != key && other != nullptr && other->canonical == def->canonical) {
            comments.push_back(absl::StrCat(values[*it].fio_key, "=", values[*it].value, "  (",
                                            values[*it].where, "): not carried over: ", o.key, " (",
                                            o.where, ") overrides it, as in fio"));
            values.erase(*it);
            key_order.erase(it);
            break;
          }
        }
        set(key, value, o.where, o.key);
      }
    } else {
      skip(o, "not a blkbench option (docs/matrix.md lists the fio options it runs)");
    }
  }
  return c;
}

absl::StatusOr<FioImport> ImportFio(const FioJobs& jobs, const FioImportOptions& options) {
  if (jobs.jobs.empty()) {
    return absl::InvalidArgumentError(
        "no fio job to import: a job file needs a section other than [global], a command "
        "line options beside --name");
  }
  const FioJob& job = jobs.jobs.front();
  // fio starts every job at once unless one waits (stonewall, wait_for_previous): the
  // first jobs that do not wait are one cell's named jobs.
  const size_t concurrent = ConcurrentJobs(jobs);
  if (concurrent > 1) return ImportConcurrentFio(jobs, concurrent, options);
  FioImport result;
  // A simulated target without a per-LUN budget can be several devices (engine.devices).
  const bool several_devices =
      IsSimulated(options.device_class) &&
      SeveralDevicesProblem(std::string_view(options.device_class).substr(kSimPrefix.size()), "", 2)
          .empty();
  Converted converted = ConvertJob(job, several_devices);
  std::vector<std::string>& key_order = converted.key_order;
  std::map<std::string, Carried>& values = converted.values;
  std::vector<std::string>& comments = converted.comments;
  std::string &name = converted.name, &description = converted.description,
              &filename = converted.filename, &filename_where = converted.filename_where;
  const std::string &cgroup_name = converted.cgroup_name, &cgroup_weight = converted.cgroup_weight;
  auto set = [&](const std::string& key, const std::string& value, const std::string& where,
                 const std::string& fio_key) {
    if (!values.count(key)) key_order.push_back(key);
    values[key] = {value, where, fio_key};
  };
  if (!cgroup_name.empty() || !cgroup_weight.empty()) {
    // fio puts every job of the section in one cgroup, weighted if asked.
    std::string layout = cgroup_weight.empty() ? "one" : absl::StrCat("one:", cgroup_weight);
    v1::CellSpec scratch = DefaultCell();
    if (FindOption("cgroup")->apply(layout, scratch)) {
      set("cgroup", layout, "", "cgroup");
      comments.push_back(absl::StrCat(
          "cgroup=", cgroup_name, cgroup_weight.empty() ? "" : " cgroup_weight=", cgroup_weight,
          ": as the layout '", layout, "' (the group is named g0, not '", cgroup_name, "')"));
    } else {
      comments.push_back(absl::StrCat("cgroup_weight=", cgroup_weight,
                                      ": not carried over: weights are 1 to 1000"));
    }
  }

  std::string device_class = options.device_class;
  std::string class_comment;
  if (device_class.empty()) {
    device_class = filename.empty() ? "CHANGE-ME" : GuessClass(filename);
    class_comment = filename.empty()
                        ? "no filename given: the device class agents offer for the target disk"
                        : absl::StrCat("from filename=", filename, " (", filename_where,
                                       "): confirm, or give --device-class");
    result.notes.push_back(absl::StrCat("target.device_class '", device_class, "' was guessed",
                                        filename.empty() ? "" : " from ", filename,
                                        "; confirm it or give --device-class"));
  } else if (!filename.empty()) {
    class_comment = absl::StrCat("filename=", filename, " (", filename_where, ")");
  }

  std::string y = absl::StrCat("# Imported from ", options.source,
                               " by blkbench import. fio options it could not carry over are\n"
                               "# comments under job:, each with the reason.\n");
  absl::StrAppend(&y, "name: ", YamlScalar(MatrixName(name)), "\n");
  if (!description.empty()) absl::StrAppend(&y, "description: ", YamlScalar(description), "\n");
  absl::StrAppend(&y, "job:\n");
  for (const std::string& key : key_order) {
    const Carried& c = values[key];
    absl::StrAppend(&y, "  ", key, ": ", YamlScalar(c.value));
    // A key spelled differently in fio says where it came from (ioscheduler → scheduler).
    if (c.fio_key != key && !c.where.empty())
      absl::StrAppend(&y, "  # fio ", c.fio_key, " (", c.where, ")");
    absl::StrAppend(&y, "\n");
  }
  for (const std::string& c : comments) absl::StrAppend(&y, "  # ", c, "\n");
  if (key_order.empty()) absl::StrAppend(&y, "  {}\n");
  if (converted.files > 1) {
    absl::StrAppend(&y, "device:\n  engine: {devices: ", converted.files, "}  # filename with ",
                    converted.files, " files (", filename_where,
                    "); file_service_type picks among them\n");
  }
  return FinishImport(std::move(y), device_class, class_comment, options, jobs, concurrent,
                      std::move(result));
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
