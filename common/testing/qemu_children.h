// Test helper: which qemu processes a process still has, to check that a guest did not
// outlive what started it.
#ifndef BLKBENCH_COMMON_TESTING_QEMU_CHILDREN_H_
#define BLKBENCH_COMMON_TESTING_QEMU_CHILDREN_H_

#include <sys/types.h>

#include <vector>

namespace blkbench::testing {

// The pids of `parent`'s children whose command name starts with "qemu" (zombies, which
// are dead but not yet reaped, included: the caller asks whether they were reaped).
std::vector<pid_t> QemuChildren(pid_t parent);

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_QEMU_CHILDREN_H_
