// The guests of `blkbench run --vm` and the matrix over their kernels; see run_vm.h.
#include "cli/run_vm.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/vm/vm_hosts.h"
#include "common/placement.h"
#include "common/resolved_job.h"
#include "common/suggest.h"
#include "common/units.h"
#include "common/vm/kernel.h"
#include "workloads/format.h"
#include "workloads/job_options.h"

namespace blkbench {
namespace {

// Bounds of the flags, as agent.yaml's vm_hosts: takes them (agent/config.cc).
constexpr int kMaxVcpus = 64;
constexpr uint64_t kMinMemoryMiB = 256;
constexpr uint64_t kMaxMemoryMiB = 65536;
constexpr uint64_t kMinDiskBytes = uint64_t{1} << 20;
constexpr uint64_t kMaxQueues = 64;
constexpr char kKernelAxis[] = "kernel";

// The keys each kind takes after its ':'.
std::vector<std::string_view> KeysOf(const std::string& kind) {
  if (kind == "null_blk") return {};
  if (kind == "hdd") return {"size", "class"};
  return {"size", "queues", "class"};  // nvme, virtio
}

std::string KindList() {
  return absl::StrCat(kVmKinds[0], ", ", kVmKinds[1], ", ", kVmKinds[2], " or ", kVmKinds[3]);
}

absl::Status VmError(const std::string& arg, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("--vm '", arg, "': ", what));
}

// One KEY=VALUE of a --vm SPEC into `disk`.
absl::Status ApplyKey(const std::string& arg, const std::string& key, const std::string& value,
                      VmDiskConfig& disk) {
  if (key == "size") {
    absl::StatusOr<uint64_t> size = ParseSize(value);
    if (!size.ok() || *size < kMinDiskBytes) {
      return VmError(arg, absl::StrCat("size: expected a size like 1g or 512m, at least 1m, got '",
                                       value, "'"));
    }
    disk.size_bytes = *size;
  } else if (key == "queues") {
    absl::StatusOr<uint64_t> queues = ParseUint(value);
    if (!queues.ok() || *queues > kMaxQueues) {
      return VmError(arg, absl::StrCat("queues: expected an integer from 0 (qemu's default) to ",
                                       kMaxQueues, ", got '", value, "'"));
    }
    disk.queues = static_cast<int>(*queues);
  } else {               // class
    v1::CellSpec probe;  // the matrix's own rule for a device class
    if (IsSimulated(value) || !workloads::FindOption("device_class")->Apply(value, probe)) {
      return VmError(arg, absl::StrCat("class: expected a device class such as nvme or ssd "
                                       "(not a sim: one), got '",
                                       value, "'"));
    }
    disk.device_class = value;
  }
  return absl::OkStatus();
}

// One --vm: a disk for `disks`, or null_blk.
absl::Status ParseVm(const std::string& arg, std::vector<VmDiskConfig>& disks, bool& null_blk) {
  const size_t colon = arg.find(':');
  const std::string kind = arg.substr(0, colon);
  const std::vector<std::string_view> kinds(std::begin(kVmKinds), std::end(kVmKinds));
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    return VmError(arg,
                   absl::StrCat("unknown kind '", kind, "'", DidYouMean(kind, kinds), "; expected ",
                                KindList(), ", then optionally :KEY=VALUE,..."));
  }
  const std::vector<std::string_view> keys = KeysOf(kind);
  std::vector<std::string> key_names(keys.begin(), keys.end());
  const std::string spec = colon == std::string::npos ? "" : arg.substr(colon + 1);
  if (kind == "null_blk") {
    if (null_blk) return VmError(arg, "null_blk is given twice (one per guest)");
    if (!spec.empty()) {
      return VmError(arg,
                     "null_blk takes no keys: its parameters are the cell's device: null_blk: "
                     "keys (submit_queues, hw_queue_depth, ...)");
    }
    null_blk = true;
    return absl::OkStatus();
  }
  VmDiskConfig disk;
  disk.kind = kind;
  std::set<std::string> seen;
  for (const std::string& kv :
       std::vector<std::string>(absl::StrSplit(spec, ',', absl::SkipEmpty()))) {
    const size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    if (std::find(key_names.begin(), key_names.end(), key) == key_names.end()) {
      return VmError(
          arg, absl::StrCat("unknown key '", key, "'", DidYouMean(key, keys), "; valid keys for ",
                            kind, ": ", absl::StrJoin(key_names, ", ")));
    }
    if (eq == std::string::npos) {
      return VmError(arg, absl::StrCat("expected ", key, "=VALUE, got '", kv, "'"));
    }
    if (!seen.insert(key).second) return VmError(arg, absl::StrCat(key, " is given twice"));
    if (absl::Status s = ApplyKey(arg, key, kv.substr(eq + 1), disk); !s.ok()) return s;
  }
  // Offered as its kind unless told otherwise (not as the guest would detect it: a
  // matrix's `nvme` must find the nvme disk whatever the guest makes of it).
  if (disk.device_class.empty()) disk.device_class = kind;
  disks.push_back(std::move(disk));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<VmHostConfig>> VmHostsFromFlags(const RunVmFlags& flags) {
  if (flags.kernels.empty()) {
    return absl::InvalidArgumentError(
        "--vm needs --kernel SPEC, the kernel the guest boots (deb:6.12*, "
        "deb:linux-image-6.1.0-57-amd64 or PATH/bzImage[:MODULES_DIR]); repeat it to compare "
        "kernels");
  }
  if (flags.vms.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--kernel needs --vm KIND[:SPEC], the guest's devices (", KindList(), ")"));
  }
  VmHostConfig shape;
  shape.accel = "auto";
  if (!flags.vcpus.empty() && (!absl::SimpleAtoi(flags.vcpus, &shape.vcpus) || shape.vcpus < 1 ||
                               shape.vcpus > kMaxVcpus)) {
    return absl::InvalidArgumentError(absl::StrCat("--vcpus: expected an integer from 1 to ",
                                                   kMaxVcpus, ", got '", flags.vcpus, "'"));
  }
  if (!flags.memory.empty()) {
    absl::StatusOr<uint64_t> bytes = ParseSize(flags.memory);
    const uint64_t mib = bytes.ok() ? *bytes >> 20 : 0;
    if (!bytes.ok() || (*bytes & ((uint64_t{1} << 20) - 1)) != 0 || mib < kMinMemoryMiB ||
        mib > kMaxMemoryMiB) {
      return absl::InvalidArgumentError(
          absl::StrCat("--memory: expected a size in whole MiB from 256m to 64g, e.g. 2g, got '",
                       flags.memory, "'"));
    }
    shape.memory_mb = static_cast<int>(mib);
  }
  for (const std::string& arg : flags.vms) {
    if (absl::Status s = ParseVm(arg, shape.disks, shape.null_blk); !s.ok()) return s;
  }
  std::vector<VmHostConfig> hosts;
  std::set<std::string> kernels;
  for (const std::string& kernel : flags.kernels) {
    absl::StatusOr<vm::KernelSpec> spec = vm::ParseKernelSpec(kernel);
    if (!spec.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kernel '", kernel, "': ", spec.status().message()));
    }
    // `--kernel 6.12*` is a path to a file called "6.12*": most likely deb: was meant.
    if (spec->kind == vm::KernelSpec::Kind::kLocal && access(spec->image.c_str(), R_OK) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kernel '", kernel, "': no kernel image '", spec->image, "' (",
                       strerror(errno), "); a Debian kernel is --kernel deb:", spec->image));
    }
    if (!kernels.insert(kernel).second) {
      return absl::InvalidArgumentError(absl::StrCat("--kernel '", kernel, "' is given twice"));
    }
    VmHostConfig h = shape;
    h.name = absl::StrCat("k", hosts.size());
    h.kernel = kernel;
    hosts.push_back(std::move(h));
  }
  return hosts;
}

