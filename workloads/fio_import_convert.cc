// One fio job's options as matrix keys, what blkbench cannot carry and whether that
// changes the workload, and the target's device class from fio's filename (used by
// fio_import.cc and fio_import_jobs.cc; fio_import_jobs.h).
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "blkbench/v1/workload.pb.h"
#include "common/iosched_tunables.h"
#include "workloads/absl_compat.h"
#include "workloads/fio_import.h"
#include "workloads/fio_import_jobs.h"
#include "workloads/job_options.h"
#include "workloads/labels.h"

namespace blkbench::workloads {
namespace {

// fio's option aliases (`fio --cmdhelp=OPTION` says "alias:"; options.c .alias), as the
// canonical name, so the matrix key is fio's own name and the reason for a drop is the
// option's. The matrix table takes iodepth_batch, iodepth_batch_complete and
// blocksize_range as written. ioscheduler is fio's name for the matrix's scheduler.
const std::map<std::string, std::string, std::less<>>& Aliases() {
  static const auto* kAliases = new std::map<std::string, std::string, std::less<>>{
      {"blocksize", "bs"},
      {"readwrite", "rw"},
      {"io_limit", "io_size"},
      {"fileoffset", "offset"},
      {"timeout", "runtime"},
      {"ioscheduler", "scheduler"},
      {"blockalign", "ba"},
      {"blocksize_unaligned", "bs_unaligned"},
      {"fill_fs", "fill_device"},
      {"nr_files", "nrfiles"},
      {"iomem", "mem"},
      {"ratemin", "rate_min"},
      {"ratecycle", "rate_cycle"},
      {"disable_bw", "disable_bw_measurement"},
      {"ss", "steadystate"},
      {"ss_dur", "steadystate_duration"},
      {"ss_ramp", "steadystate_ramp_time"},
  };
  return *kAliases;
}

// fio options that change only what fio prints or logs, never the I/O: not carried over,
// and reported, but the workload is the same without them. Any other option blkbench
// does not carry changes the workload (an unknown option is not assumed harmless).
constexpr std::string_view kReportOnly[] = {
    "description",
    "new_group",
    "stats",
    "unified_rw_reporting",
    "significant_figures",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "gtod_reduce",
    "gtod_cpu",
    "clocksource",
    "kb_base",
    "unit_base",
    "bwavgtime",
    "iopsavgtime",
    "log_compression",
    "log_store_compressed",
    "log_unix_epoch",
    "log_alternate_epoch",
    "log_entries",
    "log_prio",
    "log_hist_coarseness",
    "slat_percentiles",
};

// Matrix keys that are blkbench's, not fio's: a fio option of that name is never one
// of them (fio's `cgroup` names a cgroup, the matrix's is a layout). The schedulers'
// tunables (common/iosched_tunables.h) are blkbench's too.
constexpr std::string_view kBlkbenchOnlyKeys[] = {"scheduler", "nr_requests", "max_sectors_kb",
                                                  "cgroup", "trace"};

// fio options blkbench does not run, with the reason the comment gives (docs/matrix.md's
// "fio option → status" table says the same). Prefix matches end in '*'.
struct Rejected {
  std::string_view key;
  std::string_view why;
  bool changes_workload = true;  // false: fio's reports, logs or run control only
};
constexpr std::string_view kLogsWhy =
    "blkbench writes fio's log files per job from its interval samples (docs/fio-logs.md); "
    "it has no per-clone logs or window maxima";
constexpr Rejected kRejected[] = {
    {"verify*", "blkbench measures I/O and does not verify written data"},
    {"do_verify", "blkbench measures I/O and does not verify written data"},
    {"zonemode", "zoned block devices are not supported"},
    {"zone*", "zoned block devices are not supported"},
    {"max_open_zones", "zoned block devices are not supported"},
    {"percentile_list",
     "blkbench keeps the whole latency histogram and computes any percentile from it", false},
    {"clat_percentiles", "blkbench keeps the whole latency histogram", false},
    {"lat_percentiles", "blkbench keeps the whole latency histogram", false},
    {"per_job_logs", kLogsWhy, false},
    {"log_max_value", kLogsWhy, false},
    {"rate_min", "fio ends a job below this rate; blkbench measures what the device did", false},
    {"rate_iops_min", "fio ends a job below this rate; blkbench measures what the device did",
     false},
    {"rate_cycle", "fio ends a job below rate_min; blkbench measures what the device did", false},
    {"thinktime_blocks_type", "only fio's default (complete) is supported"},
    {"thinktime_iotime", "not supported; thinktime and thinktime_blocks are"},
    {"fdatasync", "not supported; fsync=N is"},
    {"fsync_on_close", "not supported; end_fsync is"},
    {"random_generator",
     "blkbench has one generator (xoshiro256**, from randseed); the random map covers every "
     "block once per pass as fio's lfsr does",
     false},
    {"allrandrepeat", "every blkbench stream derives from randseed, so runs always repeat", false},
};

// fio options about creating or removing its files before or after the I/O, which a run
// on blkbench's target does not do; the I/O is the same without them.
constexpr std::string_view kHousekeeping[] = {"unlink", "unlink_each_loop", "allow_file_create",
                                              "allow_mounted_write"};

const Rejected* FindRejected(std::string_view key) {
  for (const Rejected& r : kRejected) {
    if (r.key.ends_with('*') ? key.starts_with(r.key.substr(0, r.key.size() - 1)) : key == r.key) {
      return &r;
    }
  }
  return nullptr;
}

template <size_t N>
bool In(const std::string_view (&list)[N], std::string_view s) {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

// Block devices whose kernel name says the driver (the kernel's disk_name formats):
// /dev/<prefix><instance>, the instance being letters (sd, vd, xvd, hd) or a number
// (with nvme's n<namespace> and dm's '-'), a partition suffix allowed.
struct BlockDevice {
  std::string_view prefix, device_class;
  bool letters;  // instance "a".."zz" (sd_format_disk_name) rather than a number
};
constexpr BlockDevice kBlockDevices[] = {
    {"nullb", "null_blk", false}, {"nvme", "nvme", false},  {"sd", "sd", true},
    {"vd", "vd", true},           {"xvd", "xvd", true},     {"hd", "hd", true},
    {"loop", "loop", false},      {"mmcblk", "mmc", false}, {"pmem", "pmem", false},
    {"ram", "brd", false},        {"zram", "zram", false},  {"ublkb", "ublk", false},
    {"nbd", "nbd", false},        {"rbd", "rbd", false},    {"md", "md", false},
    {"dm-", "dm", false},
};

bool Digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// Whether `rest` (the name after a prefix) is an instance, with an optional partition.
bool IsInstance(std::string_view rest, const BlockDevice& d) {
  if (d.letters) {
    size_t n = 0;
    while (n < rest.size() && absl::ascii_islower(static_cast<unsigned char>(rest[n]))) ++n;
    return n > 0 && n <= 3 && (n == rest.size() || Digits(rest.substr(n)));
  }
  if (d.prefix == "nvme") {  // nvme0n1, nvme0n1p2 (nvme0 is the controller, not a disk)
    const size_t n = rest.find('n');
    if (n == std::string_view::npos || !Digits(rest.substr(0, n))) return false;
    std::string_view ns = rest.substr(n + 1);
    if (const size_t p = ns.find('p'); p != std::string_view::npos) {
      if (!Digits(ns.substr(p + 1))) return false;
      ns = ns.substr(0, p);
    }
    return Digits(ns);
  }
  // loop0, mmcblk0p1, md127, dm-3
  const size_t p = rest.find('p');
  return p == std::string_view::npos ? Digits(rest)
                                     : Digits(rest.substr(0, p)) && Digits(rest.substr(p + 1));
}

// fio's filename=a:b:c; a colon inside a name is escaped with '\' (fio's HOWTO, filename:
// /dev/bsg/0\:0\:0\:0 is one file).
std::vector<std::string> SplitFilenames(std::string_view value) {
  std::vector<std::string> files(1);
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size() && value[i + 1] == ':') {
      files.back().push_back(':');
      ++i;
    } else if (value[i] == ':') {
      files.emplace_back();
    } else {
      files.back().push_back(value[i]);
    }
  }
  return files;
}

}  // namespace

