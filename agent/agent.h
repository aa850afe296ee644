// Agent: the daemon's connection to the controller. Dials out one AgentService.Connect
// stream, registers host and device facts, heartbeats, runs assignments (one thread
// per run, through RunExecutor), streams sequence-numbered samples and the result, and
// keeps everything unacknowledged to resend after a reconnect.
#ifndef BLKBENCH_AGENT_AGENT_H_
#define BLKBENCH_AGENT_AGENT_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "agent/config.h"
#include "agent/metrics/observer.h"
#include "agent/run_executor.h"
#include "blkbench/v1/agent.grpc.pb.h"
#include "common/clock.h"
#include "grpcpp/grpcpp.h"

namespace blkbench {

using ChannelFactory = std::function<std::shared_ptr<grpc::Channel>()>;

// Channel to the agent config's controller address (host:port or unix:/path).
ChannelFactory TcpChannelFactory(const std::string& address);

class Agent {
 public:
  // `observer` (may be null) hears of the connection, devices, runs and samples; it must
  // outlive the Agent. config.metrics_listen is reported at registration.
  Agent(AgentConfig config, RunExecutor& executor, Clock& clock, ChannelFactory channels,
        AgentObserver* observer = nullptr);
  ~Agent();  // Stop()s

  // Connects and serves until Stop(); reconnects with jittered backoff.
  void Run();
  // Cancels running runs, waits until they have restored the host, and makes Run()
  // return. Thread-safe; idempotent.
  void Stop();

  // For tests: number of runs this agent holds (running or awaiting acknowledgement),
  // and whether a session is registered right now.
  size_t ActiveRuns();
  bool Connected();
  // For tests: blocks until Connected() == want or the timeout passes.
  bool WaitConnected(bool want, absl::Duration timeout);
  // Streams opened to the controller so far (a reconnect opens one more).
  uint64_t Sessions() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct ActiveRun {
    v1::RunAssignment assignment;
    std::atomic<bool> cancel{false};
    std::deque<v1::RunSample> unacked;        // samples not yet acknowledged
    std::optional<v1::RunFinished> finished;  // result not yet acknowledged
    uint64_t next_seq = 1;
    uint64_t last_seq = 0;  // of the samples produced so far
    // Resending without a reconnect: what is unacknowledged is sent again at
    // resend_at_ms (monotonic; 0 = not yet scheduled), backing off while nothing is
    // acknowledged, sooner when the controller asks (Ack.retry_after_ms).
    int64_t resend_at_ms = 0;
    int64_t resend_backoff_ms = 0;
    std::thread thread;
  };
  using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::ControllerMessage>;

  void Session();  // one connection, until the stream breaks
  v1::Register MakeRegister() ABSL_LOCKS_EXCLUDED(mu_);
  void Handle(const v1::ControllerMessage& msg);
  void StartRun(const v1::RunAssignment& a);
  bool Send(const v1::AgentMessage& msg);
  void ResendUnacked();
  // Resends the unacknowledged messages of runs whose resend time has come (called on
  // every heartbeat tick), so a controller that failed to store them gets them again
  // on the same stream.
  void ResendDue();
  // The unacknowledged samples and result of `run`, as messages.
  static void AppendUnacked(const ActiveRun& run, std::vector<v1::AgentMessage>* out);
  void Heartbeats(uint64_t session);
  void FenceIfCutOff();
  std::vector<v1::ActiveRun> ActiveRunList() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t UnackedSamples() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const AgentConfig config_;
  RunExecutor& executor_;
  Clock& clock_;
  ChannelFactory channels_;
  AgentObserver* const observer_;  // may be null

  absl::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  Stream* stream_ ABSL_GUARDED_BY(write_mu_) = nullptr;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t session_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t sessions_opened_ ABSL_GUARDED_BY(mu_) = 0;
  grpc::ClientContext* ctx_ ABSL_GUARDED_BY(mu_) = nullptr;
  int64_t heartbeat_ms_ ABSL_GUARDED_BY(mu_) = 5'000;
  int64_t lease_ttl_ms_ ABSL_GUARDED_BY(mu_) = 30'000;
  int64_t last_contact_ms_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, std::unique_ptr<ActiveRun>> runs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_AGENT_H_
