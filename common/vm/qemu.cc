// qemu command line for a VmConfig; accelerator and version probes.
#include "common/vm/qemu.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/log/log.h"
#include "common/vm/files.h"
#include "common/vm/init_script.h"
#include "common/vm/process.h"

namespace blkbench::vm {
namespace {

constexpr int kMaxVcpus = 64;
constexpr int kMinMemoryMb = 256;
constexpr size_t kMaxSerial = 20;  // NVMe's serial number field

// qemu's option syntax doubles a comma inside a value.
std::string OptValue(absl::string_view v) { return absl::StrReplaceAll(v, {{",", ",,"}}); }

bool HasSpace(absl::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return absl::ascii_isspace(c); });
}

std::string SerialOf(const VmDisk& d, size_t index) {
  return d.serial.empty() ? absl::StrCat("blkbench", index) : d.serial;
}

// Set once a KVM guest failed (MarkKvmUnusable).
std::atomic<bool> kvm_unusable{false};

}  // namespace

void MarkKvmUnusable(absl::string_view why) {
  if (kvm_unusable.exchange(true)) return;
  // Best effort: without root (or /run) only this process knows.
  const absl::Status saved = WriteFileAtomic(std::string(kKvmUnusableMarker), why);
  LogEvent(LogLevel::kWarning, "vm", "kvm_unusable")
      .Field("why", why)
      .Field("then", saved.ok() ? absl::StrCat("guests boot under tcg until the host reboots or ",
                                               kKvmUnusableMarker, " is removed")
                                : std::string("guests of this process boot under tcg"));
}

absl::StatusOr<Accel> ResolveAccel(Accel accel) {
  if (accel == Accel::kTcg) return accel;
  if (accel == Accel::kAuto &&
      (kvm_unusable.load() || access(std::string(kKvmUnusableMarker).c_str(), F_OK) == 0)) {
    return Accel::kTcg;
  }
  int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    close(fd);
    return Accel::kKvm;
  }
  if (accel == Accel::kKvm) {
    return absl::FailedPreconditionError(
        absl::StrCat("accel kvm: cannot open /dev/kvm: ", strerror(errno)));
  }
  return Accel::kTcg;
}

const char* AccelName(Accel resolved) { return resolved == Accel::kKvm ? "kvm" : "tcg"; }

absl::StatusOr<std::string> QemuVersion(const std::string& qemu) {
  RunOptions opts;
  opts.timeout = absl::Seconds(30);
  absl::StatusOr<std::string> out = RunChecked({qemu, "--version"}, opts);
  if (!out.ok()) {
    if (absl::IsNotFound(out.status())) {
      return absl::NotFoundError(absl::StrCat(qemu, " is not installed (Debian: qemu-system-x86)"));
    }
    return out.status();
  }
  // "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)"
  absl::string_view v = *out;
  size_t at = v.find("version ");
  if (at == absl::string_view::npos) {
    return absl::InternalError(absl::StrCat(qemu, " --version: unexpected output: ", v));
  }
  v.remove_prefix(at + 8);
  return std::string(v.substr(0, v.find_first_of(" \n")));
}

absl::Status ValidateVmConfig(const VmConfig& c) {
  auto bad = [](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("VM config: ", what));
  };
  if (c.kernel.image.empty()) return bad("no kernel image");
  if (c.initramfs.empty()) return bad("no initramfs");
  if (c.guest_program.empty() || c.guest_program[0] != '/' || HasSpace(c.guest_program)) {
    return bad(absl::StrCat("guest_program '", c.guest_program,
                            "' must be an absolute path without whitespace"));
  }
  if (HasSpace(c.kernel.modules_dir)) {
    return bad(absl::StrCat("modules dir '", c.kernel.modules_dir, "' contains whitespace"));
  }
  if (c.vcpus < 1 || c.vcpus > kMaxVcpus) {
    return bad(absl::StrCat("vcpus ", c.vcpus, " not in 1..", kMaxVcpus));
  }
  if (c.memory_mb < kMinMemoryMb) {
    return bad(absl::StrCat("memory_mb ", c.memory_mb, " below ", kMinMemoryMb));
  }
  for (size_t i = 0; i < c.disks.size(); ++i) {
    const VmDisk& d = c.disks[i];
    if (d.size_bytes < 1 << 20 || d.size_bytes % 4096 != 0) {
      return bad(absl::StrCat("disk ", i, ": size ", d.size_bytes,
                              " must be a multiple of 4096 and at least 1 MiB"));
    }
    std::string serial = SerialOf(d, i);
    if (serial.size() > kMaxSerial || !std::all_of(serial.begin(), serial.end(), [](char ch) {
          return absl::ascii_isalnum(ch) || ch == '-' || ch == '_';
        })) {
      return bad(absl::StrCat("disk ", i, ": serial '", serial, "' must be 1..", kMaxSerial,
                              " of [A-Za-z0-9_-]"));
    }
    if (d.queues < 0 || d.queues > 1024) {
      return bad(absl::StrCat("disk ", i, ": queues ", d.queues, " not in 0..1024"));
    }
  }
  for (const std::string& w : c.extra_cmdline) {
    if (absl::Status s = CheckKernelArgument(w); !s.ok()) return bad(s.message());
  }
  return absl::OkStatus();
}

