// The key table: each matrix key, where it may appear, what it expects, and the
// parser that writes it into a CellSpec. fio names and ranges follow fio options.c.
#include "workloads/job_options.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "blkbench/v1/workload.pb.h"
#include "common/cell_jobs.h"
#include "common/iosched_tunables.h"
#include "common/job_bounds.h"
#include "common/resolved_job.h"
#include "common/sim_vocabulary.h"
#include "common/units.h"
#include "workloads/cgroup_layout.h"
#include "workloads/labels.h"

namespace blkbench::workloads {
namespace {

using v1::CellSpec;
using v1::JobSpec;

// --- Field parsers, templated on the protobuf setter so each table row is one line.

template <auto Setter, uint64_t kLo, uint64_t kHi>
bool JobUint(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseUint(s);
  if (!v.ok() || *v < kLo || *v > kHi) return false;
  (cell.mutable_job()->*Setter)(*v);
  return true;
}

// A size that must be a multiple of kMultiple and at least kMin.
template <auto Setter, uint64_t kMultiple, uint64_t kMin>
bool JobSize(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseSize(s);
  if (!v.ok() || *v % kMultiple != 0 || *v < kMin) return false;
  (cell.mutable_job()->*Setter)(*v);
  return true;
}

template <auto Setter>
bool JobDuration(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseDurationNs(s);
  if (!v.ok()) return false;
  (cell.mutable_job()->*Setter)(*v);
  return true;
}

template <auto Setter>
bool JobBool(std::string_view s, CellSpec& cell) {
  absl::StatusOr<bool> v = ParseBool(s);
  if (!v.ok()) return false;
  (cell.mutable_job()->*Setter)(*v);
  return true;
}

// fio's write_<type>_log=<prefix>: the prefix of a file name blkbench writes under the
// directory given to --logs, so no path separators; "" = the job's name (fio's default).
template <auto Mutable>
bool LogPrefix(std::string_view s, CellSpec& cell) {
  if (s.size() > 100 || s.starts_with('.')) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  *(cell.mutable_job()->*Mutable)() = std::string(s);
  return true;
}

bool ApplyRw(std::string_view s, CellSpec& cell) {
  struct Mode {
    std::string_view name;
    v1::RwMode mode;
  };
  static constexpr Mode kModes[] = {
      {"read", v1::READ},           {"write", v1::WRITE},   {"randread", v1::RANDREAD},
      {"randwrite", v1::RANDWRITE}, {"randrw", v1::RANDRW}, {"rw", v1::READWRITE},
      {"readwrite", v1::READWRITE},
  };
  for (const Mode& m : kModes) {
    if (m.name == s) {
      cell.mutable_job()->set_rw(m.mode);
      return true;
    }
  }
  return false;
}

// fio's rwmixwrite is the inverse of rwmixread (fio options.c .inverse).
bool ApplyRwmixwrite(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseUint(s);
  if (!v.ok() || *v > 100) return false;
  cell.mutable_job()->set_rwmixread(static_cast<uint32_t>(100 - *v));
  return true;
}

// The engine vocabulary is common/resolved_job.h's (IoEngines), shared with the agent.
bool ApplyIoengine(std::string_view s, CellSpec& cell) {
  const IoEngineInfo* e = FindIoEngine(s);
  if (e == nullptr) return false;
  cell.mutable_job()->set_ioengine(e->proto);
  return true;
}

bool ApplyCpusAllowed(std::string_view s, CellSpec& cell) {
  if (!CheckCpuList(s).ok()) return false;
  cell.mutable_job()->set_cpus_allowed(std::string(s));
  return true;
}

bool ApplyScheduler(std::string_view s, CellSpec& cell) {
  if (!IsKnownScheduler(s)) return false;
  cell.mutable_queue()->set_scheduler(std::string(s));
  return true;
}

template <auto Setter, uint32_t kHi>
bool QueueUint(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseUint(s);
  if (!v.ok() || *v < 1 || *v > kHi) return false;
  (cell.mutable_queue()->*Setter)(static_cast<uint32_t>(*v));
  return true;
}

// The layout's label as written (CellSpec.cgroup, "" for root) and its parsed form; the
// groups of one and per-job depend on numjobs and are filled by ResolveDerivedDefaults.
bool ApplyCgroup(std::string_view s, CellSpec& cell) {
  absl::StatusOr<v1::CgroupLayout> layout = ParseCgroupLayout(s);
  if (!layout.ok()) return false;
  cell.set_cgroup(layout->kind() == v1::CgroupLayout::ROOT ? "" : std::string(s));
  *cell.mutable_cgroup_layout() = std::move(*layout);
  return true;
}

// Words written where a class belongs until someone knows it (the importer writes
// CHANGE-ME): never a class an agent offers, so a matrix keeping one would validate and
// then wait for ever. Compared without case, '-', '_' and spaces; or anything in <>.
bool IsPlaceholderClass(std::string_view s) {
  constexpr std::string_view kPlaceholders[] = {"changeme", "todo",        "fixme", "xxx",
                                                "tbd",      "placeholder", "class", "deviceclass"};
  if (s.size() >= 2 && s.front() == '<' && s.back() == '>') return true;
  std::string word;
  for (char c : s) {
    if (c != '-' && c != '_' && c != ' ')
      word.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
  }
  return std::find(std::begin(kPlaceholders), std::end(kPlaceholders), word) !=
         std::end(kPlaceholders);
}

// Real classes are free-form labels; a simulated one names its model after "sim:".
bool ApplyDeviceClass(std::string_view s, CellSpec& cell) {
  if (s.empty() || s == "sim:" || IsPlaceholderClass(s) || !LabelProblem(s).empty()) return false;
  cell.mutable_target()->set_device_class(std::string(s));
  return true;
}

bool ApplyKernel(std::string_view s, CellSpec& cell) {
  if (s.empty() || s == "sim:") return false;
  cell.mutable_target()->set_kernel(std::string(s));
  return true;
}

// A machine profile name (engine/profiles/<name>.yaml) or a path to one.
bool ApplyMachine(std::string_view s, CellSpec& cell) {
  if (s.empty()) return false;
  cell.mutable_target()->set_machine(std::string(s));
  return true;
}

// null_blk configfs attributes are written as decimal text; normalize to that.
bool SetNullBlk(std::string_view s, std::string_view param, uint64_t lo, uint64_t hi,
                CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseUint(s);
  if (!v.ok() || *v < lo || *v > hi) return false;
  (*cell.mutable_device_params())[std::string(param)] = absl::StrCat(*v);
  return true;
}

// fio's R[,W] forms (fio's blocksize rules): "R" caps reads and writes alike, "R," only
// reads, ",W" only writes; a third (trim) value is not supported.
template <auto SetRead, auto SetWrite, bool kSizes>
bool ApplyPerDirection(std::string_view s, CellSpec& cell) {
  const size_t comma = s.find(',');
  std::string_view r = s.substr(0, comma);
  std::string_view w = comma == std::string_view::npos ? s : s.substr(comma + 1);
  if (w.find(',') != std::string_view::npos) {
    // "R,W," is fio's "default for trims"; anything after it is a trim rate.
    if (w.substr(w.find(',') + 1).empty()) {
      w = w.substr(0, w.find(','));
    } else {
      return false;
    }
  }
  if (r.empty() && w.empty()) return false;
  auto parse = [](std::string_view v) -> absl::StatusOr<uint64_t> {
    if (v.empty()) return uint64_t{0};
    return kSizes ? ParseSize(v) : ParseUint(v);
  };
  absl::StatusOr<uint64_t> rv = parse(r), wv = parse(w);
  if (!rv.ok() || !wv.ok()) return false;
  (cell.mutable_job()->*SetRead)(*rv);
  (cell.mutable_job()->*SetWrite)(*wv);
  return true;
}

// fio's per-direction form of bs, bsrange and bssplit: "R", "R,W" or "R,W,T" (fio
// str_split_parse). One part is every direction's; with two, trims take the writes'.
// blkbench issues no trims, so a third part is checked and then unused.
std::optional<std::vector<std::string_view>> Directions(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t comma; (comma = s.find(',', start)) != std::string_view::npos; start = comma + 1) {
    parts.push_back(s.substr(start, comma - start));
  }
  parts.push_back(s.substr(start));
  if (parts.size() > 3) return std::nullopt;
  return parts;
}

// fio bs=4k or bs=R,W[,T]; an empty part is fio's default (4k), as in `bs=,64k`.
bool ApplyBs(std::string_view s, CellSpec& cell) {
  std::optional<std::vector<std::string_view>> parts = Directions(s);
  if (!parts) return false;
  uint64_t bs[3] = {kFioDefaultBs, kFioDefaultBs, kFioDefaultBs};
  for (size_t i = 0; i < parts->size(); ++i) {
    if ((*parts)[i].empty() && parts->size() > 1) continue;
    absl::StatusOr<uint64_t> v = ParseSize((*parts)[i]);
    if (!v.ok() || *v == 0 || *v % kSectorSize != 0) return false;
    bs[i] = *v;
  }
  JobSpec* job = cell.mutable_job();
  job->set_bs(bs[0]);
  job->set_write_bs(parts->size() > 1 ? bs[1] : 0);
  job->set_write_bs_max(0);
  return true;
}

// fio blockalign=4k (ba), or per direction as R,W[,T] with every part given.
bool ApplyBlockalign(std::string_view s, CellSpec& cell) {
  std::optional<std::vector<std::string_view>> parts = Directions(s);
  if (!parts) return false;
  uint64_t ba[3] = {};
  for (size_t i = 0; i < parts->size(); ++i) {
    absl::StatusOr<uint64_t> v = ParseSize((*parts)[i]);
    if (!v.ok() || *v == 0 || *v % kSectorSize != 0) return false;
    ba[i] = *v;
  }
  cell.mutable_job()->set_blockalign(ba[0]);
  cell.mutable_job()->set_write_blockalign(ba[1]);
  return true;
}

// One direction's fio bssplit, 4k/10:64k/90 (a blank percentage shares what the others
// leave, as in fio's bssplit_ddir).
bool ParseBssplit(std::string_view s, google::protobuf::RepeatedPtrField<v1::BsSplit>* out) {
  out->Clear();
  if (s.empty()) return false;
  uint32_t given = 0, blanks = 0;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(':', start), s.size());
    const std::string_view entry = s.substr(start, end - start);
    const size_t slash = entry.find('/');
    absl::StatusOr<uint64_t> bs = ParseSize(entry.substr(0, slash));
    if (!bs.ok() || *bs == 0 || *bs % kSectorSize != 0) return false;
    v1::BsSplit* e = out->Add();
    e->set_bs(*bs);
    const std::string_view perc =
        slash == std::string_view::npos ? std::string_view() : entry.substr(slash + 1);
    if (perc.empty()) {
      ++blanks;
      e->set_percent(UINT32_MAX);  // filled below
    } else {
      absl::StatusOr<uint64_t> p = ParseUint(perc);
      if (!p.ok() || *p > 100) return false;
      e->set_percent(static_cast<uint32_t>(*p));
      given += static_cast<uint32_t>(*p);
    }
    start = end + 1;
  }
  if (given > 100 || out->size() > static_cast<int>(kMaxBsSplit)) return false;
  // fio fills blanks evenly with what is left; the last blank takes the remainder.
  uint32_t left = 100 - given;
  for (v1::BsSplit& e : *out) {
    if (e.percent() != UINT32_MAX) continue;
    const uint32_t share = blanks == 1 ? left : left / blanks;
    e.set_percent(share);
    left -= share;
    --blanks;
  }
  return given == 100 || left == 0;
}