std::vector<std::string> VmDeviceClasses(const VmHostConfig& host) {
  std::vector<std::string> out;
  if (host.null_blk) out.emplace_back("null_blk");
  for (const VmDiskConfig& d : host.disks) {
    const std::string& c = d.device_class.empty() ? d.kind : d.device_class;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

std::string CellsWithoutVmClass(const workloads::Matrix& m, const std::string& path,
                                const std::vector<std::string>& classes) {
  // By class, so a class missing for many cells is said once.
  std::map<std::string, std::vector<const v1::CellSpec*>> missing;
  for (const v1::CellSpec& cell : m.cells) {
    const std::string& cls = cell.target().device_class();
    if (std::find(classes.begin(), classes.end(), cls) == classes.end()) {
      missing[cls].push_back(&cell);
    }
  }
  std::string out;
  for (const auto& [cls, cells] : missing) {
    const bool is_kind =
        std::find(std::begin(kVmKinds), std::end(kVmKinds), cls) != std::end(kVmKinds);
    absl::StrAppend(&out, path, ": cell ", cells[0]->index(), " (", workloads::CellLabel(*cells[0]),
                    ")", cells.size() > 1 ? absl::StrCat(" and ", cells.size() - 1, " more") : "",
                    " target", cells.size() > 1 ? "" : "s", " device class '", cls,
                    "', which no --vm device is (they are: ", absl::StrJoin(classes, ", "), "); ",
                    is_kind
                        ? absl::StrCat("add --vm ", cls)
                        : absl::StrCat("offer a disk as that class, e.g. --vm nvme:class=", cls),
                    "\n");
  }
  return out;
}

workloads::Matrix WithKernelAxis(const workloads::Matrix& m,
                                 const std::vector<std::string>& releases) {
  if (releases.size() < 2 || std::find(m.axes.begin(), m.axes.end(), kKernelAxis) != m.axes.end()) {
    return m;
  }
  const workloads::OptionDef* kernel = workloads::FindOption(kKernelAxis);
  workloads::Matrix out = m;
  out.axes.insert(out.axes.begin(), kKernelAxis);
  out.cells.clear();
  std::vector<bool> placed(m.cells.size(), false);
  for (const std::string& release : releases) {
    for (const v1::CellSpec& cell : m.cells) {
      if (!KernelMatches(cell.target().kernel(), release)) continue;
      placed[cell.index()] = true;
      v1::CellSpec c = cell;
      c.clear_axes();
      v1::AxisValue* axis = c.add_axes();
      axis->set_key(kKernelAxis);
      axis->set_value(release);
      for (const v1::AxisValue& a : cell.axes()) *c.add_axes() = a;
      kernel->Apply(release, c);  // a release is never empty: always applies
      c.set_index(static_cast<uint32_t>(out.cells.size()));
      out.cells.push_back(std::move(c));
    }
  }
  if (out.cells.empty()) return m;  // no cell matches any of the kernels
  for (const v1::CellSpec& cell : m.cells) {
    if (placed[cell.index()]) continue;
    v1::CellSpec c = cell;
    c.set_index(static_cast<uint32_t>(out.cells.size()));
    out.cells.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> GuestReleases(const std::vector<VmHostConfig>& hosts,
                                       const DeviceOffer& offer, std::ostream& progress,
                                       const std::string& who) {
  std::vector<std::string> releases;
  for (const VmHostConfig& h : hosts) {
    const v1::VmFacts* vm = nullptr;
    for (const v1::DeviceFacts& f : offer.offered) {
      if (f.has_vm() && f.vm().name() == h.name) vm = &f.vm();
    }
    releases.push_back(vm == nullptr ? "" : vm->release());
    if (vm == nullptr) continue;
    char boot_s[32];
    snprintf(boot_s, sizeof(boot_s), "%.1f", static_cast<double>(vm->boot_ms()) / 1000);
    progress << who << h.name << ": " << vm->release() << " (--kernel " << h.kernel
             << ") booted in " << boot_s << " s; " << vm->accel() << ", qemu " << vm->qemu_version()
             << ", " << vm->vcpus() << " vCPUs, " << vm->memory_mb() << " MiB\n";
  }
  return releases;
}

std::string KernelOf(const std::vector<VmHostConfig>& hosts, absl::string_view path) {
  for (const VmHostConfig& h : hosts) {
    const std::string prefix = absl::StrCat(kVmDevicePrefix, h.name);
    if (path == prefix || absl::StartsWith(path, prefix + "/")) {
      return absl::StrCat(" (--kernel ", h.kernel, ")");
    }
  }
  return "";
}

}  // namespace blkbench
