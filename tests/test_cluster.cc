// The controller + agents test harness; see test_cluster.h.
#include "tests/test_cluster.h"

#include <sstream>
#include <utility>

#include "agent/runners.h"
#include "cli/cli.h"
#include "common/states.h"

namespace blkbench::testing {

AgentProcess::AgentProcess(AgentConfig config, AgentObserver* observer)
    : config_(std::move(config)) {
  absl::StatusOr<std::unique_ptr<QueueSettingsJournal>> journal =
      QueueSettingsJournal::Open(config_.state_dir);
  if (!journal.ok()) {
    ADD_FAILURE() << "agent " << config_.agent_id << ": " << journal.status();
    return;
  }
  journal_ = std::move(*journal);
  executor_ = std::make_unique<RunExecutor>(config_, *journal_, DefaultRunnerFactory());
  auto channels = ChannelFactoryFor(config_);
  EXPECT_TRUE(channels.ok()) << channels.status();
  agent_ = std::make_unique<Agent>(
      config_, *executor_, clock_,
      channels.ok() ? *channels : TcpChannelFactory(config_.controller), observer);
  thread_ = std::thread([this] { agent_->Run(); });
}

namespace {

AgentConfig ConfigFor(const std::string& id, const std::string& state_dir,
                      std::vector<AllowedDevice> devices, int port) {
  AgentConfig config;
  config.agent_id = id;
  config.state_dir = state_dir;
  config.devices = std::move(devices);
  config.controller = "127.0.0.1:" + std::to_string(port);
  return config;
}

}  // namespace

AgentProcess::AgentProcess(const std::string& id, const std::string& state_dir,
                           std::vector<AllowedDevice> devices, int port)
    : AgentProcess(ConfigFor(id, state_dir, std::move(devices), port)) {}

AgentProcess::~AgentProcess() {
  if (agent_ == nullptr) return;
  agent_->Stop();
  thread_.join();
}

ServerOptions ClusterTest::ServerDefaults() const {
  ServerOptions opts;
  opts.listen = "127.0.0.1:0";
  opts.insecure = true;  // plain text on loopback: every test client is admin
  opts.db_path = dir_.File("blkbench.db");
  opts.controller.sample_interval_ms = 100;
  opts.controller.heartbeat_interval_ms = 200;
  opts.tick_ms = 100;
  return opts;
}

void ClusterTest::StartController(const ServerOptions& options) {
  StartController(options, clock_);
}

void ClusterTest::StartController(const ServerOptions& options, Clock& clock) {
  auto server = ControllerServer::Start(options, clock);
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = std::move(*server);
}

std::string ClusterTest::ControllerAddress() const {
  return "127.0.0.1:" + std::to_string(server_->port());
}

v1::Experiment ClusterTest::WaitForEnd(uint64_t id, absl::Duration limit, bool with_runs) {
  const absl::Time deadline = absl::Now() + limit;
  uint64_t seen = 0;
  while (absl::Now() < deadline) {
    auto e = controller().GetExperiment(id, with_runs);
    if (e.ok() && IsEndedExperimentState(e->state())) return *e;
    seen = controller().WaitForChange(seen, absl::Seconds(1));
  }
  return *controller().GetExperiment(id, with_runs);
}

v1::Experiment ClusterTest::WaitForEndWithProgress(uint64_t id, absl::Duration per_run,
                                                   bool with_runs) {
  absl::Time deadline = absl::Now() + per_run;
  int ended = -1;
  uint64_t seen = 0;
  while (absl::Now() < deadline) {
    auto e = controller().GetExperiment(id, /*with_results=*/false);
    if (e.ok() && IsEndedExperimentState(e->state())) break;
    if (e.ok()) {
      int n = 0;
      for (const v1::Run& r : e->runs()) n += IsFinalRunState(r.state()) ? 1 : 0;
      if (n > ended) {
        ended = n;
        deadline = absl::Now() + per_run;
      }
    }
    seen = controller().WaitForChange(seen, absl::Seconds(1));
  }
  return *controller().GetExperiment(id, with_runs);
}

int ClusterTest::Cli(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  const int rc = RunCli(args, o, e, server_->InProcessChannel());
  *out = o.str();
  if (err) *err = e.str();
  return rc;
}

}  // namespace blkbench::testing