absl::Status CheckKernelArgument(absl::string_view w) {
  constexpr size_t kMaxArgument = 256;
  if (w.empty() || w.size() > kMaxArgument) {
    return absl::InvalidArgumentError(
        absl::StrCat("a kernel argument has 1 to ", kMaxArgument, " characters"));
  }
  if (std::any_of(w.begin(), w.end(), [](char ch) {
        return !absl::ascii_isgraph(ch) || ch == '"' || ch == '\'' || ch == '\\';
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel argument '", w, "' has a space, quote or non-printable character"));
  }
  for (absl::string_view own : {"blkbench.", "console=", "panic=", "rdinit=", "init="}) {
    if (absl::StartsWith(w, own)) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel argument '", w, "': ", own, "... is set by blkbench itself"));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> DiskModules(const VmConfig& config) {
  std::vector<std::string> out;
  auto add = [&](const char* m) {
    if (std::find(out.begin(), out.end(), m) == out.end()) out.emplace_back(m);
  };
  for (const VmDisk& d : config.disks) {
    switch (d.kind) {
      case VmDisk::Kind::kNvme:
        add("nvme");
        break;
      case VmDisk::Kind::kHdd:
        add("virtio_scsi");
        add("sd_mod");
        break;
      case VmDisk::Kind::kVirtio:
        add("virtio_blk");
        break;
    }
  }
  return out;
}

VmFiles FilesIn(const std::string& dir, const VmConfig& config) {
  VmFiles f;
  f.dir = dir;
  f.console = dir + "/console.log";
  f.socket = dir + "/channel.sock";
  for (size_t i = 0; i < config.disks.size(); ++i) {
    f.disks.push_back(absl::StrCat(dir, "/disk", i, ".raw"));
  }
  return f;
}

std::vector<std::string> QemuArgv(const VmConfig& c, Accel resolved, const VmFiles& files) {
  std::vector<std::string> cmdline = {
      "console=ttyS0",
      "panic=-1",
      "loglevel=4",
      "rdinit=/init",
      absl::StrCat(kCmdlineGuest, "=", c.guest_program),
      absl::StrCat(kCmdlineRootTag, "=", kRootTag),
      absl::StrCat(kCmdlineDisks, "=", c.disks.size()),
      absl::StrCat(kCmdlineDiskWaitMs, "=", absl::ToInt64Milliseconds(c.disk_wait))};
  if (!c.kernel.modules_dir.empty()) {
    cmdline.push_back(absl::StrCat(kCmdlineModulesDir, "=", c.kernel.modules_dir));
  }
  if (std::vector<std::string> mods = DiskModules(c); !mods.empty()) {
    cmdline.push_back(absl::StrCat(kCmdlineLoad, "=", absl::StrJoin(mods, ",")));
  }
  cmdline.insert(cmdline.end(), c.extra_cmdline.begin(), c.extra_cmdline.end());

  const bool kvm = resolved == Accel::kKvm;
  std::vector<std::string> argv = {
      c.qemu,
      "-nodefaults",
      "-no-user-config",
      "-no-reboot",
      "-display",
      "none",
      "-machine",
      "pc",
      "-accel",
      kvm ? "kvm" : "tcg",
      "-cpu",
      kvm ? "host" : "max",
      "-smp",
      absl::StrCat(c.vcpus),
      "-m",
      absl::StrCat(c.memory_mb),
      "-kernel",
      c.kernel.image,
      "-initrd",
      c.initramfs,
      "-append",
      absl::StrJoin(cmdline, " "),
      "-serial",
      absl::StrCat("file:", files.console),
      "-virtfs",
      absl::StrCat("local,path=/,mount_tag=", kRootTag,
                   ",readonly=on,security_model=none,multidevs=remap"),
      "-device",
      "virtio-serial-pci,id=vser0",
      "-chardev",
      absl::StrCat("socket,id=chan0,path=", OptValue(files.socket)),
      "-device",
      absl::StrCat("virtserialport,bus=vser0.0,chardev=chan0,name=", kChannelPort)};
  // One virtio-scsi controller carries every HDD.
  if (std::any_of(c.disks.begin(), c.disks.end(),
                  [](const VmDisk& d) { return d.kind == VmDisk::Kind::kHdd; })) {
    argv.emplace_back("-device");
    argv.emplace_back("virtio-scsi-pci,id=scsi0");
  }
  for (size_t i = 0; i < c.disks.size(); ++i) {
    const VmDisk& d = c.disks[i];
    const std::string id = absl::StrCat("disk", i);
    argv.emplace_back("-drive");
    argv.push_back(absl::StrCat("file=", OptValue(files.disks[i]), ",if=none,format=raw,id=", id));
    argv.emplace_back("-device");
    switch (d.kind) {
      case VmDisk::Kind::kNvme:
        argv.push_back(absl::StrCat("nvme,drive=", id, ",serial=", SerialOf(d, i),
                                    d.queues > 0 ? absl::StrCat(",max_ioqpairs=", d.queues) : ""));
        break;
      case VmDisk::Kind::kHdd:
        argv.push_back(absl::StrCat("scsi-hd,drive=", id,
                                    ",bus=scsi0.0,rotation_rate=7200,serial=", SerialOf(d, i)));
        break;
      case VmDisk::Kind::kVirtio:
        argv.push_back(absl::StrCat("virtio-blk-pci,drive=", id,
                                    d.queues > 0 ? absl::StrCat(",num-queues=", d.queues) : ""));
        break;
    }
  }
  return argv;
}

}  // namespace blkbench::vm