// fio bssplit=4k/10:64k/90 for every direction, or per direction as R,W[,T] (each part a
// split of its own; none may be empty).
bool ApplyBssplit(std::string_view s, CellSpec& cell) {
  std::optional<std::vector<std::string_view>> parts = Directions(s);
  if (!parts) return false;
  JobSpec* job = cell.mutable_job();
  if (!ParseBssplit((*parts)[0], job->mutable_bssplit())) return false;
  job->clear_write_bssplit();
  if (parts->size() == 1) return true;
  google::protobuf::RepeatedPtrField<v1::BsSplit> trim;
  return ParseBssplit((*parts)[1], job->mutable_write_bssplit()) &&
         (parts->size() < 3 || ParseBssplit((*parts)[2], &trim));
}

// One fio bsrange, min-max; empty is fio's default (4k-4k).
bool ParseBsrange(std::string_view s, uint64_t* lo, uint64_t* hi) {
  if (s.empty()) {
    *lo = *hi = kFioDefaultBs;
    return true;
  }
  const size_t dash = s.find('-');
  if (dash == std::string_view::npos) return false;
  absl::StatusOr<uint64_t> l = ParseSize(s.substr(0, dash)), h = ParseSize(s.substr(dash + 1));
  if (!l.ok() || !h.ok() || *l == 0 || *l % kSectorSize != 0 || *h % kSectorSize != 0 || *h < *l) {
    return false;
  }
  *lo = *l;
  *hi = *h;
  return true;
}

