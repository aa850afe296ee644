// Test helpers for running host commands: through the shell (RunCommand) or from an argv
// without one (Run), promtool on an exposition, and guards that undo a mount or a swapon
// whatever the test did.
#ifndef BLKBENCH_COMMON_TESTING_COMMAND_H_
#define BLKBENCH_COMMON_TESTING_COMMAND_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace blkbench::testing {

// Runs a shell command; returns its exit status (-1 if it could not run or was killed)
// and, in `out`, its stdout with trailing newlines removed.
int RunCommand(const std::string& cmd, std::string* out = nullptr);

// Runs argv (no shell, $PATH searched, stdin /dev/null) and returns its exit status (-1
// if it could not run) and output.
struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
CommandResult Run(const std::vector<std::string>& argv);

// Whether `name` is an executable in /usr/sbin, /sbin, /usr/bin or /bin.
bool HaveCommand(const std::string& name);

// Runs `promtool check metrics` on `text` (a Prometheus exposition): OK when promtool
// accepts it, FailedPrecondition when promtool is not installed, InvalidArgument with
// promtool's complaints otherwise.
absl::Status PromtoolCheckMetrics(const std::string& text);

// Unmounts `dir` on destruction.
class MountGuard {
 public:
  explicit MountGuard(std::string dir) : dir_(std::move(dir)) {}
  ~MountGuard();
  MountGuard(const MountGuard&) = delete;
  MountGuard& operator=(const MountGuard&) = delete;

 private:
  std::string dir_;
};

// Mounts `device` (formatted as ext4 first when `format`) read-only and without journal
// replay at `dir`, which is created: a rw mount writes on its own (journal commits), which
// would hide a write by the code under test in the device's write counter. Unmounted when
// the guard goes. Error: mkfs's or mount's output.
absl::StatusOr<std::unique_ptr<MountGuard>> MountExt4ReadOnly(const std::string& device,
                                                              const std::string& dir,
                                                              bool format = true);

// Runs `swapoff path` on destruction.
class SwapGuard {
 public:
  explicit SwapGuard(std::string path) : path_(std::move(path)) {}
  ~SwapGuard();
  SwapGuard(const SwapGuard&) = delete;
  SwapGuard& operator=(const SwapGuard&) = delete;

 private:
  std::string path_;
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_COMMAND_H_
