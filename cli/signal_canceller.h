// SIGINT and SIGTERM as a cancel flag for the daemon-less `blkbench run` (and calibrate):
// the running run stops through the executor's cancel path, and the host is put back,
// instead of the process dying with a device changed or a guest left behind.
#ifndef BLKBENCH_CLI_SIGNAL_CANCELLER_H_
#define BLKBENCH_CLI_SIGNAL_CANCELLER_H_

#include <atomic>
#include <csignal>
#include <functional>
#include <string>
#include <thread>

namespace blkbench {

// For as long as it lives, SIGINT and SIGTERM set `cancel` (and, the first time, call
// `on_first`, from its own thread) instead of ending the process; each says so on stderr:
// "<who><signal>: <doing>", then "<who>still <doing>, please wait". The signals are
// blocked in every thread started meanwhile (the executor's jobs included) and taken by
// one thread with sigwait; the old mask comes back at the end. One at a time per process.
class SignalCanceller {
 public:
  // who: "blkbench run: "; doing: "stopping the run and restoring the device".
  SignalCanceller(std::atomic<bool>& cancel, std::string who, std::string doing,
                  std::function<void()> on_first = nullptr);
  ~SignalCanceller();
  SignalCanceller(const SignalCanceller&) = delete;
  SignalCanceller& operator=(const SignalCanceller&) = delete;

 private:
  const std::string who_;
  const std::string doing_;
  const std::function<void()> on_first_;
  sigset_t set_, old_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CLI_SIGNAL_CANCELLER_H_
