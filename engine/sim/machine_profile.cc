// Machine profile loading: YAML from engine/profiles/, strictly validated (unknown or
// missing keys are errors, so a typo cannot silently fall back to a default).
#include "engine/sim/machine_profile.h"

#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/bounded_file.h"
#include "common/sim_vocabulary.h"
#include "common/yaml/yaml.h"

namespace blkbench::engine {
namespace {

// Reads one YAML mapping, remembering the first error and which keys were consumed.
class MapReader {
 public:
  MapReader(const yaml::Node& node, std::string prefix, const std::string& source,
            absl::Status* status)
      : node_(node), prefix_(std::move(prefix)), source_(source), status_(status) {
    if (status_->ok() && !node_.IsMap()) Fail(node_, "", "expected a mapping");
  }

  void Str(const char* key, std::string* out, bool required = true) {
    yaml::Node v = Get(key, required);
    if (!v) return;
    if (v.IsScalar()) {
      *out = v.Scalar();
    } else {
      Fail(v, key, "expected a string");
    }
  }

  void Int(const char* key, int* out, int min, int max) {
    yaml::Node v = Get(key, true);
    if (!v) return;
    const std::optional<int64_t> x = v.AsInt();
    if (!x) {
      Fail(v, key, "expected an integer");
    } else if (*x < min || *x > max) {
      Fail(v, key, absl::StrCat("must be in [", min, ", ", max, "], got ", *x));
    } else {
      *out = static_cast<int>(*x);
    }
  }

  void Ns(const char* key, SimTime* out, bool required = true) {
    yaml::Node v = Get(key, required);
    if (v) DecodeNs(v, key, out);
  }

  void Double(const char* key, double* out, double min, double max, bool required = true) {
    yaml::Node v = Get(key, required);
    if (!v) return;
    const std::optional<double> x = v.AsDouble();
    if (!x) {
      Fail(v, key, "expected a number");
    } else if (!(*x >= min && *x <= max)) {
      Fail(v, key, absl::StrCat("must be in [", min, ", ", max, "], got ", *x));
    } else {
      *out = *x;
    }
  }

  // A matrix of ns values, as a list of equal-length lists.
  void NsMatrix(const char* key, std::vector<SimTime>* out, int rows) {
    yaml::Node v = Get(key, false);
    if (!v) return;
    if (!v.IsSequence() || static_cast<int>(v.size()) != rows) {
      return Fail(v, key, absl::StrCat("expected a list of ", rows, " rows"));
    }
    out->assign(static_cast<size_t>(rows) * rows, 0);
    for (int r = 0; r < rows; ++r) {
      yaml::Node row = v[static_cast<size_t>(r)];
      if (!row.IsSequence() || static_cast<int>(row.size()) != rows) {
        return Fail(row, key, absl::StrCat("row ", r, ": expected ", rows, " values"));
      }
      for (int c = 0; c < rows; ++c)
        DecodeNs(row[static_cast<size_t>(c)], key, &(*out)[r * rows + c]);
    }
  }

  MapReader Sub(const char* key) {
    yaml::Node v = Get(key, true);
    MapReader sub(v ? v : node_, Key(key), source_, status_);
    // A block mapping's own mark is its first key; errors about the whole mapping
    // (a missing key) point at the line naming it instead.
    if (v && node_.IsMap()) {
      for (const auto& [k, value] : node_.entries()) {
        if (k.Scalar() == key) sub.line_ = k.mark().line;
      }
    }
    return sub;
  }

  // Calls fn(key, reader of its mapping) for every key of this mapping, in file order: a
  // mapping whose keys are names (schedulers) rather than a fixed set.
  template <typename Fn>
  void Entries(Fn fn) {
    if (!status_->ok() || !node_.IsMap()) return;
    for (const auto& [k, value] : node_.entries()) {
      const std::string& key = k.Scalar();
      used_.insert(key);
      MapReader sub(value, Key(key), source_, status_);
      sub.line_ = k.mark().line;
      fn(key, std::move(sub));
      if (!status_->ok()) return;
    }
  }

  // Reports keys present in the file but never read.
  void Finish() {
    if (!status_->ok() || !node_.IsMap()) return;
    for (const auto& [k, value] : node_.entries()) {
      const std::string& key = k.Scalar();
      if (!used_.count(key)) Fail(k, key, "unknown key");
    }
  }

  void Fail(const yaml::Node& at, std::string_view key, std::string_view why) {
    FailAt(at.mark().line, key, why);
  }

  // `line` is 1-based; 0 when unknown.
  void FailAt(int line, std::string_view key, std::string_view why) {
    if (!status_->ok()) return;
    *status_ = absl::InvalidArgumentError(absl::StrCat(
        source_, ":", line, ": ", key.empty() ? prefix_ : Key(key), ": ", std::string(why)));
  }

