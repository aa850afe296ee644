// A scheduler is its folder: fifo-test (engine/sched/fifo_test/, built for this test only)
// brings its code, its tunable `sort`, its patch flag `fifo-test-lifo` and — in the
// machine profile a matrix carries — its costs, and with one Register() line here (the
// registry line a built-in scheduler has in elevator_registry.cc) a matrix naming them is
// validated, expanded and run, with nothing of it in engine/model, engine/sim or common/.
// Its own binary: the vocabulary it registers is process-wide.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/sim_vocabulary.h"
#include "engine/model/config.h"
#include "engine/model/elevator_registry.h"
#include "engine/model/engine.h"
#include "engine/sched/fifo_test/fifo_test.h"
#include "engine/sim/machine_profile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench::engine {
namespace {

using ::testing::HasSubstr;

// desktop-16's profile with fifo-test's costs under schedulers:, as a lab writes a
// profile file for its machine.
std::string ProfileWithFifoTest(uint64_t dispatch_ns) {
  std::ifstream in(MachineProfilesDir() + "/desktop-16.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const std::string with =
      absl::StrCat("\nschedulers:\n  fifo-test:\n    dispatch_ns: ", dispatch_ns, "\n");
  return absl::StrReplaceAll(text.str(), {{"\nschedulers:\n", with}});
}

absl::StatusOr<workloads::Matrix> Parse(const std::string& body, uint64_t dispatch_ns = 200) {
  workloads::ParseOptions options;
  options.read_machine_file = workloads::AttachedMachineFiles(
      {{"fifo.yaml", ProfileWithFifoTest(dispatch_ns)}, {"other.yaml", ProfileWithFifoTest(20)}});
  return workloads::ParseMatrix(absl::StrCat("name: fifo\n", body), "m.yaml", options);
}

const ElevatorRegistry& Registry() {
  static const ElevatorRegistry* const r = [] {
    auto* registry = new ElevatorRegistry(ElevatorRegistry::Builtin());
    EXPECT_TRUE(registry->Register(FifoTestType()).ok());  // the folder's registry line
    return registry;
  }();
  return *r;
}

struct Outcome {
  uint64_t ios = 0;
  uint64_t trace_hash = 0;
};

Outcome RunCell(const v1::CellSpec& cell) {
  absl::StatusOr<EngineConfig> config = DeriveConfig(cell);
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok()) return {};
  absl::StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(*config, 0, Registry());
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return {};
  Engine& e = **engine;
  e.RunUntil(e.time_limit());
  EXPECT_FALSE(e.stalled()) << e.DebugState();
  return {.ios = e.counters().read_ios + e.counters().write_ios, .trace_hash = e.trace_hash()};
}

constexpr char kJob[] =
    "job: {rw: randread, bs: 4k, iodepth: 32, ioengine: libaio, direct: 1, runtime: 1s, "
    "time_based: 1, scheduler: fifo-test}\n";
// A drive that takes one command at a time, so the queue the scheduler orders is long.
constexpr char kOneCommandDrive[] = "device: {hdd: {queue_depth: 1}, engine: {can_queue: 32}}\n";

TEST(SchedulerFolderTest, UnknownUntilItsFolderRegistersIt) {
  // First: the vocabulary has never heard of it.
  absl::StatusOr<workloads::Matrix> m =
      Parse(absl::StrCat(kJob, "target: {device_class: 'sim:hdd', machine: fifo.yaml}\n"));
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("m.yaml:2:"));
  EXPECT_THAT(m.status().message(), HasSubstr("fifo-test"));

  ASSERT_TRUE(RegisterFifoTestVocabulary().ok());
  m = Parse(absl::StrCat(kJob, "target: {device_class: 'sim:hdd', machine: fifo.yaml}\n"));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->cells.size(), 1u);
  // Registering twice, or a name taken, is refused by the vocabulary.
  EXPECT_EQ(RegisterScheduler("mq-deadline", {}).code(), absl::StatusCode::kAlreadyExists);
}