// fio bsrange=4k-64k (blocksize_range): sizes from min to max in multiples of min; per
// direction as R,W[,T].
bool ApplyBsrange(std::string_view s, CellSpec& cell) {
  std::optional<std::vector<std::string_view>> parts = Directions(s);
  if (!parts || (parts->size() == 1 && s.empty())) return false;
  uint64_t lo[3] = {}, hi[3] = {};
  for (size_t i = 0; i < parts->size(); ++i) {
    if (!ParseBsrange((*parts)[i], &lo[i], &hi[i])) return false;
  }
  JobSpec* job = cell.mutable_job();
  job->set_bs(lo[0]);
  job->set_bs_max(hi[0]);
  job->set_write_bs(parts->size() > 1 ? lo[1] : 0);
  job->set_write_bs_max(parts->size() > 1 ? hi[1] : 0);
  return true;
}

bool ApplyFileServiceType(std::string_view s, CellSpec& cell) {
  FileService kind;
  uint32_t nr;
  if (!ParseFileServiceType(s, &kind, &nr).empty()) return false;
  cell.mutable_job()->set_file_service_type(std::string(s));
  return true;
}

bool ApplyRandomDistribution(std::string_view s, CellSpec& cell) {
  RandomDist d;
  double p, c;
  if (!ParseRandomDistribution(s, &d, &p, &c).empty()) return false;
  cell.mutable_job()->set_random_distribution(std::string(s));
  return true;
}