 private:
  std::string Key(std::string_view key) const {
    return prefix_.empty() ? std::string(key) : absl::StrCat(prefix_, ".", std::string(key));
  }

  yaml::Node Get(const char* key, bool required) {
    used_.insert(key);
    if (!status_->ok() || !node_.IsMap()) return yaml::Node();
    yaml::Node v = node_[std::string_view(key)];
    if (!v && required) FailAt(line_ > 0 ? line_ : node_.mark().line, key, "missing");
    return v;
  }

  void DecodeNs(const yaml::Node& v, const char* key, SimTime* out) {
    const std::optional<int64_t> x = v.AsInt();
    if (!x) {
      Fail(v, key, "expected an integer number of ns");
    } else if (*x < 0 || *x > 100'000'000) {
      Fail(v, key, absl::StrCat("must be in [0, 1e8] ns, got ", *x));
    } else {
      *out = static_cast<SimTime>(*x);
    }
  }

  yaml::Node node_;
  std::string prefix_;
  const std::string& source_;
  absl::Status* status_;
  std::set<std::string> used_;
  int line_ = 0;  // 1-based line of the key naming this mapping, if known
};

// root[a][b] through const access, for error positions.
yaml::Node Child(const yaml::Node& root, const char* a, const char* b) {
  return root[std::string_view(a)][std::string_view(b)];
}

void ReadLock(MapReader locks, LockCosts* out) {
  locks.Double("missed_lines", &out->missed_lines, 0, 1000);
  locks.Finish();
}

}  // namespace

const SchedulerCosts* MachineProfile::CostsOf(std::string_view scheduler) const {
  const auto it = schedulers.find(scheduler);
  return it == schedulers.end() ? nullptr : &it->second;
}

SimTime MachineProfile::LineTransferNs(const CpuPlace& from, const CpuPlace& to) const {
  assert(from.cpu >= 0 && from.cpu < cpus() && to.cpu >= 0 && to.cpu < cpus());
  if (from.cpu == to.cpu) return 0;
  if (from.core == to.core) return coherence.same_core;
  if (from.ccx == to.ccx) return coherence.same_ccx;
  if (from.node == to.node) return coherence.same_node;
  if (coherence.node_distance.empty()) return coherence.remote_node;
  return coherence.node_distance[static_cast<size_t>(from.node) * numa_nodes() + to.node];
}

absl::StatusOr<MachineProfile> ParseMachineProfile(std::string_view yaml,
                                                   std::string_view source_name) {
  std::string source(source_name);
  // Profiles may arrive inline in a matrix: bounded like every user text.
  absl::StatusOr<yaml::Node> parsed =
      yaml::ParseOrStatus(yaml, source, yaml::Limits{.max_bytes = kMaxMachineProfileBytes});
  if (!parsed.ok()) return parsed.status();
  const yaml::Node root = *std::move(parsed);
  absl::Status status;
  MachineProfile p;
  p.source = source;
  MapReader top(root, "", source, &status);
  top.Str("name", &p.name);
  top.Str("description", &p.description, /*required=*/false);

  MapReader topo = top.Sub("topology");
  topo.Int("cores", &p.topology.cores, 1, 4096);
  topo.Int("threads_per_core", &p.topology.threads_per_core, 1, 8);
  topo.Int("cores_per_ccx", &p.topology.cores_per_ccx, 1, 4096);
  topo.Int("cores_per_node", &p.topology.cores_per_node, 1, 4096);
  if (status.ok()) {
    const Topology& t = p.topology;
    if (t.cores % t.cores_per_node != 0) {
      topo.Fail(Child(root, "topology", "cores_per_node"), "cores_per_node", "must divide cores");
    } else if (t.cores_per_node % t.cores_per_ccx != 0) {
      topo.Fail(Child(root, "topology", "cores_per_ccx"), "cores_per_ccx",
                "must divide cores_per_node (a CCX never spans nodes)");
    }
  }
  topo.Finish();

  MapReader stage = top.Sub("stage_ns");
  stage.Ns("submit", &p.stage.submit);
  stage.Ns("request_alloc", &p.stage.request_alloc);
  stage.Ns("tag_get_single", &p.stage.tag_get_single);
  stage.Ns("tag_get_batch_base", &p.stage.tag_get_batch_base);
  stage.Ns("tag_get_batch_per_request", &p.stage.tag_get_batch_per_request);
  stage.Ns("plug_flush", &p.stage.plug_flush);
  stage.Ns("elevator_bio_merge", &p.stage.elevator_bio_merge);
  stage.Ns("elevator_insert", &p.stage.elevator_insert);
  stage.Ns("driver_queue_rq", &p.stage.driver_queue_rq);
  stage.Ns("completion", &p.stage.completion);
  stage.Finish();

  MapReader coh = top.Sub("coherence_ns");
  coh.Ns("same_core", &p.coherence.same_core);
  coh.Ns("same_ccx", &p.coherence.same_ccx);
  coh.Ns("same_node", &p.coherence.same_node);
  coh.Ns("remote_node", &p.coherence.remote_node);
  if (status.ok()) coh.NsMatrix("node_distance", &p.coherence.node_distance, p.numa_nodes());
  coh.Ns("lock_uncontended", &p.coherence.lock_uncontended);
  coh.Finish();

  MapReader locks = top.Sub("locks");
  locks.Double("handoff_transfers", &p.handoff_transfers, 0, 8);
  ReadLock(locks.Sub("generic"), &p.generic_lock);
  locks.Finish();

  // Every scheduler's costs under its name; which schedulers a run needs is the engine's
  // business (SchedPath::Init names the one a profile lacks).
  MapReader scheds = top.Sub("schedulers");
  scheds.Entries([&](const std::string& name, MapReader costs) {
    SchedulerCosts& s = p.schedulers[name];
    costs.Ns("dispatch_ns", &s.dispatch);
    double lines = -1;
    costs.Double("lock_missed_lines", &lines, 0, 1000, /*required=*/false);
    if (lines >= 0) s.lock = LockCosts{.missed_lines = lines};
    costs.Finish();
  });

  MapReader collapse = top.Sub("collapse");
  collapse.Double("rho_onset", &p.collapse.rho_onset, 0, 0.999);
  collapse.Double("max_multiplier", &p.collapse.max_multiplier, 1, 20);
  collapse.Double("half_waiters", &p.collapse.half_waiters, 0, 1e6);
  collapse.Ns("window_ns", &p.collapse.window_ns);
  if (status.ok() && p.collapse.window_ns == 0) {
    collapse.Fail(Child(root, "collapse", "window_ns"), "window_ns", "must be > 0");
  }
  collapse.Finish();

  MapReader wake = top.Sub("wakeup_ns");
  wake.Ns("median", &p.wakeup.median);
  wake.Ns("p90", &p.wakeup.p90);
  if (status.ok() && p.wakeup.p90 < p.wakeup.median) {
    wake.Fail(Child(root, "wakeup_ns", "p90"), "p90", "must be >= median");
  }
  wake.Finish();
  top.Finish();
  if (!status.ok()) return status;
  return p;
}

std::vector<std::string> MachineProfileSearchPath(const std::string& executable) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("BLKBENCH_ENGINE_PROFILES_DIR"); env && *env) {
    dirs.emplace_back(env);
    return dirs;
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::weakly_canonical(executable, ec);
  const std::filesystem::path build = std::filesystem::weakly_canonical(BLKBENCH_BUILD_DIR, ec);
  // A binary inside the build tree uses the source tree's profiles, never an installed
  // copy that may be older.
  const std::string exe_text = exe.string(), build_text = build.string();
  if (!build_text.empty() && exe_text.rfind(build_text + "/", 0) == 0) {
    dirs.emplace_back(BLKBENCH_SOURCE_PROFILES_DIR);
    return dirs;
  }
  // Installed (cmake --install, the .deb, or a tree unpacked anywhere): <prefix>/bin/x
  // finds <prefix>/share/blkbench/profiles; then the configured prefix.
  if (!exe.empty()) {
    dirs.push_back((exe.parent_path().parent_path() / "share/blkbench/profiles").string());
  }
  dirs.emplace_back(BLKBENCH_INSTALLED_PROFILES_DIR);
  return dirs;
}