std::string CanonicalKey(std::string_view key) {
  std::string k(key);
  if (auto a = Aliases().find(k); a != Aliases().end()) k = a->second;
  const OptionDef* def = FindOption(k);
  return def == nullptr ? k : std::string(def->canonical);
}

bool FioImport::ChangesWorkload() const {
  return std::any_of(dropped.begin(), dropped.end(),
                     [](const FioDrop& d) { return d.changes_workload; });
}

void AddDrops(const std::vector<FioDrop>& drops, FioImport& result) {
  for (const FioDrop& d : drops) {
    const bool seen =
        std::any_of(result.dropped.begin(), result.dropped.end(),
                    [&](const FioDrop& o) { return o.where == d.where && o.what == d.what; });
    if (!seen) result.dropped.push_back(d);
  }
}

ClassGuess GuessClass(std::string_view filename) {
  if (!absl::StartsWith(ToAbsl(filename), "/dev/")) return {"file", false};
  std::string_view base = filename.substr(5);
  if (absl::StartsWith(ToAbsl(base), "mapper/") && base.size() > 7 &&
      base.find('/', 7) == std::string_view::npos) {
    return {"dm", true};
  }
  if (base.find('/') != std::string_view::npos) return {};  // /dev/disk/by-id/...: no name
  for (const BlockDevice& d : kBlockDevices) {
    if (absl::StartsWith(ToAbsl(base), ToAbsl(d.prefix)) &&
        IsInstance(base.substr(d.prefix.size()), d)) {
      return {std::string(d.device_class), true};
    }
  }
  return {};
}

