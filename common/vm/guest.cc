// Guest: qemu's lifetime, the hello, commands over the channel, and clean-up.
#include "common/vm/guest.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "blkbench/v1/vm.pb.h"
#include "common/log/log.h"
#include "common/vm/files.h"

namespace blkbench::vm {
namespace {

// How long a request may take to be written: the guest reads it at once unless it is
// dead, which the read deadline then reports.
constexpr absl::Duration kWriteTimeout = absl::Seconds(10);
constexpr size_t kQemuLogTail = 2048;
constexpr size_t kMaxStdinBytes = 1 << 20;  // under the channel's frame limit
constexpr absl::Duration kExitGrace = absl::Seconds(2);

absl::StatusOr<int> Listen(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("socket path too long: ", path));
  }
  path.copy(addr.sun_path, path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::ErrnoToStatus(errno, "socket");
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 1) != 0) {
    int e = errno;
    close(fd);
    return absl::ErrnoToStatus(e, "listen on " + path);
  }
  return fd;
}

absl::Status CreateSparse(const std::string& path, uint64_t size) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return absl::ErrnoToStatus(errno, "create disk image " + path);
  int r = ftruncate(fd, static_cast<off_t>(size));
  int e = errno;
  close(fd);
  return r == 0 ? absl::OkStatus() : absl::ErrnoToStatus(e, "size disk image " + path);
}

void AppendBounded(std::string& to, const std::string& data, size_t max) {
  if (to.size() < max) to.append(data, 0, max - to.size());
}

}  // namespace

absl::StatusOr<std::unique_ptr<Guest>> Guest::Boot(const VmConfig& config,
                                                   absl::Duration boot_timeout) {
  if (absl::Status s = ValidateVmConfig(config); !s.ok()) return s;
  std::unique_ptr<Guest> guest(new Guest(config));
  absl::Status started = guest->Start(boot_timeout);
  if (!started.ok() && guest->kvm_failed_ && config.accel == Accel::kAuto) {
    // /dev/kvm opened but KVM could not run the guest (seen within kBootAbortPoll): tcg,
    // with the whole timeout, for this boot and the rest.
    MarkKvmUnusable(started.message().substr(0, started.message().find('\n')));
    if (absl::Status cleaned = guest->Shutdown(); !cleaned.ok()) return cleaned;
    guest.reset(new Guest(config));
    started = guest->Start(boot_timeout);
  }
  if (!started.ok()) {
    absl::Status cleaned = guest->Shutdown();
    if (!cleaned.ok()) {
      return absl::Status(
          started.code(),
          absl::StrCat(started.message(), "\n(and clean-up: ", cleaned.message(), ")"));
    }
    return started;
  }
  return guest;
}

