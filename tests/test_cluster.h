// A controller + agents harness for cross-component tests: an in-process ControllerServer
// on loopback TCP with a SQLite file, agents dialling it from their own threads, and the
// waits and CLI calls the tests share.
#ifndef BLKBENCH_TESTS_TEST_CLUSTER_H_
#define BLKBENCH_TESTS_TEST_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/config.h"
#include "common/clock.h"
#include "common/testing/loop_device.h"
#include "controller/server.h"
#include "gtest/gtest.h"

namespace blkbench::testing {

// One agent with its own journal and executor, running on its own thread from
// construction until destruction (which Stop()s it). Not thread-safe.
class AgentProcess {
 public:
  // `config.controller` and `config.state_dir` must be set. `observer` (may be null)
  // must outlive this object. A journal that cannot be opened fails the test and leaves
  // ok() false (and nothing running).
  explicit AgentProcess(AgentConfig config, AgentObserver* observer = nullptr);
  // An agent `id` offering `devices` (and the default sim: devices) to the controller on
  // 127.0.0.1:`port`.
  AgentProcess(const std::string& id, const std::string& state_dir,
               std::vector<AllowedDevice> devices, int port);
  ~AgentProcess();
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  bool ok() const { return agent_ != nullptr; }
  // REQUIRES: ok().
  Agent& agent() { return *agent_; }
  RunExecutor& executor() { return *executor_; }

 private:
  AgentConfig config_;
  SystemClock clock_;
  std::unique_ptr<QueueSettingsJournal> journal_;
  std::unique_ptr<RunExecutor> executor_;
  std::unique_ptr<Agent> agent_;
  std::thread thread_;
};

// A fixture whose SetUp starts a controller (gRPC on 127.0.0.1, any port; SQLite in the
// test's temporary directory) with quick samples, heartbeats and ticks.
class ClusterTest : public ::testing::Test {
 protected:
  explicit ClusterTest(const std::string& dir_tag) : dir_(dir_tag) {}

  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartController(ServerDefaults())); }

  // The options SetUp uses: listen on 127.0.0.1:0 (insecure), database
  // dir_/blkbench.db, samples every 100 ms, heartbeats every 200 ms, ticks every 100 ms.
  ServerOptions ServerDefaults() const;
  // Starts server_ with `options`; a fatal test failure when it cannot start.
  void StartController(const ServerOptions& options);
  // The same on `clock` (e.g. a FakeClock the test advances), which must outlive server_.
  void StartController(const ServerOptions& options, Clock& clock);

  Controller& controller() { return server_->controller(); }
  // "127.0.0.1:<port>" of the controller's gRPC listener.
  std::string ControllerAddress() const;

  // Waits (on the controller's change signal, not the clock) until experiment `id`
  // ends or `limit` passes; returns it as it then is, with its runs if `with_runs`.
  v1::Experiment WaitForEnd(uint64_t id, absl::Duration limit = absl::Minutes(2),
                            bool with_runs = true);

  // Waits like WaitForEnd, but the bound is on progress, not on the whole experiment:
  // it gives up only when `per_run` passes with no run of the experiment ending (so a
  // big experiment, a busy machine or the ASan build gets the time its work needs).
  v1::Experiment WaitForEndWithProgress(uint64_t id, absl::Duration per_run, bool with_runs = true);

  // Runs the CLI in-process against the controller; returns its exit code.
  int Cli(const std::vector<std::string>& args, std::string* out, std::string* err = nullptr);

  TempDir dir_;
  SystemClock clock_;
  std::unique_ptr<ControllerServer> server_;
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_TESTS_TEST_CLUSTER_H_
