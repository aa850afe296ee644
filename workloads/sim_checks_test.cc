// Tests for matrix checks against the engine's vocabulary: unknown sim: device classes,
// kernel profiles, patch flags, machine profiles and model parameters are errors at
// FILE:LINE:COL; a patch flag outside its scheduler is a warning.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/sim_vocabulary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/job_options.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A simulated target, so each case adds only the key under test (from line 3 on).
constexpr char kHead[] = "name: t\ntarget: {device_class: 'sim:null_blk'}\n";

constexpr char kDevices[] =
    "sim:null_blk, sim:hdd, sim:hdd-seed003, sim:ssd, sim:ssd-sata, sim:ssd-seed004, "
    "sim:optane, sim:optane-p5800x";
constexpr char kFlags[] =
    "plug-batch-retry, dd-batch-dispatch, bfq-batch-dispatch, dd-serialize-dispatch, "
    "dd-insert-lists, split-whole-bio, wake-by-tags, tag-no-preempt, bfq-one-group-no-idle";

std::vector<std::string> Errors(const std::string& text) {
  absl::StatusOr<Matrix> m = ParseMatrix(text, "m.yaml");
  EXPECT_FALSE(m.ok()) << "parsed:\n" << text;
  if (m.ok()) return {};
  return absl::StrSplit(std::string(m.status().message()), '\n');
}

std::vector<std::string> Warnings(const std::string& text) {
  absl::StatusOr<Matrix> m = ParseMatrix(text, "m.yaml");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? m->warnings : std::vector<std::string>{};
}

TEST(SimChecksTest, ErrorsArePositionedAndListWhatWasExpected) {
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"name: t\ntarget: {device_class: 'sim:nullblk'}\n",
       absl::StrCat("m.yaml:2:24: key 'device_class': unknown simulated device 'sim:nullblk' (did "
                    "you mean 'sim:null_blk'?); the engine models ",
                    kDevices)},
      {"name: t\ntarget: {device_class: 'sim:floppy'}\n",
       absl::StrCat("m.yaml:2:24: key 'device_class': unknown simulated device 'sim:floppy'; the "
                    "engine models ",
                    kDevices)},
      {absl::StrCat(kHead, "matrix:\n  kernel: ['sim:6.16', 'sim:6.16+dd_batch_dispatch']\n"),
       absl::StrCat("m.yaml:4:24: key 'kernel': unknown patch flag 'dd_batch_dispatch' in "
                    "'sim:6.16+dd_batch_dispatch' (did you mean 'dd-batch-dispatch'?); patch "
                    "flags: ",
                    kFlags)},
      {absl::StrCat(kHead, "matrix:\n  kernel: ['sim:6.16+bogus']\n"),
       absl::StrCat("m.yaml:4:12: key 'kernel': unknown patch flag 'bogus' in 'sim:6.16+bogus'; "
                    "patch flags: ",
                    kFlags)},
      {"name: t\ntarget: {device_class: 'sim:hdd', kernel: 'sim:6+wake-by-tags'}\n",
       "m.yaml:2:43: key 'kernel': expected sim:<major>.<minor>[+patch...] (e.g. "
       "sim:6.16+dd-batch-dispatch), got 'sim:6+wake-by-tags' (version \"6\" is not "
       "<major>.<minor>)"},
      {"name: t\ntarget: {device_class: 'sim:hdd', kernel: 'sim:6.16+'}\n",
       absl::StrCat("m.yaml:2:43: key 'kernel': expected sim:<major>.<minor>[+patch...] (e.g. "
                    "sim:6.16+dd-batch-dispatch), got 'sim:6.16+' (empty patch flag after '+'; "
                    "patch flags: ",
                    kFlags, ")")},
      {"name: t\ntarget: {device_class: 'sim:hdd', kernel: 'sim:5.18+wake-by-tags+wake-by-tags'}\n",
       "m.yaml:2:43: key 'kernel': patch flag 'wake-by-tags' is given twice in "
       "'sim:5.18+wake-by-tags+wake-by-tags'"},
      {"name: t\ntarget: {device_class: 'sim:hdd', machine: desktop16}\n",
       "m.yaml:2:44: key 'machine': unknown machine profile 'desktop16' (did you mean "
       "'desktop-16'?); profiles: small-vm, kvm-2vcpu, desktop-16, server-128-4node, or a "
       "path to a profile file (containing '/' or ending in .yaml)"},
      {absl::StrCat(kHead, "device: {ssd: {queue_dept: 4}}\n"),
       "m.yaml:3:16: unknown key 'ssd.queue_dept' (did you mean 'ssd.queue_depth'?); ssd "
       "parameters: dies, read_us, page_size, ctrl_us, bus_mbps, fixed_us, write_ack_us, "
       "write_buffer, program_mbps, queue_depth, hw_queues"},
      {absl::StrCat(kHead, "device: {hdd: {rpm: fast}}\n"),
       "m.yaml:3:16: key 'hdd.rpm': expected an unsigned integer, got 'fast'"},
      {absl::StrCat(kHead, "device: {engine: {rq_affinity: 3}}\n"),
       "m.yaml:3:19: key 'engine.rq_affinity': expected an integer from 0 to 2 (0, 1 or 2 as "
       "/sys/block/X/queue/rq_affinity), got '3'"},
      {absl::StrCat(kHead, "device: {engine: {irq_cpus: 3}}\n"),
       "m.yaml:3:19: unknown key 'engine.irq_cpus' (did you mean 'engine.irq_cpu'?); engine "
       "parameters: can_queue, rq_affinity, irq_cpu, devices"},
      {absl::StrCat(kHead, "device: {engine: {devices: 2}}\nmatrix: {scheduler: [none, bfq]}\n"),
       "m.yaml:4:28: engine.devices 2 needs scheduler none (each device's own bfq is not "
       "modelled), got scheduler 'bfq' (cell 1: scheduler=bfq)"},
      {"name: t\ntarget: {device_class: 'sim:hdd'}\ndevice: {engine: {devices: 2}}\n",
       "m.yaml:2:24: engine.devices 2 needs a device without a per-LUN "
       "budget (sim:ssd, sim:null_blk, sim:optane...), got 'sim:hdd'"},
      {absl::StrCat(kHead, "device: {engine: {devices: 0}}\n"),
       "m.yaml:3:19: key 'engine.devices': expected an integer from 1 to 64 (identical "
       "devices the cell's jobs drive, as fio's filename=a:b (file_service_type)), got '0'"},
      // null_blk's table is the real module's (queue_mode 0..2); the engine's model takes 2.
      {absl::StrCat(kHead, "device: {null_blk: {queue_mode: 1}}\n"),
       "m.yaml:3:33: key 'null_blk.queue_mode': expected 2 (blk-mq), got '1' (the engine's "
       "null_blk model)"},
      {absl::StrCat(kHead, "matrix: {scheduler: [bfq, cfq]}\n"),
       "m.yaml:3:27: key 'scheduler': expected one of none, mq-deadline, bfq, kyber, got 'cfq'"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(Errors(c.text), ElementsAre(c.error)) << c.text;
  }
}