absl::Status Guest::Start(absl::Duration boot_timeout) {
  if (config_.abort_boot != nullptr && config_.abort_boot->load()) {
    return absl::CancelledError("the boot was aborted before qemu started");
  }
  const absl::Time start = MonotonicNow();
  const absl::Time deadline = start + boot_timeout;
  absl::StatusOr<Accel> accel = ResolveAccel(config_.accel);
  if (!accel.ok()) return accel.status();
  absl::StatusOr<std::string> version = QemuVersion(config_.qemu);
  if (!version.ok()) return version.status();
  facts_.accel = AccelName(*accel);
  facts_.qemu_version = *version;
  facts_.vcpus = config_.vcpus;
  facts_.memory_mb = config_.memory_mb;

  absl::StatusOr<std::string> dir = MakeTempDir(config_.work_parent, "blkbench-vm-");
  if (!dir.ok()) return dir.status();
  files_ = FilesIn(*dir, config_);
  for (size_t i = 0; i < config_.disks.size(); ++i) {
    if (absl::Status s = CreateSparse(files_.disks[i], config_.disks[i].size_bytes); !s.ok()) {
      return s;
    }
  }
  // We listen and qemu connects at its start, so there is no window in which either
  // side polls for the other's socket.
  absl::StatusOr<int> listen_fd = Listen(files_.socket);
  if (!listen_fd.ok()) return listen_fd.status();
  Subprocess::Options opts;
  opts.stdout_sink = Subprocess::Sink::kFile;
  opts.stdout_path = files_.dir + "/qemu.log";
  opts.stderr_sink = Subprocess::Sink::kStdout;
  absl::StatusOr<std::unique_ptr<Subprocess>> qemu =
      Subprocess::Start(QemuArgv(config_, *accel, files_), opts);
  if (!qemu.ok()) {
    close(*listen_fd);
    return qemu.status();
  }
  qemu_ = *std::move(qemu);
  qemu_pid_ = qemu_->pid();

  // The waits below end at the deadline, or at the next look at abort_boot.
  auto aborted = [this] { return config_.abort_boot != nullptr && config_.abort_boot->load(); };
  // Under KVM, qemu may report that KVM cannot run the guest and then wait forever: its
  // log is looked at as often as abort_boot.
  const bool kvm = *accel == Accel::kKvm;
  auto kvm_failed = [&] {
    kvm_failed_ = kvm_failed_ || (kvm && absl::StrContains(FileTail(opts.stdout_path, kQemuLogTail),
                                                           kKvmInternalError));
    return kvm_failed_;
  };
  auto next_look = [&] {
    return config_.abort_boot == nullptr && !kvm
               ? deadline
               : std::min(deadline, MonotonicNow() + kBootAbortPoll);
  };
  const absl::Status kvm_error = absl::UnavailableError(absl::StrCat(
      "qemu reported a ", kKvmInternalError, ": this host's KVM cannot run the guest"));
  const absl::Status abort = absl::CancelledError("the boot was aborted");
  pollfd fds[2] = {{*listen_fd, POLLIN, 0}, {qemu_->pidfd(), POLLIN, 0}};
  int n;
  do {
    n = poll(fds, 2, PollTimeoutMs(next_look()));
  } while ((n < 0 && errno == EINTR) || (n == 0 && !aborted() && PollTimeoutMs(deadline) > 0));
  if (fds[0].revents != 0)
    conn_fd_ = accept4(*listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  close(*listen_fd);
  unlink(files_.socket.c_str());
  if (conn_fd_ < 0) {
    if (aborted()) return Die(abort, "boot");
    return Die(n == 0 ? absl::DeadlineExceededError("qemu did not connect to the channel")
                      : absl::UnavailableError("qemu exited before connecting the channel"),
               "boot");
  }
  reader_ = std::make_unique<FrameReader>(conn_fd_);
  v1::VmEvent event;
  absl::Status hello;
  do {  // (a frame read in part is kept by the reader across its calls)
    hello = reader_->Read(event, next_look(), qemu_->pidfd());
  } while (absl::IsDeadlineExceeded(hello) && !aborted() && !kvm_failed() &&
           MonotonicNow() < deadline);
  if (absl::Status s = hello; !s.ok()) {
    if (aborted()) {
      s = abort;
    } else if (kvm_failed()) {
      s = kvm_error;
    } else if (absl::IsDeadlineExceeded(s)) {
      s = absl::DeadlineExceededError(
          absl::StrCat("the guest did not say hello within ", absl::FormatDuration(boot_timeout)));
    } else if (absl::IsUnavailable(s)) {
      s = absl::UnavailableError(
          absl::StrCat("the guest stopped before its hello (", s.message(), ")"));
    }
    return Die(s, "boot");
  }
  if (!event.has_hello()) return Die(absl::DataLossError("first message is not a hello"), "boot");
  if (!event.hello().error().empty()) {
    return Die(absl::UnavailableError(event.hello().error()), "guest program");
  }
  facts_.release = event.hello().release();
  facts_.boot_time = MonotonicNow() - start;
  block_devices_.assign(event.hello().block_devices().begin(), event.hello().block_devices().end());
  return absl::OkStatus();
}

absl::Status Guest::Die(const absl::Status& cause, absl::string_view what) {
  std::string how = "killed";
  if (qemu_ != nullptr) {
    // A closed channel usually means qemu is exiting: give it a moment to be reaped so
    // the error says how it ended.
    const absl::Duration grace = absl::IsUnavailable(cause) ? kExitGrace : absl::ZeroDuration();
    if (absl::StatusOr<int> st = qemu_->Wait(MonotonicNow() + grace); st.ok()) {
      how = absl::StrCat("qemu had exited: ", DescribeWaitStatus(*st));
    } else {
      qemu_->Kill();
      how = "qemu killed";
    }
  }
  dead_ = true;
  std::string qemu_log = FileTail(files_.dir + "/qemu.log", kQemuLogTail);
  return absl::Status(
      cause.code(),
      absl::StrCat("VM ", files_.dir, " (kernel ", config_.kernel.release, ", ", facts_.accel, ") ",
                   what, ": ", cause.message(), " [", how, "]",
                   qemu_log.empty() ? "" : absl::StrCat("\n--- qemu output ---\n", qemu_log),
                   "\n--- console tail ---\n", ConsoleTail()));
}

absl::StatusOr<GuestRunResult> Guest::Run(const std::vector<std::string>& argv,
                                          absl::Duration timeout) {
  GuestRunRequest req;
  req.argv = argv;
  req.timeout = timeout;
  return Run(req);
}

absl::StatusOr<GuestRunResult> Guest::Run(const GuestRunRequest& request) {
  const std::string cmd = absl::StrJoin(request.argv, " ");
  if (!alive()) return absl::FailedPreconditionError("VM is not running; cannot run `" + cmd + "`");
  if (request.argv.empty() || request.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("guest Run needs an argv and a positive timeout");
  }
  v1::VmRequest req;
  v1::VmRun* run = req.mutable_run();
  for (const std::string& a : request.argv) run->add_argv(a);
  for (const std::string& e : request.env) run->add_env(e);
  run->set_cwd(request.cwd);
  run->set_timeout_ms(absl::ToInt64Milliseconds(request.timeout));
  if (request.stdin_data.size() > kMaxStdinBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stdin of `", cmd, "` is ", request.stdin_data.size(), " bytes; at most ", kMaxStdinBytes));
  }
  run->set_stdin(request.stdin_data);
  if (absl::Status s = WriteFrame(conn_fd_, req, MonotonicNow() + kWriteTimeout); !s.ok()) {
    return Die(s, "sending `" + cmd + "`");
  }
  const absl::Time deadline = MonotonicNow() + request.timeout + config_.run_grace;
  GuestRunResult result;
  const size_t max = config_.max_output_bytes;
  for (;;) {
    v1::VmEvent event;
    const absl::Time silent_at = MonotonicNow() + request.silence_timeout;
    if (absl::Status s = reader_->Read(event, std::min(deadline, silent_at), qemu_->pidfd());
        !s.ok()) {
      const absl::Duration silent =
          silent_at < deadline ? request.silence_timeout : request.timeout + config_.run_grace;
      return Die(absl::IsDeadlineExceeded(s)
                     ? absl::DeadlineExceededError(
                           absl::StrCat("the guest was silent for ", absl::FormatDuration(silent)))
                     : s,
                 "running `" + cmd + "`");
    }
    if (event.has_output()) {
      const std::string& data = event.output().data();
      if (request.on_output) {
        request.on_output(event.output().stderr(), data);
        if (!event.output().stderr()) continue;
      }
      if (result.output.size() + data.size() > max) {
        result.dropped_bytes += result.output.size() + data.size() - max;
      }
      AppendBounded(result.output, data, max);
      AppendBounded(event.output().stderr() ? result.stderr_data : result.stdout_data, data, max);
      continue;
    }
    if (!event.has_exit()) continue;  // a hello or a future event: not this command's
    const v1::VmExit& exit = event.exit();
    if (!exit.error().empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("guest could not run `", cmd, "`: ", exit.error()));
    }
    if (exit.timed_out()) {
      return absl::DeadlineExceededError(
          absl::StrCat("`", cmd, "` ran longer than ", absl::FormatDuration(request.timeout),
                       " in the guest and was killed; output: ",
                       result.output.substr(0, config_.console_tail_bytes)));
    }
    result.exit_code = exit.signal() != 0 ? -1 : exit.exit_code();
    result.signal = exit.signal();
    return result;
  }
}

