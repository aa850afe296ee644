// The exporter fed from a real Controller on a real SQLite store (FakeClock, fake agent
// link): state counts and agents come from the store/Controller as the server's ticker
// reads them; run samples are relayed the way Controller::OnSample will call the observer.
#include <unistd.h>

#include <filesystem>

#include "common/clock.h"
#include "controller/controller.h"
#include "controller/metrics/exposition_test_util.h"
#include "controller/metrics/prometheus_exporter.h"
#include "controller/metrics/state_counts.h"
#include "controller/store/sqlite_store.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using testing::Exposition;
using testing::ParseExposition;

constexpr char kMatrix[] = R"(name: t
repeats: 1
job: {rw: randread, bs: 4k, iodepth: 4, ioengine: io_uring, runtime: 1s, time_based: 1}
matrix:
  scheduler: [none, mq-deadline]
target: {device_class: ssd}
)";

class RecordingLink final : public AgentLink {
 public:
  bool Send(const v1::ControllerMessage& msg) override {
    absl::MutexLock lock(&mu_);
    if (msg.has_assign()) assignments_.push_back(msg.assign());
    return true;
  }
  std::vector<v1::RunAssignment> Assignments() {
    absl::MutexLock lock(&mu_);
    return std::exchange(assignments_, {});
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::RunAssignment> assignments_;
};

class ExporterControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("exporter_controller_test." + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto store = SqliteStore::Open((dir_ / "db.sqlite").string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    controller_ = std::make_unique<Controller>(*store_, clock_, ControllerOptions{});
    ASSERT_TRUE(controller_->Start().ok());
    ExporterOptions options;
    options.listen = "127.0.0.1:0";
    auto exporter = PrometheusExporter::Start(options, clock_);
    ASSERT_TRUE(exporter.ok()) << exporter.status();
    exporter_ = std::move(*exporter);
  }
  void TearDown() override {
    exporter_.reset();
    controller_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // What the server's ticker does between scrapes.
  void Refresh() {
    auto counts = CountStates(*store_);
    ASSERT_TRUE(counts.ok()) << counts.status();
    exporter_->OnStateCounts(*counts);
    auto agents = controller_->ListAgents();
    ASSERT_TRUE(agents.ok()) << agents.status();
    exporter_->OnAgentsChanged(*agents);
    exporter_->Sweep();
  }
  Exposition Scrape() {
    auto body = testing::HttpGet(exporter_->port(), "/metrics");
    EXPECT_TRUE(body.ok()) << body.status();
    auto exp = ParseExposition(body.ok() ? *body : "");
    EXPECT_TRUE(exp.ok()) << exp.status();
    return exp.ok() ? *exp : Exposition{};
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Controller> controller_;
  std::unique_ptr<PrometheusExporter> exporter_;
};

TEST_F(ExporterControllerTest, StatesAgentsAndLiveRunFromARealController) {
  auto exp = controller_->Submit("m.yaml", kMatrix);
  ASSERT_TRUE(exp.ok()) << exp.status();
  auto link = std::make_shared<RecordingLink>();
  v1::Register reg;
  reg.set_agent_id("lab-1");
  reg.mutable_host()->set_kernel_release("6.1.0");
  v1::DeviceFacts* dev = reg.add_devices();
  dev->set_path("/dev/nvme0n1");
  dev->set_device_class("ssd");
  ASSERT_TRUE(controller_->OnRegister(reg, link).ok());
  std::vector<v1::RunAssignment> assigned = link->Assignments();
  ASSERT_EQ(assigned.size(), 1u);  // one device: one run at a time
  const v1::RunAssignment a = assigned[0];

  Refresh();
  Exposition m = Scrape();
  EXPECT_EQ(m.Value("blkbench_runs", {{"state", "assigned"}}), 1.0);
  EXPECT_EQ(m.Value("blkbench_runs", {{"state", "queued"}}), 1.0);
  EXPECT_EQ(m.Value("blkbench_experiments", {{"state", "running"}}), 1.0);
  EXPECT_EQ(m.Value("blkbench_agents", {{"state", "connected"}}), 1.0);
  EXPECT_EQ(m.Value("blkbench_agent_devices", {{"agent", "lab-1"}, {"device_class", "ssd"}}), 1.0);

  v1::RunSample rs;
  rs.set_run_id(a.run_id());
  rs.set_attempt(a.attempt());
  rs.set_lease_id(a.lease_id());
  rs.mutable_sample()->set_seq(1);
  rs.mutable_sample()->set_interval_ns(500'000'000);
  rs.mutable_sample()->mutable_io()->set_read_ios(5000);
  rs.mutable_sample()->mutable_io()->set_read_bytes(5000 * 4096);
  controller_->OnSample("lab-1", rs);
  // As Controller::OnSample will, once wired: the committed run and its cell.
  auto run = store_->GetRun(a.run_id());
  ASSERT_TRUE(run.ok()) << run.status();
  exporter_->OnRunSample(*run, a.cell(), rs.sample());

  Refresh();
  m = Scrape();
  EXPECT_EQ(m.Value("blkbench_runs", {{"state", "running"}}), 1.0);
  const std::map<std::string, std::string> labels = {
      {"experiment", std::to_string(exp->id())},
      {"run", std::to_string(a.run_id())},
      {"agent", "lab-1"},
      {"device", "/dev/nvme0n1"},
      {"device_class", "ssd"},
      {"scheduler",
       a.cell().queue().scheduler().empty() ? "default" : a.cell().queue().scheduler()}};
  EXPECT_EQ(m.Value("blkbench_run_iops", labels), 10'000.0);

  v1::RunFinished fin;
  fin.set_run_id(a.run_id());
  fin.set_attempt(a.attempt());
  fin.set_lease_id(a.lease_id());
  fin.set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
  controller_->OnFinished("lab-1", fin);
  exporter_->OnRunFinished(*run);
  Refresh();
  m = Scrape();
  EXPECT_EQ(m.Value("blkbench_runs", {{"state", "done"}}), 1.0);
  EXPECT_EQ(m.Value("blkbench_runs", {{"state", "assigned"}}), 1.0);  // the next one placed
  EXPECT_TRUE(m.Find("blkbench_run_iops", labels).empty());
  EXPECT_EQ(m.Find("blkbench_run_io_total", labels).size(), 2u);

  controller_->OnDisconnect("lab-1", link.get());
  clock_.AdvanceMs(ExporterOptions{}.finished_grace_ms);
  Refresh();
  m = Scrape();
  EXPECT_EQ(m.Value("blkbench_agents", {{"state", "disconnected"}}), 1.0);
  EXPECT_EQ(m.Value("blkbench_agent_connected", {{"agent", "lab-1"}}), 0.0);
  EXPECT_TRUE(m.Find("blkbench_run_io_total").empty());
}

}  // namespace
}  // namespace blkbench
