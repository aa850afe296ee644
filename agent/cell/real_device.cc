// RealDevicePreparation: a real device made ready for one run and left as found; see
// real_device.h.
#include "agent/cell/real_device.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/cgroup/io_stats.h"
#include "agent/device/device_facts.h"
#include "agent/device/diskstats.h"
#include "common/cell_jobs.h"

namespace blkbench {
namespace {

absl::Status Refused(absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat("refused: ", why));
}

}  // namespace

RealDevicePreparation::RealDevicePreparation(std::string device_class,
                                             std::vector<AllowlistEntry> allowlist,
                                             const DeviceIdentityRegistry& identities,
                                             QueueSettingsJournal& journal, CgroupManager& cgroups,
                                             RealDeviceOptions options)
    : device_class_(std::move(device_class)),
      allowlist_(std::move(allowlist)),
      identities_(identities),
      journal_(journal),
      cgroups_(cgroups),
      options_(std::move(options)) {}

absl::StatusOr<PreparedDevice> RealDevicePreparation::Prepare(const CellRun& run) {
  // Wrong-disk protection before the first write: resolve (symlinks may have moved),
  // check, hold with O_EXCL, and check again through the held descriptor.
  absl::StatusOr<ExclusiveHold> hold = PrepareExclusiveWrite(allowlist_, run.device);
  if (!hold.ok()) return Refused(hold.status().message());
  const std::string resolved = hold->path();

  // Under the hold, before anything is changed: still the device the agent registered?
  absl::StatusOr<DeviceIdentity> identity = ReadDeviceIdentity(run.device);
  if (!identity.ok()) {
    return Refused(
        absl::StrCat("reading the identity of ", run.device, ": ", identity.status().message()));
  }
  if (identity->resolved != resolved) {
    return Refused(absl::StrCat(run.device, " resolved to ", identity->resolved, " while ",
                                resolved, " was held"));
  }
  if (absl::Status same = identities_.Check(run.device, *identity); !same.ok()) {
    return Refused(same.message());
  }

  absl::StatusOr<v1::DeviceFacts> facts = ReadDeviceFacts(resolved, device_class_);
  if (!facts.ok()) return facts.status();
  facts->set_path(run.device);

  // Queue settings: originals journaled durably first, restored by Release.
  v1::QueueSettings applied;
  if (absl::Status s = journal_.Apply(*facts, run.cell.queue(), &applied); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("applying queue settings: ", s.message()));
  }
  facts_ = *facts;

  // The cell's cgroups, journaled before they are made.
  if (run.cell.cgroup_layout().kind() != v1::CgroupLayout::ROOT) {
    // Each thread in its job's group: named jobs may name theirs (common/cell_jobs.h).
    auto built = cgroups_.Build(run.name, run.cell.cgroup_layout(),
                                static_cast<uint32_t>(TotalNumjobs(run.cell)),
                                run.cell.job().thread(), ThreadGroups(run.cell));
    if (!built.ok()) {
      std::string error =
          absl::StrCat("cgroup layout '", run.cell.cgroup(), "': ", built.status().message());
      if (absl::Status s = RestoreQueue(); !s.ok()) {
        absl::StrAppend(&error, "; restoring queue settings: ", s.message());
      }
      return absl::Status(built.status().code(), error);
    }
    placement_ = std::move(*built);
  }

  // The device number, for its counters and its trace; none for a regular file.
  std::optional<std::pair<uint32_t, uint32_t>> devno;
  if (facts->is_block()) {
    struct stat st;
    if (stat(resolved.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
      devno.emplace(major(st.st_rdev), minor(st.st_rdev));
    }
  }

  // Undoes the cgroups and the queue settings when a later step fails.
  auto undo = [&](const absl::Status& why) {
    std::string error(why.message());
    if (placement_ != nullptr) {
      if (absl::Status s = placement_->Remove(); !s.ok()) {
        absl::StrAppend(&error, "; removing cgroups: ", s.message());
      }
      placement_.reset();
    }
    if (absl::Status s = RestoreQueue(); !s.ok()) {
      absl::StrAppend(&error, "; restoring queue settings: ", s.message());
    }
    return absl::Status(why.code(), error);
  };

  // The block layer's own evidence, last, so it covers the job and little else.
  if (run.cell.trace() > 0) {
    if (!devno) {
      return undo(absl::FailedPreconditionError(absl::StrCat(
          "trace: ", run.cell.trace(), " needs a block device; ", run.device, " is not one")));
    }
    BlockTraceOptions topt;
    topt.tracefs = options_.tracefs;
    topt.instance = absl::StrCat("blkbench-", run.name);
    topt.major = devno->first;
    topt.minor = devno->second;
    topt.text = run.trace;  // blkbench run --trace: the blkparse text as well
    absl::StatusOr<std::unique_ptr<BlockTrace>> trace =
        BlockTrace::Start(topt, journal_.settings_journal());
    if (!trace.ok()) return undo(trace.status());
    trace_ = *std::move(trace);
  }
  trace_error_ = absl::OkStatus();

  PreparedDevice d;
  // The device's own counters from here to the end of the run (iostat over the run).
  std::function<void(v1::RunResult&)> device_stats;
  if (devno) {
    const uint32_t ma = devno->first, mi = devno->second;
    if (absl::StatusOr<DiskStats> before = ReadDiskStats(ma, mi); before.ok()) {
      // Per interval: the deltas since the previous sample (the first since this reading,
      // so with ramp_time it holds the ramp's I/O too); the intervals add up to the run's
      // delta below, which starts from the same reading. One read of /proc/diskstats each.
      d.annotate_sample = [ma, mi, last = *before](v1::Sample& sample) mutable {
        absl::StatusOr<DiskStats> now = ReadDiskStats(ma, mi);
        if (!now.ok()) return;  // the sample goes without; the next one covers both
        // A re-created device (counters went backwards): none this time, then from here.
        if (!IntervalDelta(last, *now, sample.mutable_device())) sample.clear_device();
        last = *std::move(now);
      };
      device_stats = [ma, mi, before = *before](v1::RunResult& result) {
        absl::StatusOr<DiskStats> after = ReadDiskStats(ma, mi);
        if (!after.ok()) return;
        const double elapsed = static_cast<double>(after->read_at_ns - before.read_at_ns) / 1e9;
        const DiskStatsDelta delta = Delta(before, *after, elapsed);
        v1::DeviceStats* s = result.mutable_device_stats();
        s->set_elapsed_s(delta.elapsed_s);
        s->set_reads(delta.reads);
        s->set_writes(delta.writes);
        s->set_reads_merged(delta.reads_merged);
        s->set_writes_merged(delta.writes_merged);
        s->set_read_bytes(delta.read_bytes);
        s->set_write_bytes(delta.write_bytes);
        s->set_r_await_ms(delta.r_await_ms);
        s->set_w_await_ms(delta.w_await_ms);
        s->set_aqu_sz(delta.aqu_sz);
        s->set_util_pct(delta.util_pct);
      };
    }
  }
  // Each group's own I/O on the device, under the engine's keys (cgroup.<g>.ios, groups
  // numbered 1..n in layout order), read before Release removes the groups.
  std::string dev;
  if (devno) dev = absl::StrCat(devno->first, ":", devno->second);
  if (device_stats || trace_ != nullptr || (placement_ != nullptr && !dev.empty())) {
    d.annotate = [this, dev, device_stats = std::move(device_stats)](v1::RunResult& result) {
      if (device_stats) device_stats(result);
      if (placement_ != nullptr && !dev.empty()) {
        const std::vector<std::string>& dirs = placement_->group_dirs();
        for (size_t g = 0; g < dirs.size(); ++g) {
          absl::StatusOr<GroupIoStats> stats =
              ReadGroupIoStats(placement_->version(), dirs[g], dev);
          if (!stats.ok()) continue;  // no counters in this hierarchy: nothing to report
          auto& internals = *result.mutable_internals();
          internals[absl::StrCat("cgroup.", g + 1, ".ios")] = static_cast<double>(stats->ios());
          internals[absl::StrCat("cgroup.", g + 1, ".bytes")] = static_cast<double>(stats->bytes());
        }
      }
      if (trace_ == nullptr) return;
      absl::StatusOr<BlockTraceSummary> summary = StopTrace();
      if (!summary.ok()) {
        trace_error_ = summary.status();
        return;
      }
      for (const auto& [key, value] : summary->Internals()) {
        (*result.mutable_internals())[key] = value;
      }
    };
  }
  d.io_path = resolved;
  d.facts = *std::move(facts);
  d.applied = std::move(applied);
  if (placement_ != nullptr) {
    d.place_job = [p = placement_.get()](uint32_t job, int tid) { return p->Place(job, tid); };
  }
  hold_.emplace(*std::move(hold));
  return d;
}