void Guest::Abort() {
  if (qemu_ == nullptr || qemu_->pidfd() < 0) return;
  // Through the pidfd: never a recycled pid, even if qemu was reaped meanwhile.
  syscall(SYS_pidfd_send_signal, qemu_->pidfd(), SIGKILL, nullptr, 0);
}

absl::Status Guest::Shutdown() {
  if (shut_down_) return absl::OkStatus();
  shut_down_ = true;
  absl::Status status;
  if (qemu_ != nullptr && !qemu_->exited()) {
    if (!dead_) {
      v1::VmRequest req;
      req.mutable_poweroff();
      // A failed write shows below as a guest that does not power off.
      absl::Status sent = WriteFrame(conn_fd_, req, MonotonicNow() + kWriteTimeout);
      if (!sent.ok()) status = sent;
    }
    if (!qemu_->Wait(MonotonicNow() + config_.shutdown_timeout).ok()) {
      qemu_->Kill();
      status = absl::DeadlineExceededError(
          absl::StrCat("VM ", files_.dir, " did not power off within ",
                       absl::FormatDuration(config_.shutdown_timeout), "; qemu killed"));
    }
  }
  if (conn_fd_ >= 0) close(conn_fd_);
  conn_fd_ = -1;
  if (!files_.dir.empty()) {
    if (absl::Status s = RemoveTree(files_.dir); !s.ok() && status.ok()) status = s;
  }
  return status;
}

Guest::~Guest() {
  if (absl::Status s = Shutdown(); !s.ok()) {
    LogEvent(LogLevel::kWarning, "vm", "shutdown_failed").Field("error", s.ToString());
  }
}

std::string Guest::ConsoleTail() const {
  return FileTail(files_.console, config_.console_tail_bytes);
}

}  // namespace blkbench::vm