// fio's thinktime and thinktime_spin: a bare number is microseconds.
template <auto Setter, uint64_t kMaxNs>
bool JobMicros(std::string_view s, CellSpec& cell) {
  absl::StatusOr<uint64_t> v = ParseUint(s);
  uint64_t ns = 0;
  if (v.ok()) {
    if (__builtin_mul_overflow(*v, uint64_t{1000}, &ns)) return false;
  } else {
    absl::StatusOr<uint64_t> d = ParseDurationNs(s);
    if (!d.ok()) return false;
    ns = *d;
  }
  if (ns > kMaxNs) return false;
  (cell.mutable_job()->*Setter)(ns);
  return true;
}

bool ApplyNice(std::string_view s, CellSpec& cell) {
  const bool negative = !s.empty() && s[0] == '-';
  absl::StatusOr<uint64_t> v = ParseUint(negative ? s.substr(1) : s);
  if (!v.ok() || (negative ? *v > 20 : *v > 19)) return false;
  cell.mutable_job()->set_nice(negative ? -static_cast<int32_t>(*v) : static_cast<int32_t>(*v));
  return true;
}

constexpr std::string_view kBool = "a boolean (0, 1, true or false)";
constexpr std::string_view kLogPrefix =
    "a log file name prefix of letters, digits, '.', '_' and '-' (up to 100, not starting "
    "with '.'; \"\" = the job's name)";
constexpr std::string_view kBsRange =
    "a size range min-max, both multiples of 512 with min <= max (e.g. 4k-64k), or one per "
    "direction as reads,writes[,trims] (e.g. 4k-8k,64k-128k)";
constexpr std::string_view kSize = "a size (e.g. 512k, 1g, or bytes)";
// common/resolved_job.h IoEngineNames(), in its order (matrix_errors_test checks they agree).
// fio's null is YAML's empty value unquoted: the hint says how to write it.
constexpr std::string_view kIoengineChoices =
    "one of io_uring, libaio, psync, sync, pvsync2, nop (fio's null: write nop or \"null\")";
constexpr std::string_view kDuration = "a duration (e.g. 30s, 500ms, 2m; a bare number is seconds)";