TEST(SimChecksTest, RealTargetsAndPathsAreNotTheEnginesBusiness) {
  // Real classes are labels and real kernels globs; a machine path is read where it runs.
  EXPECT_THAT(Warnings("name: t\ntarget: {device_class: nvme, kernel: '6.1*'}\n"), IsEmpty());
  absl::StatusOr<Matrix> with_file =
      ParseMatrix("name: t\ntarget: {device_class: 'sim:ssd', machine: ./lab.yaml}\n", "m.yaml",
                  {.read_machine_file = AttachedMachineFiles({{"./lab.yaml", "name: lab"}})});
  ASSERT_TRUE(with_file.ok()) << with_file.status();
  EXPECT_THAT(with_file->warnings, IsEmpty());
  EXPECT_THAT(
      Warnings("name: t\ntarget: {device_class: nvme}\ndevice: {null_blk: {queue_mode: 1}}\n"),
      IsEmpty());
}

// On a real kernel a patch is built in whatever the scheduler, so a sweep of scheduler x
// kernel naturally has cells the patch cannot change: those are controls, said once per
// (kernel, scheduler), never an error.
TEST(SimChecksTest, PatchOutsideItsSchedulerIsAWarningOncePerKernelAndScheduler) {
  EXPECT_THAT(Warnings(absl::StrCat(kHead,
                                    "repeats: 3\nmatrix:\n  scheduler: [mq-deadline, bfq]\n"
                                    "  numjobs: [1, 4]\n"
                                    "  kernel: ['sim:6.16', 'sim:6.16+dd-batch-dispatch']\n")),
              ElementsAre("m.yaml:7:24: warning: kernel 'sim:6.16+dd-batch-dispatch' with "
                          "scheduler bfq runs as sim:6.16 (dd-batch-dispatch changes only "
                          "mq-deadline); such cells are controls, not measurements of the patch"));
  // Alone, the mismatch is more likely a mistake: still a warning, naming the default.
  EXPECT_THAT(Warnings("name: t\ntarget: {device_class: 'sim:hdd', kernel: "
                       "'sim:6.16+bfq-one-group-no-idle'}\n"),
              ElementsAre("m.yaml:2:43: warning: kernel 'sim:6.16+bfq-one-group-no-idle' with "
                          "scheduler none runs as sim:6.16 (bfq-one-group-no-idle changes only "
                          "bfq); such cells are controls, not measurements of the patch"));
  // A series with a flag for each scheduler (seed 000) and flags for every scheduler.
  EXPECT_THAT(Warnings(absl::StrCat(kHead,
                                    "matrix:\n  scheduler: [mq-deadline, bfq]\n  kernel: "
                                    "['sim:6.16', 'sim:6.16+dd-batch-dispatch+bfq-batch-dispatch'"
                                    "]\n")),
              IsEmpty());
  EXPECT_THAT(Warnings(absl::StrCat(kHead,
                                    "matrix:\n  scheduler: [none, kyber]\n  kernel: "
                                    "['sim:6.18+plug-batch-retry']\n")),
              IsEmpty());
}

// The parser's fixed texts and tables say what the vocabulary says.
TEST(SimChecksTest, ParserTablesFollowTheVocabulary) {
  std::vector<std::string> names;
  for (std::string_view s : Schedulers()) names.emplace_back(s);
  EXPECT_EQ(FindOption("scheduler")->expected, "one of " + absl::StrJoin(names, ", "));
  // null_blk keys: the real module's configfs attributes are the model's parameters.
  std::vector<std::string> parser;
  for (std::string_view n : OptionNames(Scope::kNullBlk)) {
    parser.emplace_back(n.substr(std::string_view("null_blk.").size()));
  }
  std::vector<std::string> model;
  for (const DeviceParamDef& p : FindDeviceFamily("null_blk")->params) model.emplace_back(p.name);
  std::sort(parser.begin(), parser.end());
  std::sort(model.begin(), model.end());
  EXPECT_EQ(parser, model);
}

}  // namespace
}  // namespace blkbench::workloads
