// The agent's VM test hosts (AgentConfig::vm_hosts, docs/vm-hosts.md): each a guest that
// boots the configured kernel with the configured disks (and per-run null_blk devices
// made inside it). Their devices are offered like the agent's own — paths
// vm:<host>/<kernel name> and vm:<host>/null_blk — with DeviceFacts.vm naming the guest's
// kernel release, so placement matches a cell's `kernel:` against the guest, not the
// agent. A run on one executes inside the guest (blkbench-vm-cell, agent/vm/cell_main.cc)
// and its samples and result come back over the guest channel.
//
// Thread-safe. One run at a time per guest (runs on two devices of one guest queue for
// it: they would share its vCPUs). A guest that fails to boot is not offered (the reason
// and its console tail are logged and listed); a guest that dies or goes silent mid-run
// fails that run with its console tail and is booted again for the next. Cancel and
// fencing kill the guest. Guests live in <state_dir>/vms; what a crashed agent left there
// is removed at start (qemu itself dies with the agent: PR_SET_PDEATHSIG).
#ifndef BLKBENCH_AGENT_VM_VM_HOSTS_H_
#define BLKBENCH_AGENT_VM_VM_HOSTS_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "agent/config.h"
#include "blkbench/v1/agent.pb.h"
#include "common/vm/guest.h"
#include "common/vm/vm_config.h"

namespace blkbench {

inline constexpr char kVmDevicePrefix[] = "vm:";

// Whether `path` names a device in a VM test host ("vm:<host>/<device>").
bool IsVmDevicePath(absl::string_view path);

class VmHosts {
 public:
  explicit VmHosts(const AgentConfig& config);
  ~VmHosts();  // powers every guest off
  VmHosts(const VmHosts&) = delete;
  VmHosts& operator=(const VmHosts&) = delete;

  // Boots the guests that are not running and appends their devices to `offered` (a
  // guest busy with a run answers with its last offer); a guest that cannot boot is
  // appended to `not_offered` as (vm:<host>, reason).
  void Offer(std::vector<v1::DeviceFacts>& offered,
             std::vector<std::pair<std::string, std::string>>& not_offered);

  // Runs `a` (device vm:<host>/<device>) in its guest; the RunFinished to send. Samples
  // go to `on_sample` as they arrive. Setting `cancel` kills the guest (CANCELED).
  v1::RunFinished Execute(const v1::RunAssignment& a, const std::atomic<bool>& cancel,
                          const std::function<void(const v1::Sample&)>& on_sample);

  // The guest's qemu pid for `host`, -1 when it has none (tests); does not wait for a
  // run in it to end.
  pid_t QemuPid(const std::string& host);

  // From any thread, for a process that is stopping (Ctrl-C during `blkbench run --vm`):
  // a boot in progress ends within vm::kBootAbortPoll (qemu killed, its files removed) and
  // every later boot fails at once; guests already running are left to the caller's
  // cancel and to the destructor.
  void AbortBoots() { abort_boots_.store(true); }

 private:
  struct Host {
    VmHostConfig config;
    std::mutex mu;  // held for a boot, an offer or a run
    std::unique_ptr<vm::Guest> guest;
    // guest's qemu pid, -1 without one: read without mu (a run holds mu throughout).
    std::atomic<pid_t> qemu_pid{-1};
    std::optional<vm::VmConfig> prepared;  // the kernel fetched and initramfs built
    v1::VmFacts facts;
    std::mutex offer_mu;
    std::vector<v1::DeviceFacts> last_offer;  // under offer_mu
  };

  Host* Find(absl::string_view name);
  // Boots h's guest if it is not running (h.mu held). Error: why it cannot run.
  absl::Status EnsureBooted(Host& h);
  // What blkbench-vm-cell needs to know of h's devices.
  v1::VmCellRequest CellRequest(const Host& h) const;
  // Runs blkbench-vm-cell in h's guest with `request`, handing each event to `on_event`.
  absl::Status RunCell(Host& h, const v1::VmCellRequest& request, absl::Duration timeout,
                       const std::function<void(v1::VmCellEvent&)>& on_event);
  void Stop(Host& h);  // powers the guest off (h.mu held)

  const AgentConfig& config_;
  std::atomic<bool> abort_boots_{false};  // VmConfig::abort_boot of every guest
  std::string work_parent_;
  std::vector<std::unique_ptr<Host>> hosts_;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_VM_VM_HOSTS_H_
