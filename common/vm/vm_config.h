// What a VM test host is made of: kernel, CPUs, memory, disks, accelerator, and the
// bounds of its waits. Plain data; qemu.h turns it into a qemu command line.
#ifndef BLKBENCH_COMMON_VM_VM_CONFIG_H_
#define BLKBENCH_COMMON_VM_VM_CONFIG_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/vm/kernel.h"

namespace blkbench::vm {

// One emulated disk, backed by a sparse raw file in the VM's directory.
struct VmDisk {
  enum class Kind {
    kNvme,    // -device nvme: the guest sees nvmeXn1, rotational 0
    kHdd,     // scsi-hd with rotation_rate=7200 on virtio-scsi: sdX, rotational 1
    kVirtio,  // virtio-blk-pci: vdX
  };
  Kind kind = Kind::kNvme;
  uint64_t size_bytes = uint64_t{1} << 30;
  std::string serial;  // nvme, hdd; empty: "blkbench<index>"; [A-Za-z0-9_-], ≤ 20
  int queues = 0;      // nvme max_ioqpairs, virtio num-queues; 0: qemu's default
};

enum class Accel {
  kAuto,  // kvm when /dev/kvm can be opened read-write, else tcg
  kKvm,
  kTcg,
};

struct VmConfig {
  Kernel kernel;
  std::string initramfs;      // BuildInitramfs(kernel, ...)
  std::string guest_program;  // absolute host path of blkbench-vm-guest (run after chroot)
  int vcpus = 2;
  int memory_mb = 2048;
  std::vector<VmDisk> disks;
  Accel accel = Accel::kAuto;
  std::string qemu = "qemu-system-x86_64";
  // Where the per-VM directory (disk images, console log, channel socket) is made.
  std::string work_parent = "/tmp";
  // Appended to the kernel command line (space-separated words, no quotes).
  std::vector<std::string> extra_cmdline;
  // How long the guest program waits for its devices (the channel port, then the disks)
  // before it gives up (and says so on the console or in its hello).
  absl::Duration disk_wait = absl::Seconds(60);
  // How much longer than a command's timeout the host waits for the guest to report the
  // kill before it declares the guest dead and kills qemu.
  absl::Duration run_grace = absl::Seconds(10);
  // How long Shutdown() waits for the guest to power off before killing qemu.
  absl::Duration shutdown_timeout = absl::Seconds(30);
  // Bytes of a command's output kept (the head; more is counted, not kept).
  size_t max_output_bytes = 16 << 20;
  // Bytes of the console log quoted in errors.
  size_t console_tail_bytes = 4096;
  // When set (from any thread) while Boot waits, the boot ends within kBootAbortPoll:
  // qemu killed, its directory removed, Cancelled. For a process that is stopping (Ctrl-C
  // during `blkbench run --vm`'s boots). Null: boots are not aborted. Outlives the boot.
  const std::atomic<bool>* abort_boot = nullptr;
};

// How often a boot looks at VmConfig::abort_boot (an atomic has nothing to poll on).
inline constexpr absl::Duration kBootAbortPoll = absl::Milliseconds(100);

// What a booted VM was: recorded with results that ran in it.
struct VmFacts {
  std::string accel;         // "kvm" or "tcg"
  std::string qemu_version;  // "7.2.22"
  int vcpus = 0;
  int memory_mb = 0;
  std::string release;       // the guest's uname -r
  absl::Duration boot_time;  // qemu start to the guest's hello
};

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_VM_CONFIG_H_