constexpr OptionDef kOptions[] = {
    // fio job options (fio HOWTO names and meanings).
    {"rw", "rw", Scope::kJob, "one of read, write, randread, randwrite, randrw, rw, readwrite",
     &ApplyRw},
    {"rwmixread", "rwmixread", Scope::kJob, "a percentage from 0 to 100",
     &JobUint<&JobSpec::set_rwmixread, 0, 100>},
    {"rwmixwrite", "rwmixread", Scope::kJob, "a percentage from 0 to 100", &ApplyRwmixwrite},
    {"bs", "bs", Scope::kJob,
     "a size that is a multiple of 512 (e.g. 4k), or one per direction as reads,writes[,trims] "
     "(e.g. 4k,64k; an empty one is 4k)",
     &ApplyBs},
    {"size", "size", Scope::kJob, kSize, &JobSize<&JobSpec::set_size, 1, 0>},
    {"offset", "offset", Scope::kJob, kSize, &JobSize<&JobSpec::set_offset, 1, 0>},
    {"offset_increment", "offset_increment", Scope::kJob, kSize,
     &JobSize<&JobSpec::set_offset_increment, 1, 0>},
    {"io_size", "io_size", Scope::kJob, kSize, &JobSize<&JobSpec::set_io_size, 1, 0>},
    {"io_limit", "io_size", Scope::kJob, kSize, &JobSize<&JobSpec::set_io_size, 1, 0>},
    {"iodepth", "iodepth", Scope::kJob, "an integer from 1 to 65536",
     &JobUint<&JobSpec::set_iodepth, 1, kMaxIodepth>},
    {"numjobs", "numjobs", Scope::kJob, "an integer from 1 to 4096",
     &JobUint<&JobSpec::set_numjobs, 1, kMaxNumjobs>},
    {"iodepth_batch_submit", "iodepth_batch_submit", Scope::kJob,
     "an integer from 0 to 65536 (0 means iodepth)",
     &JobUint<&JobSpec::set_iodepth_batch_submit, 0, kMaxIodepth>},
    {"iodepth_batch", "iodepth_batch_submit", Scope::kJob,
     "an integer from 0 to 65536 (0 means iodepth)",
     &JobUint<&JobSpec::set_iodepth_batch_submit, 0, kMaxIodepth>},
    {"iodepth_batch_complete_min", "iodepth_batch_complete_min", Scope::kJob,
     "an integer from 0 to 65536",
     &JobUint<&JobSpec::set_iodepth_batch_complete_min, 0, kMaxIodepth>},
    {"iodepth_batch_complete", "iodepth_batch_complete_min", Scope::kJob,
     "an integer from 0 to 65536",
     &JobUint<&JobSpec::set_iodepth_batch_complete_min, 0, kMaxIodepth>},
    {"iodepth_batch_complete_max", "iodepth_batch_complete_max", Scope::kJob,
     "an integer from 0 to 65536 (0 means iodepth_batch_complete_min)",
     &JobUint<&JobSpec::set_iodepth_batch_complete_max, 0, kMaxIodepth>},
    {"direct", "direct", Scope::kJob, kBool, &JobBool<&JobSpec::set_direct>},
    {"runtime", "runtime", Scope::kJob, kDuration, &JobDuration<&JobSpec::set_runtime_ns>},
    {"ramp_time", "ramp_time", Scope::kJob, kDuration, &JobDuration<&JobSpec::set_ramp_time_ns>},
    {"time_based", "time_based", Scope::kJob, kBool, &JobBool<&JobSpec::set_time_based>},
    {"ioengine", "ioengine", Scope::kJob, kIoengineChoices, &ApplyIoengine},
    {"hipri", "hipri", Scope::kJob, kBool, &JobBool<&JobSpec::set_hipri>},
    {"fixedbufs", "fixedbufs", Scope::kJob, kBool, &JobBool<&JobSpec::set_fixedbufs>},
    {"registerfiles", "registerfiles", Scope::kJob, kBool, &JobBool<&JobSpec::set_registerfiles>},
    {"sqthread_poll", "sqthread_poll", Scope::kJob, kBool, &JobBool<&JobSpec::set_sqthread_poll>},
    {"thread", "thread", Scope::kJob, kBool, &JobBool<&JobSpec::set_thread>},
    {"cpus_allowed", "cpus_allowed", Scope::kJob, "a CPU list like 0-3,6", &ApplyCpusAllowed},
    {"randseed", "randseed", Scope::kJob, "an unsigned integer (decimal or 0x hex)",
     &JobUint<&JobSpec::set_randseed, 0, UINT64_MAX>},
    // fio options of real job files (issue 14); docs/matrix.md has each one's status.
    {"norandommap", "norandommap", Scope::kJob, kBool, &JobBool<&JobSpec::set_norandommap>},
    {"randrepeat", "randrepeat", Scope::kJob, kBool, &JobBool<&JobSpec::set_randrepeat>},
    {"random_distribution", "random_distribution", Scope::kJob,
     "random, zipf:<theta>, pareto:<power> or normal:<deviation in percent>, each with an "
     "optional :<center from 0 to 1> (e.g. zipf:1.2), or zoned:<access %>/<region %>[:...] or "
     "zoned_abs:<access %>/<size>[:...] with the accesses adding up to 100 and zoned's regions "
     "to at most 100 (e.g. zoned:60/10:40/90; one zone list for reads and writes: fio's "
     "comma-separated per-direction form is not supported)",
     &ApplyRandomDistribution},
    {"file_service_type", "file_service_type", Scope::kJob,
     "roundrobin or random, each with an optional :<I/Os before switching> (e.g. roundrobin:32), "
     "or t/io_uring (its rules)",
     &ApplyFileServiceType},
    {"bssplit", "bssplit", Scope::kJob,
     "block sizes with percentages as size/percent:size/percent adding up to 100, sizes "
     "multiples of 512 (e.g. 4k/10:64k/90), or one set per direction as reads,writes[,trims] "
     "(e.g. 64k/40:1024k/60,1024k/100)",
     &ApplyBssplit},
    {"bsrange", "bs", Scope::kJob, kBsRange, &ApplyBsrange},
    {"blockalign", "blockalign", Scope::kJob,
     "a size that is a multiple of 512 (e.g. 4k), or one per direction as reads,writes[,trims]",
     &ApplyBlockalign},
    {"ba", "blockalign", Scope::kJob,
     "a size that is a multiple of 512 (e.g. 4k), or one per direction as reads,writes[,trims]",
     &ApplyBlockalign},
    {"blocksize_range", "bs", Scope::kJob, kBsRange, &ApplyBsrange},
    {"rate", "rate", Scope::kJob,
     "a bandwidth cap in bytes/s per job as R[,W] with size suffixes (e.g. 1m, 1m,500k, ,500k; "
     "no trim rate)",
     &ApplyPerDirection<&JobSpec::set_rate_read_bps, &JobSpec::set_rate_write_bps, true>},
    {"rate_iops", "rate_iops", Scope::kJob,
     "an IOPS cap per job as R[,W] integers (e.g. 500, 500,100, ,100; no trim rate)",
     &ApplyPerDirection<&JobSpec::set_rate_iops_read, &JobSpec::set_rate_iops_write, false>},
    {"rate_process", "rate_process", Scope::kJob, "linear or poisson",
     [](std::string_view s, CellSpec& c) {
       if (s != "linear" && s != "poisson") return false;
       c.mutable_job()->set_rate_process(std::string(s));
       return true;
     }},
    {"startdelay", "startdelay", Scope::kJob,
     "a duration (e.g. 2s, 500ms; a bare number is seconds; a range is not supported)",
     &JobDuration<&JobSpec::set_startdelay_ns>},
    {"thinktime", "thinktime", Scope::kJob,
     "a duration (e.g. 100us, 2ms; a bare number is microseconds)",
     &JobMicros<&JobSpec::set_thinktime_ns, UINT64_MAX>},
    {"thinktime_spin", "thinktime_spin", Scope::kJob,
     "a duration up to 4s (e.g. 50us; a bare number is microseconds)",
     &JobMicros<&JobSpec::set_thinktime_spin_ns, UINT32_MAX>},
    {"thinktime_blocks", "thinktime_blocks", Scope::kJob, "an integer from 1 to 4294967295",
     &JobUint<&JobSpec::set_thinktime_blocks, 1, UINT32_MAX>},
    {"nice", "nice", Scope::kJob, "an integer from -20 to 19", &ApplyNice},
    {"prio", "prio", Scope::kJob, "an integer from 0 (highest) to 7",
     &JobUint<&JobSpec::set_prio, 0, 7>},
    {"prioclass", "prioclass", Scope::kJob, "1 (realtime), 2 (best-effort) or 3 (idle)",
     &JobUint<&JobSpec::set_prioclass, 1, 3>},
    {"fsync", "fsync", Scope::kJob, "an integer: fsync after every N writes (0 = never)",
     &JobUint<&JobSpec::set_fsync, 0, UINT32_MAX>},
    {"end_fsync", "end_fsync", Scope::kJob, kBool, &JobBool<&JobSpec::set_end_fsync>},
    {"log_avg_msec", "log_avg_msec", Scope::kJob,
     "an interval in milliseconds from 1 to 3600000 (the run's sample interval)",
     &JobUint<&JobSpec::set_log_avg_msec, 1, 3'600'000>},
    // fio's log files (docs/fio-logs.md), written from the run's samples.
    {"write_bw_log", "write_bw_log", Scope::kJob, kLogPrefix,
     &LogPrefix<&JobSpec::mutable_write_bw_log>},
    {"write_iops_log", "write_iops_log", Scope::kJob, kLogPrefix,
     &LogPrefix<&JobSpec::mutable_write_iops_log>},
    {"write_lat_log", "write_lat_log", Scope::kJob, kLogPrefix,
     &LogPrefix<&JobSpec::mutable_write_lat_log>},
    {"write_hist_log", "write_hist_log", Scope::kJob, kLogPrefix,
     &LogPrefix<&JobSpec::mutable_write_hist_log>},
    {"log_hist_msec", "log_hist_msec", Scope::kJob,
     "an interval in milliseconds from 1 to 3600000 (the histogram log's)",
     &JobUint<&JobSpec::set_log_hist_msec, 1, 3'600'000>},
    {"log_offset", "log_offset", Scope::kJob, kBool, &JobBool<&JobSpec::set_log_offset>},
    // Block-layer settings applied through sysfs and cgroupfs.
    // The text lists common/sim_vocabulary.h's Schedulers() (matrix_test.cc checks).
    {"scheduler", "scheduler", Scope::kJob, "one of none, mq-deadline, bfq, kyber",
     &ApplyScheduler},
    {"ioscheduler", "scheduler", Scope::kJob, "one of none, mq-deadline, bfq, kyber",
     &ApplyScheduler},
    {"nr_requests", "nr_requests", Scope::kJob,
     "an integer from 1 to 10240 (the kernel refuses more: BLK_MQ_MAX_DEPTH)",
     &QueueUint<&v1::QueueSettings::set_nr_requests, kMaxNrRequests>},
    {"max_sectors_kb", "max_sectors_kb", Scope::kJob, "a positive integer",
     &QueueUint<&v1::QueueSettings::set_max_sectors_kb, UINT32_MAX>},
    {"cgroup", "cgroup", Scope::kJob,
     "root, one, one:<weight>, per-job, or groups as name:weight*jobs,... (e.g. "
     "heavy:1000*1,light:100*1; weights 1 to 1000, names of a-z 0-9 _ -)",
     &ApplyCgroup},
    // Block-layer evidence (agent/device/block_trace.h): off unless asked for, as it
    // costs IOPS (docs/performance.md).
    {"trace", "trace", Scope::kJob, "0 (off) or 1 (block-layer trace summary)",
     [](std::string_view s, CellSpec& c) {
       absl::StatusOr<uint64_t> v = ParseUint(s);
       if (!v.ok() || *v > kMaxTrace) return false;
       c.set_trace(static_cast<uint32_t>(*v));
       return true;
     }},
    // Where a cell may run.
    {"device_class", "device_class", Scope::kTarget,
     "a device class of up to 128 printable characters (e.g. null_blk, nvme, file, "
     "sim:null_blk), not a placeholder such as CHANGE-ME, TODO or <class>",
     &ApplyDeviceClass},
    {"kernel", "kernel", Scope::kTarget, "a kernel release glob (e.g. 6.*) or sim:<profile>",
     &ApplyKernel},
    {"machine", "machine", Scope::kTarget,
     "an engine machine profile (e.g. small-vm, desktop-16, server-128-4node)", &ApplyMachine},
    // null_blk configfs parameters (Documentation/block/null_blk.rst).
    {"null_blk.submit_queues", "null_blk.submit_queues", Scope::kNullBlk,
     "an integer from 1 to 65536",
     [](std::string_view s, CellSpec& c) {
       return SetNullBlk(s, "null_blk.submit_queues", 1, 65536, c);
     }},
    {"null_blk.hw_queue_depth", "null_blk.hw_queue_depth", Scope::kNullBlk,
     "an integer from 1 to 65536",
     [](std::string_view s, CellSpec& c) {
       return SetNullBlk(s, "null_blk.hw_queue_depth", 1, 65536, c);
     }},
    {"null_blk.completion_nsec", "null_blk.completion_nsec", Scope::kNullBlk,
     "an integer number of nanoseconds",
     [](std::string_view s, CellSpec& c) {
       return SetNullBlk(s, "null_blk.completion_nsec", 0, UINT32_MAX, c);
     }},
    {"null_blk.irqmode", "null_blk.irqmode", Scope::kNullBlk, "0 (none), 1 (softirq) or 2 (timer)",
     [](std::string_view s, CellSpec& c) { return SetNullBlk(s, "null_blk.irqmode", 0, 2, c); }},
    {"null_blk.blocksize", "null_blk.blocksize", Scope::kNullBlk, "512, 1024, 2048 or 4096",
     [](std::string_view s, CellSpec& c) {
       absl::StatusOr<uint64_t> v = ParseSize(s);
       if (!v.ok() || *v < 512 || *v > 4096 || (*v & (*v - 1)) != 0) return false;
       (*c.mutable_device_params())["null_blk.blocksize"] = absl::StrCat(*v);
       return true;
     }},
    {"null_blk.memory_backed", "null_blk.memory_backed", Scope::kNullBlk, kBool,
     [](std::string_view s, CellSpec& c) {
       absl::StatusOr<bool> v = ParseBool(s);
       if (!v.ok()) return false;
       (*c.mutable_device_params())["null_blk.memory_backed"] = absl::StrCat(*v ? 1 : 0);
       return true;
     }},
    {"null_blk.size", "null_blk.size", Scope::kNullBlk, "the device size in MiB, 1 or more",
     [](std::string_view s, CellSpec& c) {
       return SetNullBlk(s, "null_blk.size", 1, UINT32_MAX, c);
     }},
    {"null_blk.home_node", "null_blk.home_node", Scope::kNullBlk, "a NUMA node from 0 to 1023",
     [](std::string_view s, CellSpec& c) {
       return SetNullBlk(s, "null_blk.home_node", 0, 1023, c);
     }},
    {"null_blk.queue_mode", "null_blk.queue_mode", Scope::kNullBlk,
     "0 (bio), 1 (single queue) or 2 (multi-queue)",
     [](std::string_view s, CellSpec& c) { return SetNullBlk(s, "null_blk.queue_mode", 0, 2, c); }},
};

