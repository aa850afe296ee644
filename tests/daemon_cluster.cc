// Daemons as child processes for cross-process tests; see daemon_cluster.h.
#include "tests/daemon_cluster.h"

#include <unistd.h>

#include <chrono>
#include <fstream>

#include "common/log/log.h"
#include "common/states.h"
#include "gtest/gtest.h"

namespace blkbench::testing {

std::string BuildDir() {
  const char* d = getenv("BLKBENCH_BUILD_DIR");
  return d ? d : ".";
}

bool DaemonsBuilt() {
  return access((BuildDir() + "/controller/blkbench-controller").c_str(), X_OK) == 0 &&
         access((BuildDir() + "/agent/blkbench-agent").c_str(), X_OK) == 0;
}

DaemonCluster::DaemonCluster(const std::string& tag) : dir_(tag), socket_(dir_.File("c.sock")) {}

std::unique_ptr<ChildProcess> DaemonCluster::StartController(const std::vector<std::string>& flags,
                                                             int tcp_port) {
  std::vector<std::string> argv{
      BuildDir() + "/controller/blkbench-controller",
      "--listen=" + (tcp_port > 0 ? "127.0.0.1:" + std::to_string(tcp_port) : ""),
      "--metrics_listen=", "--socket=" + socket_, "--db=" + db()};
  // Agents behind the chaos proxy dial loopback TCP: plain text there needs --insecure.
  if (tcp_port > 0) argv.emplace_back("--insecure");
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto p =
      std::make_unique<ChildProcess>(argv, dir_.File("controller.log"), ChildProcess::Log::kStderr);
  channel_ = grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials());
  stub_ = v1::ControllerService::NewStub(channel_);
  EXPECT_TRUE(
      channel_->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(30)));
  return p;
}

std::unique_ptr<ChildProcess> DaemonCluster::StartAgent(const std::string& name,
                                                        const std::string& config) {
  std::ofstream(dir_.File(name + ".yaml")) << config;
  return std::make_unique<ChildProcess>(
      std::vector<std::string>{BuildDir() + "/agent/blkbench-agent",
                               "--config=" + dir_.File(name + ".yaml"), "--metrics_listen="},
      dir_.File(name + ".log"), ChildProcess::Log::kStderr);
}

v1::Experiment DaemonCluster::WatchUntil(uint64_t id,
                                         const std::function<bool(const v1::Experiment&)>& pred,
                                         int timeout_s) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(timeout_s));
  v1::WatchExperimentRequest req;
  req.set_id(id);
  auto reader = stub_->WatchExperiment(&ctx, req);
  v1::WatchEvent ev;
  v1::Experiment last;
  while (reader->Read(&ev)) {
    last = ev.experiment();
    if (pred(last)) {
      ctx.TryCancel();
      break;
    }
  }
  reader->Finish();
  return last;
}

uint64_t DaemonCluster::Submit(const std::string& matrix) {
  grpc::ClientContext ctx;
  v1::SubmitExperimentRequest req;
  req.set_file_name("test.yaml");
  req.set_matrix_text(matrix);
  v1::Experiment e;
  grpc::Status s = stub_->SubmitExperiment(&ctx, req, &e);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return e.id();
}

v1::GetResultsResponse DaemonCluster::Results(uint64_t id) {
  grpc::ClientContext ctx;
  v1::GetResultsRequest req;
  req.set_experiment_id(id);
  req.set_with_samples(true);
  v1::GetResultsResponse resp;
  grpc::Status s = stub_->GetResults(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp;
}

std::vector<v1::AgentInfo> DaemonCluster::Agents() {
  grpc::ClientContext ctx;
  v1::ListAgentsResponse resp;
  grpc::Status s = stub_->ListAgents(&ctx, v1::ListAgentsRequest(), &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return {resp.agents().begin(), resp.agents().end()};
}

std::vector<std::string> DaemonCluster::LogEvents(const std::string& name,
                                                  const std::string& event) const {
  std::ifstream in(dir_.File(name));
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (LogField(line, "event") == event) out.push_back(line);
  }
  return out;
}

bool DaemonCluster::Ended(const v1::Experiment& e) { return IsEndedExperimentState(e.state()); }

}  // namespace blkbench::testing
