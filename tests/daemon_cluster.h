// Real daemons for cross-process tests: blkbench-controller and blkbench-agent from the
// build tree as child processes in a temporary directory, a client stub on the
// controller's Unix socket, and readers of their structured logs (common/log/log.h).
#ifndef BLKBENCH_TESTS_DAEMON_CLUSTER_H_
#define BLKBENCH_TESTS_DAEMON_CLUSTER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "blkbench/v1/controller.grpc.pb.h"
#include "common/testing/loop_device.h"
#include "grpcpp/grpcpp.h"
#include "tests/child_process.h"

namespace blkbench::testing {

// The build tree the daemons come from ($BLKBENCH_BUILD_DIR, else ".").
std::string BuildDir();
// True when both daemons are built there.
bool DaemonsBuilt();

// Not thread-safe.
class DaemonCluster {
 public:
  explicit DaemonCluster(const std::string& tag);

  const TempDir& dir() const { return dir_; }
  // The controller's Unix socket (for the test's client and for agents that dial it).
  const std::string& socket() const { return socket_; }
  std::string db() const { return dir_.File("db.sqlite"); }

  // Starts blkbench-controller on socket() (and on TCP 127.0.0.1:tcp_port when > 0)
  // with `flags` (e.g. "--lease_ttl_ms=3000") after the defaults, its stderr appended
  // to controller.log; waits until its socket answers. The database is db() unless a
  // --db flag is given.
  std::unique_ptr<ChildProcess> StartController(const std::vector<std::string>& flags,
                                                int tcp_port = 0);
  // Writes <name>.yaml with `config` (YAML) and starts blkbench-agent on it; its stderr
  // goes to <name>.log.
  std::unique_ptr<ChildProcess> StartAgent(const std::string& name, const std::string& config);

  // Follows the experiment's watch stream until `pred` holds (or the stream ends, or
  // `timeout` passes); returns the last state seen.
  v1::Experiment WatchUntil(uint64_t id, const std::function<bool(const v1::Experiment&)>& pred,
                            int timeout_s = 180);
  uint64_t Submit(const std::string& matrix);
  v1::GetResultsResponse Results(uint64_t id);
  std::vector<v1::AgentInfo> Agents();
  v1::ControllerService::Stub& stub() { return *stub_; }

  // The lines of log file `name` (e.g. "agent.log") whose event= is `event`.
  std::vector<std::string> LogEvents(const std::string& name, const std::string& event) const;

  static bool Ended(const v1::Experiment& e);

 private:
  TempDir dir_;
  std::string socket_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ControllerService::Stub> stub_;
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_TESTS_DAEMON_CLUSTER_H_
