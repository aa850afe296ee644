// blkbench-vm-cell: the agent's cell runner inside a VM test host's guest (see
// docs/vm-hosts.md). The host agent starts it through the guest channel with one
// VmCellRequest on stdin; it answers with framed VmCellEvents on stdout (common/vm/
// channel.h): the offer of the guest's devices, or a run's samples and its RunFinished,
// with a heartbeat every second so the host can tell a slow step from a hung guest.
//
// It is the same RunExecutor the agent runs on its own host — allowlist, wrong-disk
// checks, queue settings, null_blk, cgroups, the executor — with the guest's devices as
// its allowlist and its state on the guest's /run tmpfs: a guest is booted for the
// agent and killed when a run is cancelled or fenced, so nothing it leaves survives.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "absl/synchronization/notification.h"
#include "agent/config.h"
#include "agent/device/null_blk.h"
#include "agent/device/queue_settings.h"
#include "agent/run_executor.h"
#include "agent/runners.h"
#include "blkbench/v1/agent.pb.h"
#include "common/bounded_file.h"
#include "common/vm/channel.h"
#include "common/vm/process.h"

namespace blkbench {
namespace {

constexpr char kStateDir[] = "/run/blkbench-vm-cell";
constexpr size_t kMaxRequestBytes = 1 << 20;

// Writes frames to stdout, one at a time (samples come from the runner's thread,
// heartbeats from their own).
class EventWriter {
 public:
  bool Write(const v1::VmCellEvent& event) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) return false;
    absl::Status s = vm::WriteFrame(STDOUT_FILENO, event, absl::InfiniteFuture());
    if (!s.ok()) {
      std::fprintf(stderr, "blkbench-vm-cell: stdout: %s\n", s.ToString().c_str());
      failed_ = true;
    }
    return !failed_;
  }

 private:
  std::mutex mu_;
  bool failed_ = false;
};

// The schedulers a cell may ask for are modules in Debian's kernels: load them so the
// guest's devices offer all four (a missing one is reported by the queue settings).
void LoadSchedulers() {
  vm::RunOptions quick;
  quick.timeout = absl::Seconds(30);
  for (const char* m : {"mq-deadline", "kyber-iosched", "bfq"}) {
    (void)vm::RunProcess({"modprobe", "-q", m}, quick);
  }
}

// The guest is the agent's own: cgroup layouts need the io controller in the children of
// the cgroup v2 root (the guest's init mounts it bare). Failure is left to the layout's
// own clear error.
void EnableIoController() {
  const int fd = open("/sys/fs/cgroup/cgroup.subtree_control", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  const char kIo[] = "+io";
  if (write(fd, kIo, sizeof(kIo) - 1) < 0) {
    std::fprintf(stderr, "blkbench-vm-cell: enabling the io controller: %s\n",
                 std::strerror(errno));
  }
  close(fd);
}

int Main() {
  std::string text;
  {
    char buf[65536];
    ssize_t n;
    while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0) {
      text.append(buf, static_cast<size_t>(n));
      if (text.size() > kMaxRequestBytes) break;
    }
  }
  v1::VmCellRequest request;
  if (text.size() > kMaxRequestBytes || !request.ParseFromString(text)) {
    std::fprintf(stderr, "blkbench-vm-cell: stdin is not a VmCellRequest (%zu bytes)\n",
                 text.size());
    return 2;
  }
  AgentConfig config;
  config.state_dir = kStateDir;
  config.sim_devices.clear();
  config.metrics_listen.clear();
  for (const v1::VmCellDevice& d : request.devices()) {
    config.devices.push_back({d.path(), d.device_class()});
  }
  if (request.null_blk()) {
    config.null_blk.enabled = true;
    struct stat st;
    if (stat((config.null_blk.configfs + "/nullb").c_str(), &st) != 0) {
      if (absl::Status loaded = LoadNullBlkModule(); !loaded.ok()) {
        std::fprintf(stderr, "blkbench-vm-cell: %s\n", loaded.ToString().c_str());
      }
    }
  }
  LoadSchedulers();  // bfq first: io.bfq.weight appears with it
  EnableIoController();
  mkdir(kStateDir, 0700);
  std::vector<std::string> extra_roots;
  if (config.null_blk.enabled) extra_roots.push_back(config.null_blk.configfs);
  auto journal = QueueSettingsJournal::Open(kStateDir, SystemPaths(), std::move(extra_roots));
  if (!journal.ok()) {
    std::fprintf(stderr, "blkbench-vm-cell: state dir: %s\n", journal.status().ToString().c_str());
    return 1;
  }
  // A previous run in this guest may have been cut off (its host agent crashed).
  if (auto recovered = (*journal)->RecoverAll(); !recovered.ok()) {
    std::fprintf(stderr, "blkbench-vm-cell: restoring what a previous run left: %s\n",
                 recovered.status().ToString().c_str());
    return 1;
  }
  RunExecutor executor(config, **journal, DefaultRunnerFactory());
  EventWriter out;
  // Identities are recorded by the offer, so a run offers first (the guest's disks are
  // the agent's own backing files: this is the same check the agent makes at home).
  DeviceOffer offer = executor.OfferDevices();
  if (request.has_offer()) {
    v1::VmCellEvent ev;
    for (v1::DeviceFacts& f : offer.offered) *ev.mutable_offered()->add_offered() = std::move(f);
    for (const auto& [path, reason] : offer.not_offered) {
      v1::VmCellNotOffered* n = ev.mutable_offered()->add_not_offered();
      n->set_path(path);
      n->set_reason(reason);
    }
    return out.Write(ev) ? 0 : 1;
  }
  if (!request.has_run()) {
    std::fprintf(stderr, "blkbench-vm-cell: the request has neither offer nor run\n");
    return 2;
  }
  absl::Notification done;
  std::thread heartbeat([&] {
    uint64_t n = 0;
    while (!done.WaitForNotificationWithTimeout(absl::Seconds(1))) {
      v1::VmCellEvent ev;
      ev.set_alive(++n);
      if (!out.Write(ev)) return;
    }
  });
  // Cancel and fencing kill the whole guest (the host's Guest::Abort): nothing to watch.
  std::atomic<bool> cancel{false};
  v1::RunFinished finished = executor.Execute(request.run(), cancel, [&](const v1::Sample& s) {
    v1::VmCellEvent ev;
    *ev.mutable_sample() = s;
    out.Write(ev);
  });
  done.Notify();
  heartbeat.join();
  v1::VmCellEvent ev;
  *ev.mutable_finished() = std::move(finished);
  return out.Write(ev) ? 0 : 1;
}

}  // namespace
}  // namespace blkbench

int main() { return blkbench::Main(); }
