// Command-line conventions shared by blkbench-controller and blkbench-agent: `--help`
// lists the daemon's own flags (absl's default matches flags by the binary's file name,
// so it printed "No flags matched"), `--version` prints the version and git revision, and
// a release build does not run absl's mutex deadlock detector.
#ifndef BLKBENCH_COMMON_DAEMON_FLAGS_H_
#define BLKBENCH_COMMON_DAEMON_FLAGS_H_

#include <string>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "common/build_info.h"

namespace blkbench {

// Call before absl::ParseCommandLine. `usage` is the one-line synopsis.
inline void InitDaemonFlags(const std::string& program, const std::string& usage) {
  absl::FlagsUsageConfig config;
  // Our flags are defined in the daemons' main.cc files; absl's own are not ours to list.
  config.contains_help_flags = [](absl::string_view file) {
    return !absl::StrContains(file, "absl/");
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  // "controller/main.cc", not the build machine's absolute path.
  config.normalize_filename = [](absl::string_view file) {
    const size_t last = file.rfind('/');
    const size_t dir = last == absl::string_view::npos || last == 0 ? absl::string_view::npos
                                                                    : file.rfind('/', last - 1);
    return std::string(dir == absl::string_view::npos ? file : file.substr(dir + 1));
  };
  config.version_string = [program] { return VersionLine(program) + "\n"; };
  absl::SetFlagsUsageConfig(config);
  absl::SetProgramUsageMessage(usage);
#ifdef NDEBUG
  // Debian's absl is built with the deadlock detector on: every Lock() looks its mutex up
  // in a global cycle graph (9 % of the controller's CPU at 5,000 agents). The tests and
  // the ASan build keep it; a release daemon does not pay for it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_DAEMON_FLAGS_H_
