// Test helper: wait for something a child process does to files, by the file system's own
// change notifications (inotify), not by looking again every few milliseconds.
#ifndef BLKBENCH_COMMON_TESTING_WAIT_FOR_FILES_H_
#define BLKBENCH_COMMON_TESTING_WAIT_FOR_FILES_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace blkbench::testing {

// Calls `done` now and again after every change under directory `root` (a file created,
// written, closed or moved in; directories made under it are watched as they appear)
// until it returns true or `deadline` passes. Returns done's last answer. With `only`,
// changes to other file names are ignored: `done` must not itself change the files it
// waits on (a store's shared-memory file changes when it is read).
bool WaitForFiles(const std::string& root, absl::Time deadline, const std::function<bool()>& done,
                  const std::vector<std::string>& only = {});

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_WAIT_FOR_FILES_H_
