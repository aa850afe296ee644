// RunInGuest: the shared guest, its setup, the guest's run of the current test and its
// verdict (see in_guest.h).
#include "common/testing/in_guest.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/vm/guest.h"
#include "common/vm/process.h"
#include "common/vm/qemu.h"
#include "common/vm/vm_host.h"
#include "gtest/gtest.h"

extern char** environ;

namespace blkbench::testing {
namespace {

// The guest kernel: a Debian 6.12 has bfq, null_blk, dm_mod and loop as modules.
constexpr char kDefaultKernel[] = "deb:6.12*";
constexpr char kKernelEnv[] = "BLKBENCH_TEST_GUEST_KERNEL";
// TCG on a shared 2-core machine boots in 8-25 s; these bound a hang, not speed.
constexpr absl::Duration kBootTimeout = absl::Minutes(3);
constexpr absl::Duration kSetupTimeout = absl::Minutes(1);
// Loading the test binary and its libraries over 9p and gtest's start, before the body.
constexpr absl::Duration kBinaryStart = absl::Seconds(20);
// How much slower than on the host the test's own work may run in the guest. TCG emulates
// every instruction: a pure CPU loop took 11x as long as on the host (2 shared cores,
// 2 vCPUs); time-based I/O runs and sleeps are not stretched. KVM is near native.
// ASan+UBSan builds: ~3x again, as on the host.
constexpr int kTcgSlowdown = 12;
constexpr int kKvmSlowdown = 2;
#if defined(__SANITIZE_ADDRESS__)
constexpr int kSanitizerSlowdown = 3;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kSanitizerSlowdown = 3;
#else
constexpr int kSanitizerSlowdown = 1;
#endif
#else
constexpr int kSanitizerSlowdown = 1;
#endif
// gtest's marker for a skipped test, which ctest matches on the host test's output.
constexpr char kSkipMarker[] = "[  SKIPPED ]";
// How much of a failed test's output its failure message quotes.
constexpr size_t kFailureTail = 2048;
// How much of the guest's output is kept for the verdict; one test prints far less.
constexpr size_t kMaxKept = 64 << 20;

// The guest shared by this process's tests and the commands it was set up with.
struct SharedGuest {
  std::unique_ptr<vm::Guest> guest;
  std::vector<std::string> commands;
};

SharedGuest& Shared() {
  static SharedGuest* shared = new SharedGuest;  // never destroyed: GuestEnvironment stops it
  return *shared;
}

void StopSharedGuest() {
  SharedGuest& s = Shared();
  if (s.guest == nullptr) return;
  if (absl::Status st = s.guest->Shutdown(); !st.ok()) {
    std::cout << "[guest] shutdown: " << st.message() << std::endl;
  }
  s.guest.reset();
  s.commands.clear();
}

// Powers the shared guest off when the test program ends.
class GuestEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { StopSharedGuest(); }
};
// Registered at static initialisation, as gtest's documentation allows: every binary that
// calls RunInGuest links this file.
[[maybe_unused]] ::testing::Environment* const kGuestEnvironment =
    ::testing::AddGlobalTestEnvironment(new GuestEnvironment);

std::string CurrentTestName() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info == nullptr ? "" : absl::StrCat(info->test_suite_name(), ".", info->name());
}

// What the guest's run of the test inherits from the host's environment: the sanitizers'
// options and blkbench's own variables (the build directory, a kernel spec, ...).
std::vector<std::string> ForwardedEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view kv = *e;
    const absl::string_view key = kv.substr(0, kv.find('='));
    if (key == kInGuestEnv) continue;
    if (absl::StartsWith(key, "BLKBENCH_") || absl::EndsWith(key, "SAN_OPTIONS")) {
      env.emplace_back(kv);
    }
  }
  env.push_back(absl::StrCat(kInGuestEnv, "=1"));
  return env;
}

