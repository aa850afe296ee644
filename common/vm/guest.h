// A booted VM test host: qemu running a kernel whose guest program (guest_main.cc)
// answers on a virtio-serial channel, and the commands run through it.
//
//   absl::StatusOr<std::unique_ptr<Guest>> g = Guest::Boot(config, absl::Seconds(120));
//   absl::StatusOr<GuestRunResult> r = (*g)->Run({"uname", "-r"}, absl::Seconds(10));
//
// Boot ends when the guest program says hello (after the disks appeared). A guest that
// panics, whose init fails or that never says hello fails Boot within boot_timeout with
// the tail of its console in the error; qemu is then killed and its directory removed.
//
// Not thread-safe: one call at a time.
#ifndef BLKBENCH_COMMON_VM_GUEST_H_
#define BLKBENCH_COMMON_VM_GUEST_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/vm/channel.h"
#include "common/vm/process.h"
#include "common/vm/qemu.h"
#include "common/vm/vm_config.h"

namespace blkbench::vm {

struct GuestRunRequest {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // KEY=VALUE added to the guest program's environment
  std::string cwd;               // empty: /
  absl::Duration timeout = absl::Minutes(1);
  std::string stdin_data;  // the command's stdin (empty: /dev/null); at most 1 MiB
  // If set, every chunk of output as it arrives (from Run's thread, in order); stdout is
  // then not kept in the result (stderr still is, bounded), so a long stream costs no
  // memory.
  std::function<void(bool is_stderr, absl::string_view data)> on_output;
  // The guest is declared hung (killed, DeadlineExceeded with the console tail) when no
  // output arrives for this long: a command that streams (a cell run, which reports
  // every second) fails on a stopped or stuck guest long before `timeout`.
  absl::Duration silence_timeout = absl::InfiniteDuration();
};

struct GuestRunResult {
  int exit_code = -1;  // -1 when a signal ended it
  int signal = 0;
  std::string output;  // stdout and stderr interleaved as the guest read them
  std::string stdout_data;
  std::string stderr_data;
  size_t dropped_bytes = 0;  // output beyond VmConfig::max_output_bytes, not kept
};

class Guest {
 public:
  // Creates the VM directory under config.work_parent (sparse disk images, console log,
  // channel socket), starts qemu and waits for the hello. Errors: InvalidArgument from
  // ValidateVmConfig, NotFound when qemu is missing, FailedPrecondition for accel kvm
  // without /dev/kvm, DeadlineExceeded (no hello in time) or Unavailable (qemu exited,
  // the guest reported an error) with the console tail, Cancelled when
  // config.abort_boot was set meanwhile (qemu killed within kBootAbortPoll). Under
  // Accel::kAuto a KVM that cannot run the guest (qemu's "KVM internal error", as under
  // some nested hypervisors) is seen within kBootAbortPoll and the boot starts again under
  // tcg, as every later kAuto boot of the process does (MarkKvmUnusable).
  static absl::StatusOr<std::unique_ptr<Guest>> Boot(const VmConfig& config,
                                                     absl::Duration boot_timeout);
  // Shutdown(); a failure is logged.
  ~Guest();
  Guest(const Guest&) = delete;
  Guest& operator=(const Guest&) = delete;

  const std::string& release() const { return facts_.release; }
  const VmFacts& facts() const { return facts_; }
  // Block devices with a device behind them, as the guest listed them at hello.
  const std::vector<std::string>& block_devices() const { return block_devices_; }
  const std::string& dir() const { return files_.dir; }
  pid_t qemu_pid() const { return qemu_pid_; }
  bool alive() const { return qemu_ != nullptr && !dead_; }

  // Runs a command in the guest and returns how it ended (a non-zero exit is a result,
  // not an error). Errors: DeadlineExceeded when the command outlived its timeout (the
  // guest killed it; the VM stays usable); FailedPrecondition naming argv[0] when the
  // guest could not start it; InvalidArgument for an empty argv or timeout; when the guest says
  // nothing for timeout + VmConfig::run_grace, or qemu exits, the guest is dead: qemu is killed and
  // the error (DeadlineExceeded / Unavailable) carries the console tail; later calls fail with
  // FailedPrecondition.
  absl::StatusOr<GuestRunResult> Run(const GuestRunRequest& request);
  // Kills qemu at once, from any thread (while this Guest exists): a Run in progress
  // fails with Unavailable and the guest is dead. For cancel and fencing.
  void Abort();
  absl::StatusOr<GuestRunResult> Run(const std::vector<std::string>& argv, absl::Duration timeout);

  // Powers the guest off (waiting up to VmConfig::shutdown_timeout, then killing qemu),
  // reaps qemu and removes the VM directory. Idempotent. An error says what could not be
  // removed or that qemu had to be killed.
  absl::Status Shutdown();

  // The last VmConfig::console_tail_bytes of the console log.
  std::string ConsoleTail() const;

 private:
  explicit Guest(const VmConfig& config) : config_(config) {}
  absl::Status Start(absl::Duration boot_timeout);
  // Kills qemu and returns `cause` with the console tail appended.
  absl::Status Die(const absl::Status& cause, absl::string_view what);

  VmConfig config_;
  VmFiles files_;
  VmFacts facts_;
  std::vector<std::string> block_devices_;
  std::unique_ptr<Subprocess> qemu_;
  pid_t qemu_pid_ = -1;
  int conn_fd_ = -1;
  std::unique_ptr<FrameReader> reader_;
  bool dead_ = false;
  bool kvm_failed_ = false;  // qemu said KVM could not run the guest (Boot retries on tcg)
  bool shut_down_ = false;
};

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_GUEST_H_