// The schedulers' tunables (common/iosched_tunables.h) are block-layer keys like
// nr_requests, one per sysfs file, stored as QueueSettings.iosched[name] in sysfs's decimal.
// Whether the cell's scheduler has them is a cell check (CheckIoschedTunables). One row
// per tunable, after kOptions, built as tunables appear (RegisterIoschedTunables only
// appends); slice_idle_us is canonically slice_idle (one kernel variable), so a file may
// give only one of the two.
class IoschedOptionRows {
 public:
  template <typename Fn>
  void ForEach(Fn fn) {
    absl::MutexLock lock(&mu_);
    const std::span<const IoschedTunableDef> defs = IoschedTunables();
    for (size_t i = rows_.size(); i < defs.size(); ++i) {
      const IoschedTunableDef& def = defs[i];
      expected_.push_back(IoschedTunableExpected(def));
      rows_.push_back(OptionDef{.name = def.name,
                                .canonical = def.same_as.empty() ? def.name : def.same_as,
                                .scope = Scope::kJob,
                                .expected = expected_.back(),
                                .apply = nullptr,
                                .tunable = &def});
    }
    for (const OptionDef& row : rows_) {
      if (fn(row)) return;
    }
  }

 private:
  absl::Mutex mu_;
  std::deque<OptionDef> rows_;  // stable addresses: FindOption hands them out
  std::deque<std::string> expected_;
};

