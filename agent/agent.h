// Agent: the daemon's connection to the controller. Dials out one AgentService.Connect
// stream, registers host and device facts, heartbeats, runs assignments (one thread
// per run, through RunExecutor), streams sequence-numbered samples and the result, and
// keeps everything unacknowledged to resend after a reconnect.
//
// Leases and fencing: an assignment (run, attempt) is started only once a heartbeat
// listing it is answered by a Renewed naming it. Each run keeps the send time of the
// newest heartbeat whose renewal was confirmed; the controller's lease runs at least a
// TTL from then, so the agent stops writing (fences itself) at TTL - TTL/3 after it,
// whether or not the stream is still up. docs/architecture.md has the timing argument.
#ifndef BLKBENCH_AGENT_AGENT_H_
#define BLKBENCH_AGENT_AGENT_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "agent/config.h"
#include "agent/metrics/observer.h"
#include "agent/run_executor.h"
#include "blkbench/v1/agent.grpc.pb.h"
#include "common/clock.h"
#include "grpcpp/grpcpp.h"

namespace blkbench {

using ChannelFactory = std::function<std::shared_ptr<grpc::Channel>()>;

// Channel to the agent config's controller address (host:port or unix:/path), with
// `credentials` (null: without TLS).
ChannelFactory TcpChannelFactory(const std::string& address,
                                 std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);
// The channel an agent with `config` dials, as tls::ClientTransportFor decides: mutual
// TLS with config.tls_dir's CA and agent-<agent_id> certificate; plain text to a Unix
// socket or loopback; plain text to another host only with config.insecure. Logs the
// transport (a warning for plain-text TCP). Errors name the missing file, or the
// `insecure` key when plain text is refused.
absl::StatusOr<ChannelFactory> ChannelFactoryFor(const AgentConfig& config);

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
  // What the agent holds in memory, entry counts per structure: once every run's result
  // is acknowledged and its thread joined, each is back to zero but `device_writers`
  // (one per device ever run on, bounded by the allowlist). For tests and the memory soak.
  struct DebugSizes {
    size_t runs = 0;
    size_t retired = 0;
    size_t unanswered_heartbeats = 0;
    size_t outbox = 0;
    size_t device_writers = 0;
    bool operator==(const DebugSizes&) const = default;
  };
  DebugSizes Sizes() ABSL_LOCKS_EXCLUDED(mu_);
  // Streams opened to the controller so far (a reconnect opens one more).
  uint64_t Sessions() ABSL_LOCKS_EXCLUDED(mu_);
  // The fraction of the lease TTL the agent keeps as margin: it stops writing a run at
  // TTL - TTL/kFenceMarginDivisor after the send time of its last confirmed renewal.
  static constexpr int64_t kFenceMarginDivisor = 3;

 private:
  struct ActiveRun {
    v1::RunAssignment assignment;
    std::atomic<bool> cancel{false};
    bool launched = false;  // the thread was started (its lease was confirmed)
    bool fenced = false;    // cancel was set by the fencing clock
    // Agent monotonic time at which the newest confirmed renewal was sent; 0 = none yet.
    int64_t renewed_ms = 0;
    // Notified when the run's thread has ended (or at once if it never starts); a later
    // attempt of the same run waits for it, so one device never has two writers.
    std::shared_ptr<absl::Notification> exited = std::make_shared<absl::Notification>();
    std::shared_ptr<absl::Notification> wait_for;  // the device's previous writer's `exited`
    std::deque<v1::RunSample> unacked;             // samples not yet acknowledged
    std::optional<v1::RunFinished> finished;       // result not yet acknowledged
    uint64_t last_seq = 0;                         // of the samples produced so far
    // Resending without a reconnect: what is unacknowledged is sent again at
    // resend_at_ms (monotonic; 0 = not yet scheduled), backing off while nothing is
    // acknowledged, sooner when the controller asks (Ack.retry_after_ms).
    int64_t resend_at_ms = 0;
    int64_t resend_backoff_ms = 0;
    std::thread thread;
  };
  using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::ControllerMessage>;

  // One connection, until the stream breaks; the status the controller ended it with.
  grpc::Status Session();
  // Host facts, and each allowlisted device the executor offers: its identity is recorded
  // at the first registration and re-checked at later ones (RunExecutor::OfferDevices,
  // thread-safe with running runs; called without mu_).
  v1::Register MakeRegister() ABSL_LOCKS_EXCLUDED(mu_);
  void Handle(const v1::ControllerMessage& msg);
  // Records an assignment (a newer attempt supersedes an older one of the same run; a
  // repeat of the same attempt is confirmed again) and asks for its lease with a
  // heartbeat.
  void StartRun(const v1::RunAssignment& a);
  // Starts the run's thread (after its lease was confirmed).
  void Launch(ActiveRun* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnRenewed(const v1::Renewed& renewed);
  // A heartbeat of every held run, remembered by seq for the fencing clock.
  bool SendHeartbeat();
  // Stops runs whose confirmed renewal is older than TTL - margin; runs until Stop().
  void FenceLoop();
  // Moves a run out of runs_ into retired_ (joined later by ReapRetired or Stop).
  void Retire(std::map<uint64_t, std::unique_ptr<ActiveRun>>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReapRetired() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes one message on the current stream (blocking; false if there is none or it
  // broke). Only the session's sender thread and the registration call it.
  bool Send(const v1::AgentMessage& msg) ABSL_LOCKS_EXCLUDED(mu_);
  // Queues a message for the sender thread; false (dropped) when no session is up —
  // what must arrive is kept as unacknowledged and resent after the next registration.
  bool Post(v1::AgentMessage msg, bool resend = false) ABSL_LOCKS_EXCLUDED(mu_);
  bool PostLocked(v1::AgentMessage msg, bool resend) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes queued messages in order until the session ends: the only writer besides
  // registration, so no run thread and not the reader ever blocks on the network.
  void Sender(uint64_t session);
  void ResendUnacked();
  // Resends the unacknowledged messages of runs whose resend time has come (called on
  // every heartbeat tick), so a controller that failed to store them gets them again
  // on the same stream.
  void ResendDue();
  // The unacknowledged samples and result of `run`, as messages.
  static void AppendUnacked(const ActiveRun& run, std::vector<v1::AgentMessage>* out);
  void Heartbeats(uint64_t session);
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
  const std::string instance_id_;  // Register.instance_id: random per process
  uint64_t heartbeat_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, int64_t> heartbeat_sent_ms_ ABSL_GUARDED_BY(mu_);         // by seq, unanswered
  std::deque<std::pair<v1::AgentMessage, bool>> outbox_ ABSL_GUARDED_BY(mu_);  // (msg, resend)
  uint64_t fence_epoch_ ABSL_GUARDED_BY(mu_) = 0;  // bumped when a fencing deadline moves
  std::map<uint64_t, std::unique_ptr<ActiveRun>> runs_ ABSL_GUARDED_BY(mu_);
  // By device path: the `exited` of the run launched last on it (Launch chains runs).
  std::map<std::string, std::shared_ptr<absl::Notification>> device_writer_ ABSL_GUARDED_BY(mu_);
  // Superseded or canceled attempts whose threads are still to be joined.
  std::vector<std::unique_ptr<ActiveRun>> retired_ ABSL_GUARDED_BY(mu_);
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_AGENT_H_