std::string MachineProfilesDir() {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  const std::vector<std::string> dirs = MachineProfileSearchPath(self);
  for (const std::string& dir : dirs) {
    if (std::filesystem::is_directory(dir, ec)) return dir;
  }
  return dirs.front();
}

absl::StatusOr<MachineProfile> LoadMachineProfile(std::string_view name_view) {
  // (absl::string_view is not std::string_view in Debian's abseil: go through string.)
  const std::string name(name_view);
  constexpr std::string_view kNameChars =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
  if (name.empty() || name.size() > 64 || name[0] == '.' || IsMachineProfilePath(name) ||
      name.find_first_not_of(kNameChars) != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "machine profile '", name,
        "': expected a profile name (up to 64 letters, digits, '.', '_', '-'; e.g. desktop-16). "
        "A profile file is read by the blkbench CLI and travels with the matrix: no path "
        "from a matrix is opened here"));
  }
  const std::string path = absl::StrCat(MachineProfilesDir(), "/", name, ".yaml");
  absl::StatusOr<std::string> text =
      ReadBoundedRegularFile(path, kMaxMachineProfileBytes, "machine profile");
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(
        absl::StrCat("machine profile '", name, "': no ", path,
                     " (set BLKBENCH_ENGINE_PROFILES_DIR to the engine/profiles folder)"));
  }
  if (!text.ok()) return text.status();
  return ParseMachineProfile(*text, path);
}

}  // namespace blkbench::engine
