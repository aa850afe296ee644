// The guest program's logic (blkbench-vm-guest, run by /init chrooted into the host's
// root): load the disks' drivers, wait for the disks, open the channel port, say hello,
// then serve VmRun / VmPoweroff requests one at a time.
#ifndef BLKBENCH_COMMON_VM_GUEST_AGENT_H_
#define BLKBENCH_COMMON_VM_GUEST_AGENT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace blkbench::vm {

// What the host put on the kernel command line for the guest program (qemu.cc writes it).
struct GuestBootArgs {
  std::vector<std::string> load;  // modules to modprobe before hello
  int disks = 0;                  // block devices (with a device behind them) to wait for
  // How long to wait for the channel port and the disks, together.
  absl::Duration disk_wait = absl::Seconds(60);
};
// Parses /proc/cmdline's text. Unknown words are ignored.
GuestBootArgs ParseGuestCmdline(absl::string_view cmdline);

// /dev/vportNpM of the virtio-serial port named `name` (from
// /sys/class/virtio-ports/*/name). NotFound listing the ports there are.
absl::StatusOr<std::string> FindVirtioPort(absl::string_view name);

// /sys/block entries with a `device` link: real (emulated) disks, not loop, ram or nullb.
std::vector<std::string> DiskBlockDevices();

// The guest program's main: returns only when it cannot go on (the caller exits with
// the value, and /init powers the VM off saying so). On a VmPoweroff it powers off.
int RunGuestAgent();

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_GUEST_AGENT_H_
