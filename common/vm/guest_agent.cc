// The guest program: boot-time preparation (modprobe, waiting for disks on uevents),
// the hello, and the request loop (see guest_agent.h).
#include "common/vm/guest_agent.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "blkbench/v1/vm.pb.h"
#include "common/bounded_file.h"
#include "common/vm/channel.h"
#include "common/vm/files.h"
#include "common/vm/init_script.h"
#include "common/vm/process.h"
#include "common/vm/qemu.h"

namespace blkbench::vm {
namespace {

constexpr size_t kChunk = 64 << 10;
// How long the guest waits for the host to take a frame (the host reads continuously).
constexpr absl::Duration kSendTimeout = absl::Seconds(60);

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A socket that wakes us on every kernel uevent (a disk's "add" among them), so waiting
// for disks is event-driven. -1 if it cannot be opened (then we re-check on a timer).
int OpenUeventSocket() {
  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
  if (fd < 0) return -1;
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = 1;  // the kernel's broadcast group
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Waits until `ready` returns true, re-checking after each uevent on `uevents`, until
// `deadline`. Returns whether it became true.
template <typename Ready>
bool WaitForUevents(int uevents, absl::Time deadline, Ready ready) {
  while (!ready()) {
    int ms = PollTimeoutMs(deadline);
    if (ms == 0) return false;
    pollfd pfd{uevents, POLLIN, 0};
    // Without a uevent socket, re-check every 100 ms: a bounded fallback, not the rule.
    poll(&pfd, uevents >= 0 ? 1 : 0, uevents >= 0 ? ms : std::min(ms, 100));
    char buf[8192];
    while (uevents >= 0 && recv(uevents, buf, sizeof(buf), 0) > 0) {
    }
  }
  return true;
}

// Loads the disks' drivers and waits until the disks exist. "" or what went wrong.
std::string PrepareDisks(const GuestBootArgs& args, int uevents, absl::Time deadline) {
  if (!args.load.empty()) {
    std::vector<std::string> argv = {"modprobe", "-a"};
    argv.insert(argv.end(), args.load.begin(), args.load.end());
    absl::StatusOr<std::string> out = RunChecked(argv);
    if (!out.ok()) return std::string(out.status().message());
  }
  if (!WaitForUevents(uevents, deadline,
                      [&] { return static_cast<int>(DiskBlockDevices().size()) >= args.disks; })) {
    return absl::StrCat("only ", DiskBlockDevices().size(), " of ", args.disks,
                        " disks appeared within ", absl::FormatDuration(args.disk_wait),
                        " (/sys/block: ", absl::StrJoin(ListDir("/sys/block"), " "), ")");
  }
  return "";
}

absl::Status Send(int port, const v1::VmEvent& event) {
  return WriteFrame(port, event, MonotonicNow() + kSendTimeout);
}

// Runs one VmRun, streaming its output; returns only channel errors.
absl::Status ServeRun(int port, const v1::VmRun& run) {
  Subprocess::Options opts;
  opts.stdout_sink = Subprocess::Sink::kPipe;
  opts.stderr_sink = Subprocess::Sink::kPipe;
  opts.cwd = run.cwd().empty() ? "/" : run.cwd();
  opts.env.assign(run.env().begin(), run.env().end());
  opts.new_process_group = true;
  std::vector<std::string> argv(run.argv().begin(), run.argv().end());
  v1::VmEvent done;
  // The command's stdin goes through a file on the guest's /run tmpfs: the child opens it
  // before exec, so it is unlinked as soon as the child started.
  if (!run.stdin().empty()) {
    opts.stdin_path = "/run/blkbench-vm-guest.stdin";
    if (absl::Status w = WriteFileAtomic(opts.stdin_path, run.stdin(), 0600); !w.ok()) {
      done.mutable_exit()->set_exit_code(127);
      done.mutable_exit()->set_error(absl::StrCat("writing the command's stdin: ", w.message()));
      return Send(port, done);
    }
  }
  absl::StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Start(argv, opts);
  if (!opts.stdin_path.empty()) unlink(opts.stdin_path.c_str());
  if (!child.ok()) {
    done.mutable_exit()->set_exit_code(127);
    done.mutable_exit()->set_error(std::string(child.status().message()));
    return Send(port, done);
  }
  Subprocess& p = **child;
  const absl::Time deadline = run.timeout_ms() > 0
                                  ? MonotonicNow() + absl::Milliseconds(run.timeout_ms())
                                  : absl::InfiniteFuture();
  bool timed_out = false;
  bool exited = false;
  while (p.stdout_fd() >= 0 || p.stderr_fd() >= 0) {
    pollfd fds[3] = {{p.stdout_fd(), POLLIN, 0},
                     {p.stderr_fd(), POLLIN, 0},
                     {exited ? -1 : p.pidfd(), POLLIN, 0}};
    int n = poll(fds, 3, PollTimeoutMs(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      timed_out = true;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents == 0) continue;
      std::string data;
      bool open = DrainInto(fds[i].fd, data, kChunk);
      if (!data.empty()) {
        v1::VmEvent ev;
        ev.mutable_output()->set_stderr(i == 1);
        ev.mutable_output()->set_data(std::move(data));
        if (absl::Status s = Send(port, ev); !s.ok()) return s;
      }
      if (!open) i == 0 ? p.CloseStdout() : p.CloseStderr();
    }
    if (fds[2].revents != 0) {
      // The command exited: what it left in the background holds the pipes open; kill
      // its group so the pipes end once their data has been read.
      exited = true;
      p.KillGroup();
    }
  }
  if (timed_out) p.Kill();
  absl::StatusOr<int> st = p.Wait(deadline);
  if (!st.ok()) {
    timed_out = true;
    p.Kill();
    st = p.Wait(absl::InfiniteFuture());
  }
  p.KillGroup();
  v1::VmExit* exit = done.mutable_exit();
  exit->set_timed_out(timed_out);
  if (WIFEXITED(*st)) exit->set_exit_code(WEXITSTATUS(*st));
  if (WIFSIGNALED(*st)) exit->set_signal(WTERMSIG(*st));
  return Send(port, done);
}

void PowerOff() {
  sync();
  reboot(RB_POWER_OFF);
}

}  // namespace

GuestBootArgs ParseGuestCmdline(absl::string_view cmdline) {
  GuestBootArgs args;
  for (absl::string_view word :
       absl::StrSplit(cmdline, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    absl::string_view value = word.substr(word.find('=') + 1);
    absl::string_view key = word.substr(0, word.find('='));
    if (key == kCmdlineLoad) {
      args.load = absl::StrSplit(value, ',', absl::SkipEmpty());
    } else if (key == kCmdlineDisks) {
      if (!absl::SimpleAtoi(value, &args.disks)) args.disks = 0;
    } else if (int64_t ms = 0; key == kCmdlineDiskWaitMs && absl::SimpleAtoi(value, &ms)) {
      args.disk_wait = absl::Milliseconds(ms);
    }
  }
  return args;
}

absl::StatusOr<std::string> FindVirtioPort(absl::string_view name) {
  const std::string base = "/sys/class/virtio-ports";
  std::vector<std::string> seen;
  for (const std::string& port : ListDir(base)) {
    // sysfs attributes report a size of one page whatever they hold.
    absl::StatusOr<std::string> n =
        ReadBoundedRegularFile(absl::StrCat(base, "/", port, "/name"), 4096, "virtio port name");
    absl::string_view got = n.ok() ? absl::StripTrailingAsciiWhitespace(*n) : "";
    if (got == name) return "/dev/" + port;
    if (!n.ok()) got = n.status().message();
    seen.push_back(absl::StrCat(port, "=", got));
  }
  return absl::NotFoundError(
      absl::StrCat("no virtio-serial port named ", name, " (", absl::StrJoin(seen, ", "), ")"));
}

std::vector<std::string> DiskBlockDevices() {
  std::vector<std::string> out;
  for (const std::string& dev : ListDir("/sys/block")) {
    if (access(absl::StrCat("/sys/block/", dev, "/device").c_str(), F_OK) == 0) {
      out.push_back(dev);
    }
  }
  return out;
}

int RunGuestAgent() {
  setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
  setenv("HOME", "/root", 1);
  absl::StatusOr<std::string> cmdline =
      ReadBoundedRegularFile("/proc/cmdline", 64 << 10, "kernel command line");
  GuestBootArgs args = ParseGuestCmdline(cmdline.ok() ? *cmdline : "");
  // virtio_console names a port from a control message after the port appears, and
  // announces the name with a "change" uevent.
  int uevents = OpenUeventSocket();
  const absl::Time deadline = MonotonicNow() + args.disk_wait;
  absl::StatusOr<std::string> port_path = FindVirtioPort(kChannelPort);
  WaitForUevents(uevents, deadline, [&] {
    port_path = FindVirtioPort(kChannelPort);
    return port_path.ok();
  });
  if (!port_path.ok()) {
    std::fprintf(stderr, "blkbench-vm-guest: %s\n", port_path.status().ToString().c_str());
    return 1;
  }
  int port = open(port_path->c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (port < 0) {
    std::fprintf(stderr, "blkbench-vm-guest: open %s: %s\n", port_path->c_str(), strerror(errno));
    return 1;
  }
  v1::VmEvent hello;
  utsname u{};
  uname(&u);
  hello.mutable_hello()->set_release(u.release);
  hello.mutable_hello()->set_error(PrepareDisks(args, uevents, deadline));
  if (uevents >= 0) close(uevents);
  for (const std::string& d : DiskBlockDevices()) hello.mutable_hello()->add_block_devices(d);
  if (absl::Status s = Send(port, hello); !s.ok()) {
    std::fprintf(stderr, "blkbench-vm-guest: hello: %s\n", s.ToString().c_str());
    return 1;
  }
  FrameReader reader(port);
  for (;;) {
    v1::VmRequest req;
    absl::Status s = reader.Read(req, absl::InfiniteFuture());
    if (!s.ok()) {
      std::fprintf(stderr, "blkbench-vm-guest: channel: %s; powering off\n", s.ToString().c_str());
      PowerOff();
      return 1;
    }
    if (req.has_poweroff()) {
      PowerOff();
      return 1;  // reboot() returned: /init reports it
    }
    if (req.has_run()) {
      if (absl::Status r = ServeRun(port, req.run()); !r.ok()) {
        std::fprintf(stderr, "blkbench-vm-guest: %s\n", r.ToString().c_str());
        return 1;
      }
    }
  }
}

}  // namespace blkbench::vm
