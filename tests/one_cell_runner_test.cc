// One cell runner, one run order: the same sim: cell and repeat run by the agent
// (RunExecutor) and by `blkbench sim` gives the same device facts and the same
// deterministic result, and the store and `blkbench sim` number and order runs by the
// same RunOrder.
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/cell/sim_device.h"
#include "agent/run_executor.h"
#include "agent/runners.h"
#include "cli/cli.h"
#include "common/run_order.h"
#include "common/testing/loop_device.h"
#include "controller/store/sqlite_store.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

using google::protobuf::util::MessageDifferencer;

// Three cells (iodepth 1, 8, 32) x 2 repeats on sim:ssd with mq-deadline.
constexpr char kMatrix[] = R"(name: one-runner
repeats: 2
job: {rw: randread, ioengine: io_uring, runtime: 2ms, time_based: 1, scheduler: mq-deadline}
matrix:
  iodepth: [1, 8, 32]
target: {device_class: sim:ssd, kernel: sim:6.16}
)";

class OneCellRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    matrix_ = dir_.File("m.yaml");
    std::ofstream(matrix_) << kMatrix;
  }

  // `blkbench sim` on the matrix; its stdout.
  std::string Sim(std::vector<std::string> flags) {
    std::vector<std::string> args = {"sim", matrix_, "-q"};
    args.insert(args.end(), flags.begin(), flags.end());
    std::ostringstream out, err;
    EXPECT_EQ(RunCli(args, out, err), 0) << err.str();
    return out.str();
  }

  testing::TempDir dir_{"one_cell_runner_test"};
  std::string matrix_;
};

// What must be equal between two runs of one cell and repeat: everything but the host
// and the engine's wall-clock time.
v1::RunResult Deterministic(v1::RunResult r) {
  r.clear_host();
  r.mutable_internals()->erase("engine.wall_ns");
  return r;
}

TEST_F(OneCellRunnerTest, TheAgentAndBlkbenchSimGiveTheSameDeviceFactsAndResult) {
  const std::string db = dir_.File("sim.db");
  Sim({"--db", db});
  auto store = SqliteStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<v1::Experiment> exp = (*store)->GetExperiment(1, true);
  ASSERT_TRUE(exp.ok()) << exp.status();
  ASSERT_EQ(exp->runs_size(), 6);

  AgentConfig config;
  config.agent_id = "a";
  config.state_dir = dir_.File("state");
  config.sim_devices = {"sim:ssd"};
  auto journal = QueueSettingsJournal::Open(config.state_dir);
  ASSERT_TRUE(journal.ok()) << journal.status();
  RunExecutor executor(config, **journal, DefaultRunnerFactory());

  std::vector<uint64_t> trace_hashes;
  for (const v1::Run& run : exp->runs()) {
    ASSERT_EQ(run.state(), v1::RUN_DONE) << run.error();
    v1::RunAssignment a;
    a.set_run_id(run.id());
    a.set_attempt(1);
    a.set_lease_id("lease");
    a.set_device_path("sim:ssd");
    *a.mutable_cell() = exp->cells(static_cast<int>(run.cell_index()));
    a.set_repeat(run.repeat());
    std::atomic<bool> cancel{false};
    const v1::RunFinished f = executor.Execute(a, cancel, [](const v1::Sample&) {});
    ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();

    // The same facts for the same sim device everywhere: what agents register, too.
    const v1::DeviceFacts facts = SimulatedDeviceFacts("sim:ssd");
    EXPECT_TRUE(MessageDifferencer::Equals(f.result().device(), facts))
        << f.result().device().DebugString();
    EXPECT_TRUE(MessageDifferencer::Equals(run.result().device(), facts))
        << run.result().device().DebugString();
    EXPECT_EQ(f.result().applied().scheduler(), "mq-deadline");

    std::string diff;
    MessageDifferencer d;
    d.ReportDifferencesToString(&diff);
    EXPECT_TRUE(d.Compare(Deterministic(run.result()), Deterministic(f.result())))
        << "run " << run.id() << ": " << diff;
    trace_hashes.push_back(static_cast<uint64_t>(f.result().internals().at("engine.trace_hash")));
  }
  // Repeats differ by their seed (CellForRepeat), on either path.
  EXPECT_NE(trace_hashes[0], trace_hashes[3]);  // cell 0, repeats 0 and 1
}

// (cell_index, repeat) of each run, in id order.
std::vector<RunSlot> SlotsOf(const v1::Experiment& e) {
  std::vector<RunSlot> slots;
  for (const v1::Run& r : e.runs()) slots.push_back({r.cell_index(), r.repeat()});
  return slots;
}

TEST_F(OneCellRunnerTest, TheStoreAndBlkbenchSimOrderRunsByRunOrder) {
  const std::vector<RunSlot> order = RunOrder(3, 2);

  // The store, as the controller fills it on submit: ids in RunOrder.
  auto store = SqliteStore::Open(dir_.File("store.db"));
  ASSERT_TRUE(store.ok()) << store.status();
  auto m = workloads::ParseMatrixFile(matrix_);
  ASSERT_TRUE(m.ok()) << m.status();
  v1::Experiment submitted;
  submitted.set_name(m->name);
  submitted.set_repeats(m->repeats);
  for (const v1::CellSpec& c : m->cells) *submitted.add_cells() = c;
  absl::StatusOr<uint64_t> id = (*store)->CreateExperiment(submitted);
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<v1::Experiment> stored = (*store)->GetExperiment(*id, false);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(SlotsOf(*stored), order);
  for (int i = 1; i < stored->runs_size(); ++i) {
    EXPECT_LT(stored->runs(i - 1).id(), stored->runs(i).id());
  }

  // `blkbench sim`, without a store and with one: runs in the same order, numbered as a
  // fresh store numbers them (its rows come out in the order they ran).
  for (const bool with_db : {false, true}) {
    std::vector<std::string> flags = {"--format", "json"};
    if (with_db) flags.insert(flags.end(), {"--db", dir_.File("sim.db")});
    google::protobuf::Value rows;
    const std::string json = Sim(flags);
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &rows).ok()) << json;
    ASSERT_EQ(rows.list_value().values_size(), static_cast<int>(order.size()));
    for (int i = 0; i < rows.list_value().values_size(); ++i) {
      const auto& f = rows.list_value().values(i).struct_value().fields();
      const std::string where = absl::StrCat(with_db ? "--db" : "no db", " row ", i);
      EXPECT_EQ(f.at("run").number_value(), stored->runs(i).id()) << where;
      EXPECT_EQ(f.at("cell_index").number_value(), order[static_cast<size_t>(i)].cell_index)
          << where;
      EXPECT_EQ(f.at("repeat").number_value(), order[static_cast<size_t>(i)].repeat) << where;
    }
  }

  // More repeats (the gate's --auto-repeat) follow RunOrder over the chosen cells.
  absl::StatusOr<std::vector<uint64_t>> added = (*store)->AddRuns(*id, {2, 0}, 2, 0);
  ASSERT_TRUE(added.ok()) << added.status();
  stored = (*store)->GetExperiment(*id, false);
  ASSERT_TRUE(stored.ok()) << stored.status();
  const std::vector<RunSlot> all = SlotsOf(*stored);
  ASSERT_EQ(all.size(), 10u);
  EXPECT_EQ(std::vector<RunSlot>(all.begin() + 6, all.end()),
            (std::vector<RunSlot>{{2, 2}, {0, 2}, {2, 3}, {0, 3}}));
}

}  // namespace
}  // namespace blkbench
