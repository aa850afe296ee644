// Agent configuration file (YAML): controller address, agent id, state directory, the
// device allowlist and the VM test hosts. Only devices listed here are ever touched.
#ifndef BLKBENCH_AGENT_CONFIG_H_
#define BLKBENCH_AGENT_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/sim_vocabulary.h"
#include "common/tls/transport.h"

namespace blkbench {

struct AllowedDevice {
  std::string path;  // block device (by-id paths welcome) or regular file
  // null_blk, hdd, ssd, optane or a custom label; "" = detected from sysfs at registration
  // (agent/device/device_facts.h DetectDeviceClass).
  std::string device_class;
};

// null_blk devices made per run through configfs (agent/device/null_blk.h): with a
// `null_blk:` section the agent offers one device, path kNullBlkDevicePath, class
// "null_blk", whenever <configfs>/nullb exists; each run on it gets a fresh
// /dev/nullb<N> with the cell's `device: {null_blk: {...}}` parameters, removed after it.
struct NullBlkAgentConfig {
  bool enabled = false;  // a `null_blk:` section is present
  std::string configfs = "/sys/kernel/config";
  std::string dev = "/dev";  // where the kernel adds nullb<N>
  bool load_module = false;  // `modprobe null_blk nr_devices=0` at start
};

// The path the agent offers for its per-run null_blk devices (not a file: the device of
// each run is made for it).
inline constexpr char kNullBlkDevicePath[] = "null_blk:per-run";

// One disk of a VM test host (common/vm/vm_config.h VmDisk), as the config names it.
struct VmDiskConfig {
  std::string kind = "nvme";  // nvme, hdd (SCSI disk, rotational), virtio (virtio-blk)
  uint64_t size_bytes = uint64_t{1} << 30;
  int queues = 0;      // nvme I/O queue pairs, virtio num-queues; 0: qemu's default
  std::string serial;  // "": blkbench<index>
  // The class the device is offered as; "": detected in the guest (nvme, hdd, ssd), except
  // virtio, which is offered as "virtio".
  std::string device_class;
};

// A VM test host (docs/vm-hosts.md): a guest booting `kernel`, whose disks (and, with
// null_blk, per-run null_blk devices made inside it) the agent offers as its own, each
// with the guest's kernel release. Runs on them execute in the guest (blkbench-vm-cell).
struct VmHostConfig {
  std::string name;    // [A-Za-z0-9_-]{1,32}; device paths are vm:<name>/<kernel name>
  std::string kernel;  // a kernel spec: deb:PATTERN or PATH/bzImage[:MODULES_DIR]
  int vcpus = 2;
  int memory_mb = 2048;
  std::string accel = "auto";  // auto, kvm, tcg
  std::vector<VmDiskConfig> disks;
  bool null_blk = false;  // offer vm:<name>/null_blk: one null_blk device per run
  // Kernel arguments added to blkbench's own (mitigations=off, nokaslr, a module's
  // parameters): one word each, no quotes or spaces; blkbench.* and console= are its own.
  std::vector<std::string> cmdline;
};

struct AgentConfig {
  // host:port or unix:/path; default: the local controller's Unix socket.
  std::string controller = tls::kDefaultControllerAddress;
  std::string agent_id;  // default: the host name
  // Lab PKI directory with ca.pem and agent-<agent_id>.pem/.key (`blkbench tls cert
  // create --agent ID`): the controller is dialled with mutual TLS and verified against
  // ca.pem. "" = no TLS: a Unix socket, loopback, or another host only with `insecure`
  // (tls::ClientTransportFor).
  std::string tls_dir;
  bool insecure = false;  // dial a non-loopback controller in plain text (loudly)
  std::string state_dir = "/var/lib/blkbench-agent";
  // Where runs' cgroup layouts are made, relative to the root of the I/O cgroup hierarchy
  // (cgroup v2 with io, else v1 blkio); created on demand and removed when unused.
  std::string cgroup_parent = "blkbench";
  std::vector<AllowedDevice> devices;
  // Simulated devices offered to the controller and run by the scheduler engine; they
  // touch no hardware. `sim_devices: []` in the file turns them off.
  std::vector<std::string> sim_devices = DefaultSimDevices();  // sim:null_blk, sim:hdd, ...
  NullBlkAgentConfig null_blk;
  // Prometheus /metrics address (host:port); "" = no exporter. Reported to the
  // controller, which lists it for Prometheus service discovery (a wildcard host is
  // replaced there by the address the agent connects from).
  std::string metrics_listen = "127.0.0.1:9471";
  // Securing /metrics beyond loopback (docs/security.md): HTTPS with tls_dir's
  // agent-<id>.pem (made with `blkbench tls cert create --agent ID --dns HOST`), client
  // certificates from the lab CA, and/or a bearer token read from a 0600 file. A
  // non-loopback metrics_listen needs HTTPS and one of the two, unless metrics_insecure.
  bool metrics_tls = false;
  bool metrics_client_certs = false;
  std::string metrics_token_file;
  bool metrics_insecure = false;
  // A finished run's series stay on /metrics this long, then are dropped.
  int64_t metrics_grace_ms = 5 * 60'000;
  // ... and at most this many finished runs keep theirs (the oldest go first).
  uint64_t metrics_max_finished_runs = 256;
  // VM test hosts the agent boots and offers devices in (empty: none).
  std::vector<VmHostConfig> vm_hosts;
  std::string kernel_cache;  // kernels and initramfs; "": vm::DefaultKernelCacheDir()
  // Bounds of a VM test host's waits: its boot (qemu start to the guest's hello), and the
  // silence of a run in it (no sample or heartbeat from the guest) before the guest is
  // declared hung, killed and the run failed with its console tail.
  int64_t vm_boot_timeout_ms = 300'000;
  int64_t vm_silence_timeout_ms = 30'000;
  // Problems that do not stop the agent, found by ParseAgentConfig ("agent.yaml:5:5:
  // devices[0]: ..."); the daemon logs each at start (event allowlist_kernel_name).
  std::vector<std::string> warnings;
};

// A warning for an allowlist entry that names a device by its kernel name (/dev/sdb,
// /dev/nvme0n1, /dev/loop3, /dev/vdb: a path directly under /dev, not a stable
// /dev/disk/by-* link), which the kernel may give to another disk after a reboot or
// hot-plug; "" for any other path and for null_blk's /dev/nullbN (no data, no by-id name). It
// recommends the /dev/disk/by-id path and says what the agent re-checks instead (for a loop device:
// its backing file's identity).
std::string KernelNameWarning(const std::string& path);

// Parses an agent config (read by the tables of common/config/reader.h). Every error is
// returned at once, one InvalidArgument line each naming the file, line, column and key
// path, e.g. "agent.yaml:4:5: devices[1]: key 'path' is required (expected an absolute
// path ...)" or "agent.yaml:9:7: vm_hosts[0]: unknown key 'vcpu' (did you mean 'vcpus'?);
// valid keys: ..."; warnings (KernelNameWarning) likewise go to AgentConfig::warnings.
absl::StatusOr<AgentConfig> ParseAgentConfig(const std::string& text, const std::string& file_name);
absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path);

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_CONFIG_H_