absl::Status RealDevicePreparation::RestoreQueue() {
  // Regular files have no queue settings, so nothing was journaled for them.
  return facts_.is_block() ? journal_.Restore(facts_.kernel_name()) : absl::OkStatus();
}

absl::StatusOr<BlockTraceSummary> RealDevicePreparation::StopTrace() {
  if (trace_ == nullptr) return absl::FailedPreconditionError("no block trace running");
  absl::StatusOr<BlockTraceSummary> summary = trace_->Stop();
  trace_.reset();
  return summary;
}

absl::Status RealDevicePreparation::Release() {
  std::string error;
  if (!trace_error_.ok())
    absl::StrAppend(&error, "stopping the block trace: ", trace_error_.message());
  if (trace_ != nullptr) {
    if (absl::StatusOr<BlockTraceSummary> s = StopTrace(); !s.ok()) {
      absl::StrAppend(&error, error.empty() ? "" : "; ",
                      "stopping the block trace: ", s.status().message());
    }
  }
  if (placement_ != nullptr) {
    if (absl::Status s = placement_->Remove(); !s.ok()) {
      absl::StrAppend(&error, error.empty() ? "" : "; ", "removing cgroups: ", s.message());
    }
    placement_.reset();
  }
  if (absl::Status s = RestoreQueue(); !s.ok()) {
    absl::StrAppend(&error, error.empty() ? "" : "; ", "restoring queue settings: ", s.message());
  }
  hold_.reset();
  return error.empty() ? absl::OkStatus() : absl::InternalError(error);
}

}  // namespace blkbench
