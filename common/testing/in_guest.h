// Runs a test's own body in a VM guest (common/vm) when the host kernel lacks what the
// test needs (bfq, null_blk, device-mapper, an I/O cgroup hierarchy) instead of skipping it.
//
//   TEST(NullBlkRealTest, CreatesAndRemovesARealDevice) {
//     if (!PathExists("/sys/kernel/config/nullb")) {
//       if (!InGuest()) return RunInGuest(NullBlkGuest());
//       GTEST_SKIP() << "...";  // the guest lacks it too: the host test fails with this
//     }
//     ... the real body, on a host that has null_blk or in the guest ...
//   }
//
// RunInGuest boots a guest kernel (deb:6.12*, or $BLKBENCH_TEST_GUEST_KERNEL) whose root is
// the host's, read-only over 9p, runs the GuestSetup's commands in it, then runs this very
// test binary (/proc/self/exe, so ASan builds too) there with --gtest_filter=<the current
// test> and BLKBENCH_IN_GUEST=1, prints the guest's output, and gives the host test the
// guest's verdict: it passes only when the guest's gtest ran the test and reported it OK.
// A failure, a skip, a crash or a timeout in the guest fails it, saying why. Without qemu
// the test skips with "qemu is absent: ...".
//
// One guest per process, shared while consecutive tests ask for the same GuestSetup (a TCG
// boot costs ~10 s); another setup reboots it, and a gtest Environment powers it off at the
// end of the test program. Under ctest every test is its own process, so each boots once.
//
// Not thread-safe: call from the test's own thread.
#ifndef BLKBENCH_COMMON_TESTING_IN_GUEST_H_
#define BLKBENCH_COMMON_TESTING_IN_GUEST_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace blkbench::testing {

// The environment variable that marks the guest's run of a test.
inline constexpr char kInGuestEnv[] = "BLKBENCH_IN_GUEST";

// What a guest must be given before a test runs in it.
struct GuestSetup {
  // For messages: what the guest offers that the host lacks ("bfq", "null_blk").
  std::string offers;
  // Shell lines run in the guest after boot, in order; each must exit 0 (modprobe a
  // module, mount a hierarchy). Tests with the same lines share a booted guest.
  std::vector<std::string> commands;
  // The longest the test takes on a host that has the feature (its I/O runtimes and its
  // own waits). The guest run is allowed this times the slowdown of emulation (TCG) and
  // of a sanitizer build, plus the time to start the binary.
  absl::Duration native_bound = absl::Seconds(30);
};

// Guests for the features the tests here need; the modules come from the guest kernel's
// package, configfs and cgroup2 are mounted by the guest's init.
GuestSetup LoopAndBfqGuest();    // loop devices that offer bfq
GuestSetup DeviceMapperGuest();  // loop devices and device-mapper (the host's dmsetup)
GuestSetup NullBlkGuest();       // null_blk with nr_devices=0, configured through configfs

// Whether this process is the guest's run of a test ($BLKBENCH_IN_GUEST=1).
bool InGuest();

// Runs the current test in a guest prepared by `setup` and records the outcome on the
// current test (a gtest failure, or a skip when qemu is absent). The caller returns right
// after: its body has run in the guest. Must not be called when InGuest().
void RunInGuest(const GuestSetup& setup);

// The guest's gtest output for one test, judged. Pure; exposed for its unit test.
struct GuestVerdict {
  bool passed = false;
  std::string why;  // when not passed: what the guest reported, for the failure message
};
GuestVerdict JudgeGuestRun(absl::string_view test_name, int exit_code, absl::string_view output);

// The guest's output as the host test prints it: each line prefixed "[guest] ", and gtest's
// skip marker reworded, because ctest (gtest_discover_tests' SKIP_REGULAR_EXPRESSION) would
// take it for the host test's own skip.
std::string QuoteGuestOutput(absl::string_view output);

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_IN_GUEST_H_