// The shared guest prepared with `setup`, booting (or rebooting) it when needed. Reports
// what it does on stdout; errors say which step failed.
absl::StatusOr<vm::Guest*> GuestFor(const GuestSetup& setup) {
  SharedGuest& s = Shared();
  if (s.guest != nullptr && s.guest->alive() && s.commands == setup.commands) {
    return s.guest.get();
  }
  StopSharedGuest();
  vm::VmHostSpec spec;
  const char* kernel = std::getenv(kKernelEnv);
  spec.kernel = kernel != nullptr && *kernel != '\0' ? kernel : kDefaultKernel;
  const absl::Time start = vm::MonotonicNow();
  absl::StatusOr<vm::VmConfig> config = vm::PrepareVm(spec);
  if (!config.ok()) return config.status();
  const absl::Duration prepared = vm::MonotonicNow() - start;
  absl::StatusOr<std::unique_ptr<vm::Guest>> guest = vm::Guest::Boot(*config, kBootTimeout);
  if (!guest.ok()) return guest.status();
  const vm::VmFacts& f = (*guest)->facts();
  std::cout << "[guest] " << spec.kernel << " ready in " << absl::FormatDuration(prepared)
            << ", booted " << f.release << " (" << f.accel << ", qemu " << f.qemu_version << ", "
            << f.vcpus << " vCPUs, " << f.memory_mb << " MiB) in "
            << absl::FormatDuration(f.boot_time) << " for " << setup.offers << std::endl;
  for (const std::string& command : setup.commands) {
    absl::StatusOr<vm::GuestRunResult> r = (*guest)->Run({"sh", "-c", command}, kSetupTimeout);
    if (!r.ok()) return r.status();
    if (r->exit_code != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("guest setup `", command, "` exited ", r->exit_code, ": ", r->output));
    }
  }
  s.guest = *std::move(guest);
  s.commands = setup.commands;
  return s.guest.get();
}

absl::Duration TestTimeout(const GuestSetup& setup, const vm::Guest& guest) {
  const int slowdown = (guest.facts().accel == "kvm" ? kKvmSlowdown : kTcgSlowdown);
  return (kBinaryStart + setup.native_bound * slowdown) * kSanitizerSlowdown;
}

// The guest's output as it arrives: printed a whole line at a time (QuoteGuestOutput), so
// a slow or hung test shows how far it got, and kept for the verdict.
class StreamedOutput {
 public:
  void Add(absl::string_view data) {
    if (kept_.size() + data.size() <= kMaxKept) {
      kept_.append(data.data(), data.size());
    } else {
      overflowed_ = true;
    }
    pending_.append(data.data(), data.size());
    const size_t end = pending_.rfind('\n');
    if (end == std::string::npos) return;
    std::cout << QuoteGuestOutput(absl::string_view(pending_).substr(0, end + 1)) << std::flush;
    pending_.erase(0, end + 1);
  }
  // Prints an unfinished last line.
  void Flush() {
    std::cout << QuoteGuestOutput(pending_) << std::flush;
    pending_.clear();
  }
  const std::string& kept() const { return kept_; }
  bool overflowed() const { return overflowed_; }

 private:
  std::string kept_;
  std::string pending_;
  bool overflowed_ = false;
};

// The lines of `output` from "[ RUN      ] test" to the test's result line: its own output.
std::string TestSection(absl::string_view output, absl::string_view test_name) {
  const size_t start = output.find(absl::StrCat("[ RUN      ] ", test_name));
  if (start == absl::string_view::npos) return "";
  return std::string(output.substr(start));
}

}  // namespace

// The tests that use these alone do a few sysfs writes and at most 1 MiB of I/O.
GuestSetup LoopAndBfqGuest() {
  return {"loop devices with bfq", {"modprobe -a loop bfq"}, absl::Seconds(10)};
}

GuestSetup DeviceMapperGuest() {
  return {"loop devices and device-mapper", {"modprobe -a loop dm_mod"}, absl::Seconds(10)};
}

GuestSetup NullBlkGuest() {
  // nr_devices=0: no nullb0 of the module's own; the tests make theirs through configfs.
  return {"null_blk",
          {"modprobe null_blk nr_devices=0", "test -d /sys/kernel/config/nullb"},
          absl::Seconds(10)};
}

bool InGuest() {
  const char* v = std::getenv(kInGuestEnv);
  return v != nullptr && absl::string_view(v) == "1";
}