TargetClass ChooseClass(const Converted& first, const FioImportOptions& options,
                        FioImport& result) {
  const std::string& filename = first.filename;
  const std::string place = absl::StrCat("filename=", filename, " (", first.filename_where, ")");
  if (!options.device_class.empty()) {
    return {options.device_class, filename.empty() ? "" : place};
  }
  if (filename.empty()) {
    result.notes.emplace_back(
        "target.device_class: no filename= to take it from; give --device-class (the class "
        "agents offer the target disk under)");
    return {"CHANGE-ME", "no filename given: the device class agents offer for the target disk"};
  }
  const ClassGuess guess = GuessClass(filename);
  if (guess.device_class.empty()) {
    result.notes.push_back(absl::StrCat("target.device_class: ", place,
                                        " is not a block device name blkbench knows (nvme, sd, "
                                        "null_blk, vd, loop, ...); give --device-class"));
    return {"CHANGE-ME", absl::StrCat(place, ": not a block device name; the class agents offer")};
  }
  if (!guess.guessed) {
    // The agent's own file of class `file` is the target; the path is fio's.
    return {guess.device_class, absl::StrCat(place, ": a regular file")};
  }
  result.notes.push_back(absl::StrCat("target.device_class '", guess.device_class,
                                      "' was guessed from ", filename,
                                      "; confirm it or give --device-class"));
  return {guess.device_class,
          absl::StrCat("guessed from ", place, ": confirm, or give --device-class")};
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

Converted ConvertJob(const FioJob& job, bool several_devices) {
  // Last value wins, as in fio; keys kept in first-written order.
  Converted c;
  c.name = job.name;
  auto set = [&](const std::string& key, const std::string& value, const std::string& where,
                 const std::string& fio_key) {
    if (!c.values.count(key)) c.key_order.push_back(key);
    c.values[key] = {value, where, fio_key};
  };
  auto skip = [&](const FioOption& o, std::string_view why, bool changes_workload) {
    const std::string what = absl::StrCat(o.key, o.has_value ? "=" : "", o.value);
    c.comments.push_back(absl::StrCat(what, "  (", o.where, "): not carried over: ", ToAbsl(why),
                                      changes_workload ? " [changes the workload]" : ""));
    c.drops.push_back({o.where, what, std::string(why), changes_workload});
  };
  for (const FioOption& o : job.options) {
    std::string key = o.key;
    if (auto a = Aliases().find(key); a != Aliases().end()) key = a->second;
    if (key == "name") {
      c.name = o.value;
    } else if (key == "description") {
      c.description = o.value;
    } else if (key == "filename") {
      const std::vector<std::string> files = SplitFilenames(o.value);
      if (files.size() > 1) {
        if (several_devices) {
          c.files = static_cast<uint32_t>(files.size());
        } else {
          skip(o, "several files per job; a blkbench run uses one device (the first is the target)",
               true);
        }
      }
      c.filename = files.empty() ? "" : files.front();
      c.filename_where = o.where;
    } else if (key == "buffered") {
      // fio: "buffered: inverse of direct" (options.c str_buffered).
      v1::CellSpec scratch = DefaultCell();
      if (FindOption("direct")->Apply(o.has_value ? o.value : "1", scratch)) {
        set("direct", scratch.job().direct() ? "0" : "1", o.where, o.key);
      } else {
        skip(o, "fio's buffered is a boolean (the inverse of direct)", true);
      }
    } else if (key == "directory" || key == "filename_format" || key == "opendir") {
      skip(o, "where fio puts its files; the target is the device or file of target.device_class",
           false);
    } else if (key == "nrfiles") {
      skip(o, "blkbench runs on one device or file per job", o.value != "1");
    } else if (key == "group_reporting") {
      c.comments.push_back(absl::StrCat(
          "group_reporting  (", o.where,
          "): blkbench reports each run over all its jobs together, as fio does with it"));
    } else if (key == "cgroup") {
      c.cgroup_name = o.value;
    } else if (key == "cgroup_weight") {
      c.cgroup_weight = o.value;
      c.cgroup_where = o.where;
    } else if (key == "stonewall" || key == "wait_for" || key == "wait_for_previous") {
      // The phases' boundaries: PlanPhases decides what becomes of the jobs after them.
      c.comments.push_back(absl::StrCat(o.key, o.has_value ? "=" : "", o.value, "  (", o.where,
                                        "): fio's phases: see the end of the matrix"));
    } else if (const Rejected* r = FindRejected(key); r != nullptr) {
      skip(o, r->why, r->changes_workload);
    } else if (const OptionDef* def = FindOption(key);
               def != nullptr && def->scope == Scope::kJob &&
               ((!In(kBlkbenchOnlyKeys, key) && FindIoschedTunable(key) == nullptr) ||
                o.key == "ioscheduler")) {
      // Bare booleans mean 1 in fio (parse.c: FIO_OPT_BOOL/STR_SET without a value).
      const std::string value = o.has_value ? o.value : "1";
      v1::CellSpec scratch = DefaultCell();
      if (!def->Apply(value, scratch)) {
        skip(o, absl::StrCat("blkbench's '", ToAbsl(key), "' expects ", ToAbsl(def->expected)),
             true);
      } else {
        // fio: bs and bsrange set the same sizes; the last one written wins.
        for (auto it = c.key_order.begin(); it != c.key_order.end(); ++it) {
          const OptionDef* other = FindOption(*it);
          if (*it != key && other != nullptr && other->canonical == def->canonical) {
            const Carried& was = c.values[*it];
            c.comments.push_back(absl::StrCat(was.fio_key, "=", was.value, "  (", was.where,
                                              "): not carried over: ", o.key, " (", o.where,
                                              ") overrides it, as in fio"));
            c.values.erase(*it);
            c.key_order.erase(it);
            break;
          }
        }
        set(key, value, o.where, o.key);
      }
    } else if (In(kReportOnly, key)) {
      skip(o, "it changes fio's reports only; blkbench stores every result", false);
    } else if (In(kHousekeeping, key)) {
      skip(o, "fio's housekeeping of its files, around the I/O; the I/O is the same", false);
    } else {
      skip(o, "not a blkbench option (docs/matrix.md lists the fio options it runs)", true);
    }
  }
  return c;
}

}  // namespace blkbench::workloads
