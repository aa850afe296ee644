// fio's job rules in one place; see resolved_job.h.
#include "common/resolved_job.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/job_bounds.h"
#include "common/log_options.h"
#include "common/sim_vocabulary.h"
#include "common/units.h"

namespace blkbench {
namespace {

// Appends a problem about `keys` to `out`.
void Problem(std::vector<JobProblem>& out, std::vector<std::string_view> keys,
             std::string message) {
  out.push_back({std::move(keys), std::move(message)});
}

void CheckSectorAligned(const v1::JobSpec& spec, std::string_view key, uint64_t value,
                        std::vector<JobProblem>& out) {
  if (spec.direct() && value % kSectorSize != 0) {
    Problem(out, {key, "direct"},
            absl::StrCat("with direct=1, ", std::string(key), " must be a multiple of 512 (got ",
                         value, " bytes)"));
  }
}

// The engines (one row each). max_depth: io_uring's ring has iodepth entries, at most
// the kernel's IORING_MAX_ENTRIES; libaio's io_setup(iodepth) is bounded by fs.aio-max-nr
// at run time only.
constexpr IoEngineInfo kEngines[] = {
    {"io_uring", v1::IO_URING, IoEngineKind::kIoUring,
     kEngineHipri | kEngineFixedBufs | kEngineRegisterFiles | kEngineSqThreadPoll, kMaxUringDepth,
     "maximum ring size of 32768 (the ring has iodepth entries)", ""},
    {"libaio", v1::LIBAIO, IoEngineKind::kLibaio, 0, kMaxIodepth, "", ""},
    {"psync", v1::PSYNC, IoEngineKind::kPsync, kEngineSync, kMaxIodepth, "", ""},
    {"sync", v1::SYNC, IoEngineKind::kSync, kEngineSync, kMaxIodepth, "", ""},
    {"pvsync2", v1::PVSYNC2, IoEngineKind::kPvsync2, kEngineSync | kEngineHipri, kMaxIodepth, "",
     ""},
    // fio calls it null, which a YAML reader takes for "no value": matrices write nop.
    {"nop", v1::NOP, IoEngineKind::kNop, kEngineNoIo, kMaxIodepth, "", "null"},
};
static_assert(kMaxUringDepth == 32768, "kEngines' io_uring message names the limit");

// "io_uring" or "io_uring, pvsync2": the engines that have `cap`.
std::string EnginesWith(uint32_t cap) {
  std::vector<std::string> names;  // Debian's abseil joins absl::string_view, not std's
  for (const IoEngineInfo& e : kEngines) {
    if (e.caps & cap) names.emplace_back(e.name);
  }
  return absl::StrJoin(names, ", ");
}

// fio's random_distribution defaults (fio.h FIO_DEF_ZIPF, FIO_DEF_PARETO).
constexpr double kFioDefZipf = 1.1;
constexpr double kFioDefPareto = 0.2;

// One direction's sizes from a bssplit, else min..max (fio bssplit_ddir, bsrange).
BlockSizes DirectionSizes(const google::protobuf::RepeatedPtrField<v1::BsSplit>& split, uint64_t bs,
                          uint64_t bs_max, std::vector<JobProblem>& out) {
  BlockSizes d;
  d.min = d.max = bs;
  if (!split.empty()) {
    uint64_t lo = UINT64_MAX, hi = 0;
    uint32_t sum = 0;
    for (const v1::BsSplit& e : split) {
      if (e.bs() == 0 || e.bs() % kSectorSize != 0) {
        Problem(out, {"bssplit"},
                absl::StrCat("bssplit block size ", e.bs(), " is not a multiple of 512"));
      }
      lo = std::min(lo, e.bs());
      hi = std::max(hi, e.bs());
      sum += e.percent();
      d.split.push_back({e.bs(), e.percent()});
    }
    if (split.size() > static_cast<int>(kMaxBsSplit)) {
      Problem(
          out, {"bssplit"},
          absl::StrCat("bssplit has ", split.size(), " entries; fio takes at most ", kMaxBsSplit));
    }
    if (sum != 100) {
      Problem(out, {"bssplit"},
              absl::StrCat("bssplit percentages add up to ", sum, ", expected 100"));
    }
    d.min = lo;
    d.max = hi;
  } else if (bs_max != 0) {
    if (bs_max < bs) {
      Problem(out, {"bs"}, absl::StrCat("bsrange maximum ", bs_max, " is below its minimum ", bs));
    }
    d.max = std::max(bs_max, bs);
  }
  return d;
}

// bs, bsrange, bssplit per direction. Writes have their own sizes when the per-direction
// form gave them (write_bssplit, write_bs); a bssplit for all directions is the writes'
// too whatever bs says, as fio's get_next_buflen prefers bssplit.
void ResolveBlockSizes(const v1::JobSpec& spec, ResolvedJob& j, std::vector<JobProblem>& out) {
  j.sizes[0] = DirectionSizes(spec.bssplit(), j.bs, spec.bs_max(), out);
  if (spec.write_bssplit_size() > 0) {
    j.sizes[1] = DirectionSizes(spec.write_bssplit(), 0, 0, out);
  } else if (spec.write_bs() != 0 && spec.bssplit_size() == 0) {
    if (spec.write_bs() % kSectorSize != 0) {
      Problem(out, {"bs"},
              absl::StrCat("the writes' bs must be a multiple of 512 (got ", spec.write_bs(),
                           " bytes)"));
    }
    j.sizes[1] = DirectionSizes({}, spec.write_bs(), spec.write_bs_max(), out);
  } else {
    j.sizes[1] = j.sizes[0];
  }
  // fio blockalign: the random offsets' boundary, the direction's smallest size unless set.
  const uint64_t align[2] = {spec.blockalign(), spec.write_blockalign() != 0
                                                    ? spec.write_blockalign()
                                                    : spec.blockalign()};
  for (int d = 0; d < 2; ++d) {
    j.sizes[d].align = align[d] != 0 ? align[d] : j.sizes[d].min;
    if (j.sizes[d].align % kSectorSize != 0) {
      Problem(out, {"blockalign"},
              absl::StrCat("blockalign ", j.sizes[d].align, " is not a multiple of 512"));
    }
  }
  j.bs = std::min(j.sizes[0].min, j.sizes[1].min);
  j.bs_max = std::max(j.sizes[0].max, j.sizes[1].max);
}

// rate, rate_iops, rate_process, startdelay, thinktime*, nice, prio*, fsync, logging.
void ResolvePacingAndPriority(const v1::JobSpec& spec, ResolvedJob& j,
                              std::vector<JobProblem>& out) {
  j.rate_bps[0] = spec.rate_read_bps();
  j.rate_bps[1] = spec.rate_write_bps();
  j.rate_iops[0] = spec.rate_iops_read();
  j.rate_iops[1] = spec.rate_iops_write();
  if (spec.rate_process() == "poisson") {
    j.rate_poisson = true;
  } else if (!spec.rate_process().empty() && spec.rate_process() != "linear") {
    Problem(
        out, {"rate_process"},
        absl::StrCat("rate_process must be linear or poisson, got '", spec.rate_process(), "'"));
  }
  j.startdelay_ns = spec.startdelay_ns();
  j.thinktime_ns = spec.thinktime_ns();
  j.thinktime_spin_ns = spec.thinktime_spin_ns();
  j.thinktime_blocks = spec.thinktime_blocks() ? spec.thinktime_blocks() : 1;
  if (j.thinktime_spin_ns > j.thinktime_ns) {
    Problem(out, {"thinktime_spin", "thinktime"},
            absl::StrCat("thinktime_spin (", j.thinktime_spin_ns, " ns) is longer than thinktime (",
                         j.thinktime_ns, " ns)"));
  }
  j.nice = spec.nice();
  if (j.nice < -20 || j.nice > 19) {
    Problem(out, {"nice"}, absl::StrCat("nice must be -20..19, got ", j.nice));
  }
  if (spec.has_prio() || spec.prioclass() != 0) {
    // fio: prio alone is a best-effort level; prioclass alone keeps the default level.
    j.ioprio_class = spec.prioclass() ? spec.prioclass() : kIoprioClassBe;
    j.ioprio_level = spec.has_prio() ? spec.prio() : kIoprioDefaultLevel;
    if (j.ioprio_class > kIoprioClassIdle) {
      Problem(out, {"prioclass"},
              absl::StrCat("prioclass must be 1 (rt), 2 (be) or 3 (idle), got ", j.ioprio_class));
    }
    if (j.ioprio_level > 7) {
      Problem(out, {"prio"}, absl::StrCat("prio must be 0..7, got ", j.ioprio_level));
    }
    if (j.ioprio_class == kIoprioClassIdle) j.ioprio_level = 0;
  }
  j.fsync_blocks = spec.fsync();
  j.end_fsync = spec.end_fsync();
  j.log_avg_msec = spec.log_avg_msec();
  if (!spec.file_service_type().empty()) {
    const std::string why =
        ParseFileServiceType(spec.file_service_type(), &j.file_service, &j.file_service_nr);
    if (!why.empty()) {
      Problem(out, {"file_service_type"},
              absl::StrCat("file_service_type '", spec.file_service_type(), "': expected ", why));
    }
  }
}

}  // namespace

std::string ParseFileServiceType(std::string_view s, FileService* kind, uint32_t* nr) {
  constexpr std::string_view kExpected =
      "roundrobin or random, each with an optional :<I/Os before switching> from 1 (e.g. "
      "roundrobin:32), or t/io_uring (its rules); fio's sequential, zipf, pareto, normal and "
      "gauss are not supported";
  const size_t colon = s.find(':');
  const std::string_view name = s.substr(0, colon);
  FileService k;
  if (name == "roundrobin") {
    k = FileService::kRoundRobin;
  } else if (name == "random") {
    k = FileService::kRandom;
  } else if (s == "t/io_uring") {
    k = FileService::kUring;
  } else {
    return std::string(kExpected);
  }
  uint32_t n = 1;
  if (colon != std::string_view::npos &&
      (!absl::SimpleAtoi(absl::string_view(s.substr(colon + 1).data(), s.size() - colon - 1), &n) ||
       n == 0)) {
    return std::string(kExpected);
  }
  *kind = k;
  *nr = n;
  return "";
}

namespace {

// fio's zoned forms after "zoned:" / "zoned_abs:": A/R entries separated by ':'.
std::string ParseZones(std::string_view list, bool absolute, std::vector<ZoneSplit>* zones) {
  const char* form = absolute ? "zoned_abs" : "zoned";
  std::string entry =
      absl::StrCat(form, absolute ? ":<access %>/<size>" : ":<access %>/<region %>",
                   "[:...], e.g. ", absolute ? "zoned_abs:60/20g:40/100g" : "zoned:60/10:40/90");
  if (list.find(',') != std::string_view::npos) {
    return absl::StrCat(entry,
                        " (fio's per-direction zone lists, separated by ',', are not "
                        "supported: give one list for reads and writes)");
  }
  std::vector<ZoneSplit> out;
  uint32_t access = 0, region = 0, blanks = 0;
  const std::vector<std::string> entries = absl::StrSplit(std::string(list), ':');
  for (const std::string& e : entries) {
    const size_t slash = e.find('/');
    ZoneSplit z;
    if (!absl::SimpleAtoi(e.substr(0, slash), &z.access_percent) || z.access_percent > 100) {
      return entry;
    }
    const std::string size = slash == std::string::npos ? "" : e.substr(slash + 1);
    if (absolute) {
      absl::StatusOr<uint64_t> bytes = ParseSize(size);
      if (!bytes.ok() || *bytes == 0) return entry;
      z.size_bytes = *bytes;
    } else if (size.empty()) {
      ++blanks;  // fio split_parse_ddir: no region (or 0) shares what the others leave
    } else if (!absl::SimpleAtoi(size, &z.size_percent) || z.size_percent > 100) {
      return entry;
    } else if (z.size_percent == 0) {
      ++blanks;
    }
    access += z.access_percent;
    region += z.size_percent;
    out.push_back(z);
  }
  if (out.size() > kMaxZones) return absl::StrCat(entry, " with at most 256 zones (fio's limit)");
  // fio zone_split_ddir: the blank regions split the rest evenly (integer percent; a lone
  // zone without one is the whole region).
  if (blanks > 0 && region <= 100) {
    const uint32_t share = out.size() == 1 ? 100 : (100 - region) / blanks;
    for (ZoneSplit& z : out) {
      if (z.size_percent == 0) z.size_percent = share;
    }
  }
  if (access != 100 || region > 100) {
    if (absolute) {
      return absl::StrCat(entry, " whose access percentages add up to 100 (fio's rule; got ",
                          access, ")");
    }
    return absl::StrCat(entry,
                        " whose access percentages add up to 100 and region percentages to at "
                        "most 100 (fio's rule; got ",
                        access, " and ", region, ")");
  }
  if (zones != nullptr) *zones = std::move(out);
  return "";
}

}  // namespace

std::string ParseRandomDistribution(std::string_view s, RandomDist* dist, double* param,
                                    double* center, std::vector<ZoneSplit>* zones) {
  static constexpr std::string_view kExpected =
      "random, zipf:<theta>, pareto:<power> or normal:<deviation in percent>, each with an "
      "optional :<center from 0 to 1>, or zoned:<access %>/<region %>[:...] or "
      "zoned_abs:<access %>/<size>[:...]";
  for (const bool absolute : {false, true}) {
    const std::string_view prefix = absolute ? "zoned_abs:" : "zoned:";
    if (s.substr(0, prefix.size()) != prefix) continue;
    std::vector<ZoneSplit> z;
    std::string why = ParseZones(s.substr(prefix.size()), absolute, &z);
    if (!why.empty()) return why;
    *dist = absolute ? RandomDist::kZonedAbs : RandomDist::kZoned;
    *param = 0;
    *center = -1;
    if (zones != nullptr) *zones = std::move(z);
    return "";
  }
  const std::vector<std::string> parts = absl::StrSplit(std::string(s), ':');
  const std::string& kind = parts[0];
  RandomDist d;
  double p = 0;
  if (kind == "random") {
    d = RandomDist::kRandom;
  } else if (kind == "zipf") {
    d = RandomDist::kZipf;
    p = kFioDefZipf;
  } else if (kind == "pareto") {
    d = RandomDist::kPareto;
    p = kFioDefPareto;
  } else if (kind == "normal") {
    d = RandomDist::kNormal;
  } else {
    return std::string(kExpected);
  }
  if (parts.size() > 3 || (d == RandomDist::kRandom && parts.size() > 1)) {
    return std::string(kExpected);
  }
  double c = -1;
  if (parts.size() >= 2 && !absl::SimpleAtod(parts[1], &p)) return std::string(kExpected);
  if (parts.size() == 3 && (!absl::SimpleAtod(parts[2], &c) || c < 0 || c > 1)) {
    return std::string(kExpected);
  }
  // fio's own ranges (options.c str_random_distribution_cb).
  if (d == RandomDist::kZipf && (p <= 0 || p == 1.0)) {
    return "zipf:<theta> with theta > 0 and not 1.0 (fio's rule)";
  }
  if (d == RandomDist::kPareto && (p <= 0 || p >= 1)) {
    return "pareto:<power> with 0 < power < 1 (fio's rule)";
  }
  if (d == RandomDist::kNormal && (p < 0 || p >= 100)) {
    return "normal:<deviation> with 0 <= deviation < 100 (percent of the region)";
  }
  *dist = d;
  *param = p;
  *center = c;
  return "";
}

std::span<const IoEngineInfo> IoEngines() { return kEngines; }

const IoEngineInfo* FindIoEngine(v1::IoEngine e) {
  if (e == v1::IO_ENGINE_UNSPECIFIED) e = v1::PSYNC;
  for (const IoEngineInfo& i : kEngines) {
    if (i.proto == e) return &i;
  }
  return nullptr;
}

const IoEngineInfo* FindIoEngine(std::string_view name) {
  for (const IoEngineInfo& i : kEngines) {
    if (i.name == name || (!i.fio_name.empty() && i.fio_name == name)) return &i;
  }
  return nullptr;
}

std::string IoEngineNames() {
  std::vector<std::string> names;
  for (const IoEngineInfo& e : kEngines) names.emplace_back(e.name);
  return absl::StrJoin(names, ", ");
}

void ApplyFioFixups(v1::JobSpec& spec) {
  const uint32_t depth = spec.iodepth() ? spec.iodepth() : 1;
  if (spec.iodepth_batch_submit() == 0) spec.set_iodepth_batch_submit(depth);
  if (spec.iodepth_batch_complete_max() == 0) {
    spec.set_iodepth_batch_complete_max(std::max<uint32_t>(1, spec.iodepth_batch_complete_min()));
  }
}

JobResolution ResolveJob(const v1::JobSpec& written) {
  v1::JobSpec spec = written;
  ApplyFioFixups(spec);
  JobResolution r;
  ResolvedJob& j = r.job;
  std::vector<JobProblem>& out = r.problems;

  switch (spec.rw()) {
    case v1::READ:
      break;
    case v1::WRITE:
      j.reads = false;
      j.writes = true;
      break;
    case v1::RANDREAD:
      j.random = true;
      break;
    case v1::RANDWRITE:
      j.random = j.writes = true;
      j.reads = false;
      break;
    case v1::RANDRW:
      j.random = j.writes = true;
      break;
    case v1::READWRITE:
      j.writes = true;
      break;
    default:
      Problem(out, {"rw"}, absl::StrCat("unsupported rw value ", static_cast<int>(spec.rw())));
  }
  if (spec.rwmixread() > 100) {
    Problem(out, {"rwmixread"}, absl::StrCat("rwmixread must be 0..100, got ", spec.rwmixread()));
  }
  j.read_percent = !j.writes ? 100 : !j.reads ? 0 : std::min<uint32_t>(spec.rwmixread(), 100);

  const IoEngineInfo* engine = FindIoEngine(spec.ioengine());
  if (engine == nullptr) {
    Problem(out, {"ioengine"},
            absl::StrCat("unsupported ioengine value ", static_cast<int>(spec.ioengine())));
    engine = FindIoEngine(v1::PSYNC);
  }
  j.engine = engine->kind;
  j.engine_name = engine->name;
  j.engine_caps = engine->caps;
  const bool sync_engine = (engine->caps & kEngineSync) != 0;

  j.bs = spec.bs() ? spec.bs() : kFioDefaultBs;
  if (j.bs % kSectorSize != 0) {
    Problem(out, {"bs"}, absl::StrCat("bs must be a multiple of 512 (got ", j.bs, " bytes)"));
  }
  ResolveBlockSizes(spec, j, out);
  j.numjobs = spec.numjobs() ? spec.numjobs() : 1;
  if (j.numjobs > kMaxNumjobs) {
    Problem(out, {"numjobs"},
            absl::StrCat("numjobs ", j.numjobs, " is above the limit of ", kMaxNumjobs));
  }
  const uint32_t asked_depth = spec.iodepth() ? spec.iodepth() : 1;
  if (asked_depth > kMaxIodepth) {
    Problem(out, {"iodepth"},
            absl::StrCat("iodepth ", asked_depth, " is above the limit of ", kMaxIodepth));
  } else if (asked_depth > engine->max_depth) {
    Problem(out, {"iodepth", "ioengine"},
            absl::StrCat("iodepth ", asked_depth, " exceeds ", std::string(engine->name), "'s ",
                         std::string(engine->max_depth_why)));
  }
  // fio: the batch and completion settings are compared with the asked iodepth.
  if (spec.iodepth_batch_submit() > asked_depth) {
    Problem(out, {"iodepth_batch_submit", "iodepth"},
            absl::StrCat("iodepth_batch_submit (", spec.iodepth_batch_submit(),
                         ") is larger than iodepth (", asked_depth, ")"));
  }
  if (spec.iodepth_batch_complete_min() > spec.iodepth_batch_complete_max()) {
    Problem(out, {"iodepth_batch_complete_min", "iodepth_batch_complete_max"},
            absl::StrCat("iodepth_batch_complete_min (", spec.iodepth_batch_complete_min(),
                         ") is larger than iodepth_batch_complete_max (",
                         spec.iodepth_batch_complete_max(), ")"));
  }
  if (spec.iodepth_batch_complete_min() > asked_depth) {
    Problem(out, {"iodepth_batch_complete_min", "iodepth"},
            absl::StrCat("iodepth_batch_complete_min (", spec.iodepth_batch_complete_min(),
                         ") is larger than iodepth (", asked_depth, ")"));
  }
  // A synchronous engine has one I/O in flight whatever iodepth says (fio's fixup caps
  // iodepth at 1 for FIO_SYNCIO engines with a note, not an error).
  j.iodepth = sync_engine ? 1 : std::min(asked_depth, engine->max_depth);
  // After ApplyFioFixups; what a synchronous engine's depth of 1 leaves of them.
  j.batch_submit = std::clamp<uint32_t>(spec.iodepth_batch_submit(), 1, j.iodepth);
  j.complete_min = std::min(spec.iodepth_batch_complete_min(), j.iodepth);
  j.complete_max = std::clamp(std::max(spec.iodepth_batch_complete_max(), j.complete_min),
                              uint32_t{1}, j.iodepth);

  j.direct = spec.direct();
  j.hipri = spec.hipri();
  j.fixedbufs = spec.fixedbufs();
  j.registerfiles = spec.registerfiles();
  j.sqthread_poll = spec.sqthread_poll();
  const struct {
    std::string_view key;
    bool set;
    uint32_t cap;
  } switches[] = {{"hipri", j.hipri, kEngineHipri},
                  {"fixedbufs", j.fixedbufs, kEngineFixedBufs},
                  {"registerfiles", j.registerfiles, kEngineRegisterFiles},
                  {"sqthread_poll", j.sqthread_poll, kEngineSqThreadPoll}};
  for (const auto& sw : switches) {
    if (!sw.set || (engine->caps & sw.cap) != 0) continue;
    const std::string with = EnginesWith(sw.cap);
    if (with.find(',') == std::string::npos) {
      Problem(
          out, {sw.key, "ioengine"},
          absl::StrCat(std::string(sw.key), " is an ", with, " option; it needs ioengine: ", with));
    } else {
      Problem(out, {sw.key, "ioengine"},
              absl::StrCat(std::string(sw.key), " is not an option of ioengine ",
                           std::string(engine->name), "; it needs one of ", with));
    }
  }
  if (j.hipri && !j.direct) Problem(out, {"hipri", "direct"}, "hipri (polled I/O) needs direct=1");
  j.thread = spec.thread();

  j.time_based = spec.time_based();
  j.runtime_ns = spec.runtime_ns();
  j.ramp_ns = spec.ramp_time_ns();
  if (j.time_based && j.runtime_ns == 0) {
    Problem(out, {"runtime", "time_based"},
            "time_based=1 needs a runtime > 0 (otherwise the job never ends)");
  }
  j.size = spec.size();
  j.offset = spec.offset();
  j.offset_increment = spec.offset_increment();
  j.io_size = spec.io_size();
  CheckSectorAligned(spec, "size", j.size, out);
  CheckSectorAligned(spec, "offset", j.offset, out);
  CheckSectorAligned(spec, "offset_increment", j.offset_increment, out);
  const bool size_unaligned = spec.direct() && j.size % kSectorSize != 0;
  if (j.size != 0 && j.size < j.bs_max && !size_unaligned) {
    Problem(out, {"size", "bs"},
            absl::StrCat("size (", j.size, " bytes) is smaller than bs (", j.bs_max, " bytes)"));
  }
  j.cpus_allowed = spec.cpus_allowed();
  j.randseed = spec.randseed();
  j.random_map = !spec.norandommap();
  j.randrepeat = !spec.has_randrepeat() || spec.randrepeat();
  if (!spec.random_distribution().empty()) {
    const std::string why = ParseRandomDistribution(spec.random_distribution(), &j.distribution,
                                                    &j.dist_param, &j.dist_center, &j.zones);
    if (!why.empty()) {
      Problem(
          out, {"random_distribution"},
          absl::StrCat("random_distribution '", spec.random_distribution(), "': expected ", why));
    }
  }
  // fio: a non-uniform distribution disables the random map; blkbench's map covers blocks
  // of one size, so variable block sizes draw without it too (docs/matrix.md).
  if (j.distribution != RandomDist::kRandom || j.variable_bs() ||
      j.sizes[0].align != j.sizes[0].min) {
    j.random_map = false;
  }
  ResolvePacingAndPriority(spec, j, out);
  CheckJobBounds(spec, j.numjobs, out);
  CheckLogOptions(spec, j, out);
  return r;
}

absl::StatusOr<ResolvedJob> ResolveJobOrError(const v1::JobSpec& spec) {
  JobResolution r = ResolveJob(spec);
  if (r.problems.empty()) return std::move(r.job);
  std::vector<std::string> lines;
  for (const JobProblem& p : r.problems) {
    lines.push_back(absl::StrCat("job option ", std::string(p.keys.front()), ": ", p.message));
  }
  return absl::InvalidArgumentError(absl::StrJoin(lines, "; "));
}

bool IsSimulated(std::string_view device_class_or_kernel) {
  return device_class_or_kernel.substr(0, kSimPrefix.size()) == kSimPrefix;
}

std::string SimulatedJobProblem(const ResolvedJob& job) {
  if ((job.engine_caps & kEngineNoIo) == 0) return "";
  return absl::StrCat("ioengine ", std::string(job.engine_name),
                      " issues no I/O, so a simulated device has nothing to time; it runs on "
                      "real devices only");
}

v1::CellSpec CellForRepeat(const v1::CellSpec& cell, uint32_t repeat) {
  v1::CellSpec out = cell;
  out.mutable_job()->set_randseed(cell.job().randseed() + repeat);
  return out;
}

}  // namespace blkbench