GuestVerdict JudgeGuestRun(absl::string_view test_name, int exit_code, absl::string_view output) {
  const std::string section = TestSection(output, test_name);
  if (section.empty()) {
    return {false, absl::StrCat("the guest did not run ", test_name, " (exit code ", exit_code,
                                "): no \"[ RUN      ]\" line in its output")};
  }
  if (absl::StrContains(section, absl::StrCat("[       OK ] ", test_name, " ("))) {
    if (exit_code == 0) return {true, ""};
    return {false, absl::StrCat(test_name, " passed in the guest but the binary exited with ",
                                exit_code, " (a sanitizer report at exit?)")};
  }
  if (absl::StrContains(section, absl::StrCat(kSkipMarker, " ", test_name))) {
    // gtest prints "file:line: Skipped" and the reason's lines before its marker.
    std::vector<std::string> reason;
    bool in_reason = false;
    for (absl::string_view line : absl::StrSplit(section, '\n')) {
      if (absl::StartsWith(line, kSkipMarker)) break;
      if (in_reason && !line.empty()) reason.emplace_back(line);
      if (absl::EndsWith(line, ": Skipped")) in_reason = true;
    }
    return {false, absl::StrCat(test_name, " skipped in the guest too, so the guest lacks what ",
                                "the host lacks: ",
                                reason.empty() ? "(no reason given)" : absl::StrJoin(reason, " "))};
  }
  if (const size_t failed = section.find(absl::StrCat("[  FAILED  ] ", test_name, " ("));
      failed != std::string::npos) {
    // The end of the test's own output holds its failures; all of it is printed above.
    const size_t from = failed > kFailureTail ? failed - kFailureTail : 0;
    return {false, absl::StrCat(test_name, " failed in the guest:\n",
                                section.substr(from, failed - from))};
  }
  return {false, absl::StrCat(test_name, " ended in the guest without a result (exit code ",
                              exit_code, "): a crash or a kill; its output is above")};
}

std::string QuoteGuestOutput(absl::string_view output) {
  std::string quoted;
  if (output.empty()) return quoted;
  absl::ConsumeSuffix(&output, "\n");
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    absl::StrAppend(&quoted, "[guest] ",
                    absl::StrReplaceAll(line, {{kSkipMarker, "[  SKIPPED in the guest ]"}}), "\n");
  }
  return quoted;
}

void RunInGuest(const GuestSetup& setup) {
  const std::string test = CurrentTestName();
  if (InGuest()) {
    ADD_FAILURE() << "RunInGuest called in the guest's run of " << test
                  << ": the guest must have what the host lacks, and the test should skip";
    return;
  }
  // The unit lane boots no guest (BLKBENCH_TEST_LANE: loop_device.cc says why).
  if (const char* lane = std::getenv("BLKBENCH_TEST_LANE"); lane && std::string(lane) == "unit") {
    ADD_FAILURE() << test << " is labelled unit but may boot a guest: list it in its binary's "
                  << "VM_TESTS (blkbench_test, CMakeLists.txt)";
    return;
  }
  if (absl::StatusOr<std::string> v = vm::QemuVersion(vm::VmConfig{}.qemu); !v.ok()) {
    GTEST_SKIP() << "qemu is absent: " << v.status().message() << "; " << test
                 << " needs a guest for " << setup.offers;
  }
  const absl::Time start = vm::MonotonicNow();
  absl::StatusOr<vm::Guest*> guest = GuestFor(setup);
  ASSERT_TRUE(guest.ok()) << "a guest for " << setup.offers << ": " << guest.status();
  const absl::Time booted = vm::MonotonicNow();

  // This very binary (the guest's root is the host's), by its path: /proc/self/exe in the
  // guest would name the guest program.
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0) << "readlink /proc/self/exe";
  vm::GuestRunRequest run;
  run.argv = {std::string(exe, static_cast<size_t>(n)), absl::StrCat("--gtest_filter=", test),
              "--gtest_color=no"};
  run.env = ForwardedEnvironment();
  char cwd[4096];
  run.cwd = getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : "/";
  run.timeout = TestTimeout(setup, **guest);
  StreamedOutput output;
  run.on_output = [&output](bool /*is_stderr*/, absl::string_view data) { output.Add(data); };
  std::cout << "[guest] running " << test << " in the guest (" << setup.offers << "), bound "
            << absl::FormatDuration(run.timeout) << std::endl;
  absl::StatusOr<vm::GuestRunResult> r = (*guest)->Run(run);
  const absl::Time done = vm::MonotonicNow();
  output.Flush();
  ASSERT_TRUE(r.ok()) << test << " in the guest: " << r.status();
  std::cout << "[guest] " << test << ": " << absl::FormatDuration(done - booted)
            << " in the guest, " << absl::FormatDuration(done - start)
            << " with the kernel, boot and setup" << std::endl;
  ASSERT_FALSE(output.overflowed()) << test << " printed more than " << kMaxKept
                                    << " bytes in the guest; its verdict cannot be read";
  GuestVerdict verdict = JudgeGuestRun(test, r->exit_code, output.kept());
  EXPECT_TRUE(verdict.passed) << verdict.why;
}

}  // namespace blkbench::testing
