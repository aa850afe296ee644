// Agent configuration parsing; see config.h.
#include "agent/config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/cgroup/hierarchy.h"
#include "common/bounded_file.h"
#include "common/config/fields.h"
#include "common/config/reader.h"
#include "common/sim_vocabulary.h"
#include "common/vm/kernel.h"
#include "common/vm/qemu.h"
#include "common/yaml/yaml.h"

namespace blkbench {
namespace {

// `prefix` followed by a number: IsNumbered("loop7", "loop"), not "loop-control".
bool IsNumbered(absl::string_view name, absl::string_view prefix) {
  if (!absl::ConsumePrefix(&name, prefix) || name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return absl::ascii_isdigit(c); });
}

}  // namespace

std::string KernelNameWarning(const std::string& path) {
  absl::string_view name = path;
  if (!absl::ConsumePrefix(&name, "/dev/") || name.empty() ||
      name.find('/') != absl::string_view::npos) {
    return "";
  }
  // nullbN can only be a null_blk device, which holds no data and has no by-id name.
  if (IsNumbered(name, "nullb")) return "";
  if (IsNumbered(name, "loop")) {
    return absl::StrCat(
        "'", path,
        "' is a kernel name: any file can be attached there. The agent records the loop "
        "device's backing file (path, device and inode), offset, size limit and size at "
        "registration and refuses a run when they change; a /dev/disk/by-id path, where "
        "there is one, is the stable name");
  }
  return absl::StrCat("'", path, "' is a kernel name, which the kernel may give to another disk ",
                      "after a reboot or hot-plug; allowlist its /dev/disk/by-id path instead ",
                      "(ls -l /dev/disk/by-id | grep -w ", name,
                      "). The agent also records the device's identity (WWID, serial, model, "
                      "size) at registration and refuses a run when it changes");
}

namespace {

using config::Bool;
using config::Bytes;
using config::Context;
using config::Empty;
using config::Enum;
using config::Int;
using config::Map;
using config::MapList;
using config::Path;
using config::ScalarList;
using config::String;
using config::Table;
using config::UniqueKey;

constexpr uint64_t kMinVmDiskBytes = uint64_t{1} << 20;

// Up to `max` of [A-Za-z0-9_-], at least `min`: VM host names (device paths vm:<name>/...)
// and disk serials (qemu's serial=, the guest's by-id names).
bool IsWord(const std::string& s, size_t min, size_t max) {
  return s.size() >= min && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
           return absl::ascii_isalnum(c) || c == '_' || c == '-';
         });
}

Table<AllowedDevice> DeviceTable() {
  return Table<AllowedDevice>(
      "a device like {path: /dev/disk/by-id/..., class: ssd}",
      {Path("path", "an absolute path (a block device or a regular file)", &AllowedDevice::path)
           .Required(),
       String("class", "a device class like nvme, hdd, ssd, optane, or a label of your own",
              &AllowedDevice::device_class)},
      [](AllowedDevice& d, const yaml::Node& map, Context& c) {
        if (std::string warning = KernelNameWarning(d.path); !warning.empty()) {
          c.Warning(map, warning);
        }
      });
}

Table<NullBlkAgentConfig> NullBlkTable() {
  return Table<NullBlkAgentConfig>(
      "a map like {configfs: /sys/kernel/config, dev: /dev, load_module: false}",
      {Path("configfs", "an absolute path (where configfs is mounted)",
            &NullBlkAgentConfig::configfs),
       Path("dev", "an absolute path (where the kernel adds nullb<N>)", &NullBlkAgentConfig::dev),
       Bool("load_module", "true or false", &NullBlkAgentConfig::load_module)},
      // The section's presence turns the devices on; `null_blk:` alone is the defaults.
      [](NullBlkAgentConfig& n, const yaml::Node&, Context&) { n.enabled = true; });
}

Table<VmDiskConfig> VmDiskTable() {
  return Table<VmDiskConfig>(
      "a disk like {kind: nvme, size: 1G}",
      {Enum("kind", &VmDiskConfig::kind, {"nvme", "hdd", "virtio"}).Required(),
       Bytes("size", "a size like 1G or 512M, at least 1M", &VmDiskConfig::size_bytes,
             kMinVmDiskBytes),
       Int("queues", "an integer from 0 (qemu's default) to 64", &VmDiskConfig::queues, 0, 64),
       String("serial", "up to 20 of A-Z a-z 0-9 _ - (\"\" for blkbench<index>)",
              &VmDiskConfig::serial, Empty::kAllowed)
           .Checked([](const std::string& s) { return IsWord(s, 0, 20); }),
       String("class", "a device class like nvme, hdd, ssd, or a label of your own",
              &VmDiskConfig::device_class)});
}