TEST(SchedulerFolderTest, ItsTunableAndPatchFlagAreValidatedLikeBuiltinOnes) {
  ASSERT_TRUE(RegisterFifoTestVocabulary().ok());
  const std::string target = "target: {device_class: 'sim:hdd', machine: fifo.yaml}\n";
  // Its tunable under another scheduler, out of its range; another's tunable under it.
  for (const auto& [body, want] : std::vector<std::pair<std::string, std::string>>{
           {"job: {scheduler: mq-deadline, sort: 1}\n", "sort"},
           {"job: {scheduler: fifo-test, sort: 2}\n", "m.yaml:2:"},
           {"job: {scheduler: fifo-test, fifo_batch: 4}\n", "fifo_batch"},
       }) {
    absl::StatusOr<workloads::Matrix> m = Parse(body + target);
    ASSERT_FALSE(m.ok()) << body;
    EXPECT_THAT(m.status().message(), HasSubstr(want)) << body;
  }
  // Its patch flag, misspelt.
  {
    absl::StatusOr<workloads::Matrix> m = Parse(
        "job: {scheduler: fifo-test}\n"
        "target: {device_class: 'sim:hdd', machine: fifo.yaml, kernel: "
        "'sim:6.16+fifo-test-lifoo'}\n");
    ASSERT_FALSE(m.ok());
    EXPECT_THAT(m.status().message(), HasSubstr("did you mean 'fifo-test-lifo'?"));
  }
  absl::StatusOr<workloads::Matrix> m = Parse(absl::StrCat(
      kJob, "matrix: {sort: [0, 1], kernel: ['sim:6.16', 'sim:6.16+fifo-test-lifo']}\n", target));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->cells.size(), 4u);
  EXPECT_TRUE(m->warnings.empty());
  // Its flag under another scheduler changes nothing there: a warning, as for built-in ones.
  m = Parse(
      "job: {scheduler: mq-deadline}\n"
      "target: {device_class: 'sim:hdd', machine: fifo.yaml, kernel: 'sim:6.16+fifo-test-lifo'}\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->warnings.size(), 1u);
}

// sort: 1 on a disk shortens the seeks (measured: 95 I/Os against 76 in a second), the LIFO flag
// changes the dispatch order, and the profile's dispatch_ns is what a dispatch costs.
TEST(SchedulerFolderTest, ItsTunablePatchAndCostsChangeWhatTheEngineDoes) {
  ASSERT_TRUE(RegisterFifoTestVocabulary().ok());
  absl::StatusOr<workloads::Matrix> hdd = Parse(absl::StrCat(
      kJob, "matrix: {sort: [0, 1], kernel: ['sim:6.16', 'sim:6.16+fifo-test-lifo']}\n",
      "target: {device_class: 'sim:hdd', machine: fifo.yaml}\n", kOneCommandDrive));
  ASSERT_TRUE(hdd.ok()) << hdd.status();
  ASSERT_EQ(hdd->cells.size(), 4u);  // sort slowest: (0, fifo) (0, lifo) (1, fifo) (1, lifo)
  const Outcome fifo = RunCell(hdd->cells[0]), lifo = RunCell(hdd->cells[1]),
                sorted = RunCell(hdd->cells[2]);
  EXPECT_GT(fifo.ios, 0u);
  EXPECT_NE(lifo.trace_hash, fifo.trace_hash);
  EXPECT_GT(sorted.ios, fifo.ios * 11 / 10) << "fifo " << fifo.ios << ", sorted " << sorted.ios;
  EXPECT_EQ(RunCell(hdd->cells[0]).trace_hash, fifo.trace_hash);  // deterministic

  // A CPU-bound null_blk cell: a dispatch body of 20 us instead of 200 ns caps the rate.
  const std::string nullblk =
      absl::StrCat(kJob, "target: {device_class: 'sim:null_blk', machine: fifo.yaml}\n",
                   "device: {null_blk: {irqmode: 0, completion_nsec: 0}}\n");
  absl::StatusOr<workloads::Matrix> cheap = Parse(nullblk, 200), dear = Parse(nullblk, 20'000);
  ASSERT_TRUE(cheap.ok() && dear.ok()) << cheap.status() << dear.status();
  const Outcome fast = RunCell(cheap->cells[0]), slow = RunCell(dear->cells[0]);
  EXPECT_GT(fast.ios, slow.ios * 5) << "200 ns " << fast.ios << ", 20 us " << slow.ios;
}

// Without its costs in the machine profile the engine refuses the cell by name.
TEST(SchedulerFolderTest, AProfileWithoutItsCostsIsRefused) {
  ASSERT_TRUE(RegisterFifoTestVocabulary().ok());
  absl::StatusOr<workloads::Matrix> m =
      Parse(absl::StrCat(kJob, "target: {device_class: 'sim:hdd', machine: desktop-16}\n"));
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<EngineConfig> config = DeriveConfig(m->cells[0]);
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<Engine>> e = Engine::Create(*config, 0, Registry());
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("machine profile \"desktop-16\" ("));
  EXPECT_THAT(e.status().message(),
              HasSubstr("has no costs for scheduler \"fifo-test\": add schedulers: {fifo-test: "
                        "{dispatch_ns: N}}"));
}

}  // namespace
}  // namespace blkbench::engine