IoschedOptionRows& IoschedOptions() {
  static auto* const rows = new IoschedOptionRows;
  return *rows;
}

}  // namespace

const OptionDef* FindOption(std::string_view name) {
  for (const OptionDef& def : kOptions) {
    if (def.name == name) return &def;
  }
  const OptionDef* found = nullptr;
  IoschedOptions().ForEach([&](const OptionDef& def) {
    if (def.name == name) found = &def;
    return found != nullptr;
  });
  return found;
}

bool OptionDef::Apply(std::string_view value, v1::CellSpec& cell) const {
  if (tunable == nullptr) return apply(value, cell);
  std::optional<std::string> canonical_value = CanonicalIoschedValue(*tunable, value);
  if (!canonical_value) return false;
  (*cell.mutable_queue()->mutable_iosched())[std::string(tunable->name)] =
      *std::move(canonical_value);
  return true;
}

std::vector<std::string_view> OptionNames(Scope scope) {
  std::vector<std::string_view> names;
  for (const OptionDef& def : kOptions) {
    if (def.scope == scope) names.push_back(def.name);
  }
  IoschedOptions().ForEach([&](const OptionDef& def) {
    if (def.scope == scope) names.push_back(def.name);
    return false;
  });
  return names;
}

CellSpec DefaultCell() {
  CellSpec cell;
  JobSpec* job = cell.mutable_job();
  job->set_rw(v1::READ);
  job->set_rwmixread(kDefaultRwmixread);
  job->set_bs(kDefaultBs);
  job->set_iodepth(kDefaultIodepth);
  job->set_numjobs(kDefaultNumjobs);
  job->set_iodepth_batch_submit(kDefaultBatchSubmit);
  job->set_iodepth_batch_complete_min(kDefaultBatchCompleteMin);
  job->set_iodepth_batch_complete_max(0);
  job->set_ioengine(v1::PSYNC);
  job->set_randseed(kDefaultRandseed);
  return cell;
}

void ResolveDerivedDefaults(CellSpec& cell) {
  JobSpec* job = cell.mutable_job();
  // The stored cell shows what runs: fio's "0 means ..." rules (common/resolved_job.h).
  ApplyFioFixups(*job);
  // Named jobs had their fixups applied with their own options (ApplyNamedJobs); the
  // layout places the threads of all of them.
  FillCgroupGroups(static_cast<uint32_t>(std::min<uint64_t>(TotalNumjobs(cell), UINT32_MAX)),
                   *cell.mutable_cgroup_layout());
}

}  // namespace blkbench::workloads
