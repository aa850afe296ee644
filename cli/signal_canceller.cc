// SIGINT/SIGTERM as a cancel flag; see signal_canceller.h.
#include "cli/signal_canceller.h"

#include <pthread.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace blkbench {

SignalCanceller::SignalCanceller(std::atomic<bool>& cancel, std::string who, std::string doing,
                                 std::function<void()> on_first)
    : who_(std::move(who)), doing_(std::move(doing)), on_first_(std::move(on_first)) {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, &old_);
  thread_ = std::thread([this, &cancel] {
    for (;;) {
      int sig = 0;
      if (sigwait(&set_, &sig) != 0) continue;
      if (done_.load()) return;
      const bool again = cancel.exchange(true);
      // write(2), not the CLI's stream: the main thread may be writing to it.
      const std::string msg = again ? absl::StrCat(who_, "still ", doing_, ", please wait\n")
                                    : absl::StrCat(who_, strsignal(sig), ": ", doing_, "\n");
      (void)!write(STDERR_FILENO, msg.data(), msg.size());
      if (!again && on_first_) on_first_();
    }
  });
}

SignalCanceller::~SignalCanceller() {
  done_.store(true);
  // Not to end the thread: SIGTERM is blocked and sigwait() takes it as the wake-up.
  pthread_kill(thread_.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

}  // namespace blkbench