Table<VmHostConfig> VmHostTable() {
  return Table<VmHostConfig>(
      "a VM host like {name: k612, kernel: \"deb:6.12*\", disks: [{kind: nvme}]}",
      {String("name", "a name of 1 to 32 of A-Z a-z 0-9 _ -", &VmHostConfig::name)
           .Required()
           .Checked([](const std::string& s) { return IsWord(s, 1, 32); }),
       String("kernel", "a kernel spec, deb:PATTERN or PATH/bzImage[:MODULES_DIR]",
              &VmHostConfig::kernel)
           .Required()
           .Checked([](const std::string& s) { return vm::ParseKernelSpec(s).status(); }),
       Int("vcpus", "an integer from 1 to 64", &VmHostConfig::vcpus, 1, 64),
       Int("memory_mb", "an integer from 256 to 65536", &VmHostConfig::memory_mb, 256, 65536),
       Enum("accel", &VmHostConfig::accel, {"auto", "kvm", "tcg"}),
       Bool("null_blk", "true or false", &VmHostConfig::null_blk),
       ScalarList("cmdline", "a list of kernel arguments like [mitigations=off, nokaslr]",
                  &VmHostConfig::cmdline, "one kernel argument (no spaces or quotes)",
                  vm::CheckKernelArgument),
       MapList("disks", "a list of disks like [{kind: nvme, size: 1G}]", &VmHostConfig::disks,
               VmDiskTable(), UniqueKey<VmDiskConfig>{"serial", &VmDiskConfig::serial})},
      [](VmHostConfig& h, const yaml::Node& map, Context& c) {
        // A host with nothing to offer is a mistake (a bad `disks:` is reported already).
        const yaml::Node disks = map["disks"];
        if (!h.null_blk && (!disks || (disks.IsSequence() && disks.size() == 0))) {
          c.Error(map, "expected at least one disk (disks: [{kind: nvme}]) or null_blk: true");
        }
      });
}

const Table<AgentConfig>& AgentTable() {
  static const Table<AgentConfig>* const table = new Table<AgentConfig>(
      "a map of agent settings (controller, agent_id, state_dir, devices, ...)",
      {
          String("controller", "host:port or unix:/path", &AgentConfig::controller),
          String("agent_id", "a name (default: the host name)", &AgentConfig::agent_id),
          String("tls_dir", "a directory with ca.pem and agent-<id>.pem/.key",
                 &AgentConfig::tls_dir),
          Bool("insecure", "true or false", &AgentConfig::insecure),
          String("state_dir", "a directory", &AgentConfig::state_dir),
          String("cgroup_parent", "a relative cgroup path like blkbench or lab.slice/blkbench",
                 &AgentConfig::cgroup_parent)
              .Checked(IsValidCgroupParent),
          MapList("devices", "a list of {path, class}", &AgentConfig::devices, DeviceTable(),
                  UniqueKey<AllowedDevice>{"path", &AllowedDevice::path}),
          ScalarList("sim_devices", "a list like [sim:null_blk, sim:hdd]",
                     &AgentConfig::sim_devices,
                     absl::StrCat("a simulated device class (", SimDeviceList(), ")"),
                     [](const std::string& name) {
                       return FindSimDevice(name) != nullptr ? absl::OkStatus()
                                                             : absl::InvalidArgumentError("");
                     }),
          Map("null_blk", &AgentConfig::null_blk, NullBlkTable()),
          // "" (quoted) turns the exporter off.
          String("metrics_listen", "host:port like 0.0.0.0:9471, or \"\" for no exporter",
                 &AgentConfig::metrics_listen, Empty::kAllowed)
              .Checked([](const std::string& s) {
                return s.empty() || s.find(':') != std::string::npos;
              }),
          Int("metrics_grace_ms", "milliseconds >= 0", &AgentConfig::metrics_grace_ms, 0),
          Int("metrics_max_finished_runs", "a count >= 0", &AgentConfig::metrics_max_finished_runs,
              0),
          Bool("metrics_tls", "true or false", &AgentConfig::metrics_tls),
          Bool("metrics_client_certs", "true or false", &AgentConfig::metrics_client_certs),
          String("metrics_token_file", "a file (0600) holding the bearer token",
                 &AgentConfig::metrics_token_file),
          Bool("metrics_insecure", "true or false", &AgentConfig::metrics_insecure),
          Path("kernel_cache", "an absolute path", &AgentConfig::kernel_cache),
          Int("vm_boot_timeout_ms", "milliseconds > 0", &AgentConfig::vm_boot_timeout_ms, 1),
          Int("vm_silence_timeout_ms", "milliseconds > 0", &AgentConfig::vm_silence_timeout_ms, 1),
          MapList("vm_hosts", "a list of VM hosts like [{name: k612, kernel: \"deb:6.12*\"}]",
                  &AgentConfig::vm_hosts, VmHostTable(),
                  UniqueKey<VmHostConfig>{"name", &VmHostConfig::name}),
      });
  return *table;
}

}  // namespace

absl::StatusOr<AgentConfig> ParseAgentConfig(const std::string& text,
                                             const std::string& file_name) {
  // A config is small; the limits keep a broken or hostile one from costing more.
  absl::StatusOr<yaml::Node> root =
      yaml::ParseOrStatus(text, file_name, yaml::Limits{.max_bytes = 1 << 20});
  if (!root.ok()) return root.status();
  AgentConfig cfg;
  config::Diagnostics diagnostics(file_name);
  config::ReadDocument(*root, AgentTable(), cfg, diagnostics);
  if (absl::Status s = diagnostics.ToStatus(); !s.ok()) return s;
  cfg.warnings = diagnostics.Warnings();
  if (cfg.agent_id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    cfg.agent_id = host;
  }
  return cfg;
}

absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path) {
  absl::StatusOr<std::string> text = ReadBoundedRegularFile(path, 1 << 20, "agent config");
  if (!text.ok()) return text.status();
  return ParseAgentConfig(*text, path);
}

}  // namespace blkbench
