// Limits on what clients can make the controller's gRPC server do (docs/security.md
// "Limits"): the configuration, the cap on concurrent streams of one kind (StreamSlots)
// and the per-stream message rate (TokenBucket). No gRPC headers: services.cc applies
// them, server.cc sizes the ServerBuilder from them.
#ifndef BLKBENCH_CONTROLLER_LIMITS_H_
#define BLKBENCH_CONTROLLER_LIMITS_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace blkbench {

// Defaults are for a lab of ~1,000 agents; tests use small values.
struct ServiceLimits {
  // Concurrent AgentService.Connect streams (--max_agent_streams). 2x a 1,000-agent lab:
  // a reconnecting agent holds a second slot until keepalive (15 s) retires its old,
  // half-open stream.
  int max_agent_streams = 2'000;
  // Concurrent WatchExperiment streams (--max_watch_streams): each holds a sync-server
  // thread while it runs (agent streams hold none: agent_service.h).
  int max_watch_streams = 64;
  // Sync-server threads kept for unary calls and for answering refused watches
  // (--unary_threads).
  int unary_threads = 64;
  // Threads that hand agents' messages to the Controller (--agent_workers). They wait on
  // the controller's mutex and, in OnRegister/OnFinished, on the store; more than a few
  // only queue on that mutex. Agent streams add none.
  int agent_workers = 8;
  // Messages one agent stream may have waiting behind the one being written
  // (--agent_write_queue); the stream is ended when one more is sent. A reading agent
  // never gets near it: the most the controller owes an agent at once is an ack per
  // message of a resend (its outbox holds at most 10,000, agent.cc kMaxOutbox) plus a
  // heartbeat's renewal and cancels; only an agent that stopped reading fills it, and
  // then it holds at most ~16,000 small messages (~2 MB) before the stream ends.
  int agent_write_queue = 16'384;
  // Streams one HTTP/2 connection may open at once (GRPC_ARG_MAX_CONCURRENT_STREAMS,
  // --max_streams_per_connection). An agent needs 1, a CLI call 1.
  int max_streams_per_connection = 16;
  // A unary call ends with DEADLINE_EXCEEDED after min(its own deadline, this)
  // (--unary_deadline_ms).
  int64_t unary_deadline_ms = 30'000;
  // A connection without calls is closed after this long (GRPC_ARG_MAX_CONNECTION_IDLE_MS,
  // --max_connection_idle_ms). Agents always hold their stream.
  int64_t max_connection_idle_ms = 300'000;
  // A TCP connection that has not finished TLS and sent HTTP/2 SETTINGS by then is
  // dropped (GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, --handshake_timeout_ms; gRPC's own
  // default is 120 s).
  int64_t handshake_timeout_ms = 10'000;
  // Messages per second and burst one agent stream may send (--agent_msg_rate,
  // --agent_msg_burst). What a busy agent sends, from agent/agent.cc:
  //   heartbeats      1 per heartbeat interval (5 s)                     0.2/s
  //   live samples    1 per run per sample interval (1 s); one run per
  //                   device, a big host has ~64 devices                 64/s
  //   results         1 per run end                                      < 64/s
  //   resends         after a store error (Ack.retry_after_ms) or a reconnect the
  //                   agent resends every unacked sample and result, at most once
  //                   per heartbeat (ResendDue runs on the heartbeat tick), and its
  //                   outbox holds at most 10,000 messages (kMaxOutbox):
  //                   <= 10,000 at once, <= 10,000 / 5 s               2,000/s
  // That is ~2,130/s sustained at worst and ~10,130 at once. The defaults are about
  // twice that: 4,000/s, and a burst of 20,000 (a reconnect's resend and a heartbeat's
  // resend back to back). Only a store outage so long that more than ~20,000 samples
  // wait unacked (64 runs for 5 min) makes a resend outrun the burst: the stream is then
  // ended after the messages the bucket allowed, which were stored and acknowledged on
  // it, and the agent resends the rest after reconnecting (within its backoff, at most
  // 10 s, inside the lease TTL): slower, nothing lost.
  double agent_messages_per_s = 4'000;
  double agent_message_burst = 20'000;
};

// InvalidArgument naming the flag of the first value out of range (caps >= 1, except
// unary_threads >= 0; times >= 1 ms and at most INT32_MAX, as gRPC's channel arguments
// take them; rates and bursts >= 1).
absl::Status CheckLimits(const ServiceLimits& limits);

// The ResourceQuota thread cap that keeps watch streams from starving unary calls: the
// sync server (ControllerService only) holds a thread per running call and keeps one
// more polling; when no thread is free and none may be created it answers
// RESOURCE_EXHAUSTED without running the handler (grpc ThreadManager::MainWorkLoop). So
// every watch slot gets a thread, plus unary_threads, plus the poller. Agent streams are
// on the callback API and take none of them.
int MaxServerThreads(const ServiceLimits& limits);

// At most `capacity` holders at once. Thread-safe.
class StreamSlots {
 public:
  explicit StreamSlots(int capacity) : capacity_(capacity) {}
  StreamSlots(const StreamSlots&) = delete;
  StreamSlots& operator=(const StreamSlots&) = delete;

  // Releases its slot when destroyed (if it holds one).
  class Slot {
   public:
    Slot(Slot&& other) noexcept : slots_(other.slots_) { other.slots_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    ~Slot();
    bool held() const { return slots_ != nullptr; }

   private:
    friend class StreamSlots;
    explicit Slot(StreamSlots* slots) : slots_(slots) {}
    StreamSlots* slots_;
  };

  // A held slot, or one that is not held (and a refusal counted) when all are taken.
  Slot TryAcquire();
  int capacity() const { return capacity_; }
  int in_use() const;
  uint64_t refused() const;
  // For tests: waits until at least `n` acquisitions were refused, or `limit` passed;
  // true in the first case.
  bool WaitForRefused(uint64_t n, absl::Duration limit) const;

 private:
  const int capacity_;
  mutable absl::Mutex mu_;
  int in_use_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
};

// A token bucket (RFC 2697's committed rate and burst): starts full with `burst` tokens
// and gains `rate_per_s` per second of `clock`'s monotonic time, never above `burst`.
// Not thread-safe: one per stream, used by the thread that reads it.
class TokenBucket {
 public:
  TokenBucket(Clock& clock, double rate_per_s, double burst);
  // Takes one token; false (and nothing taken) if none is left.
  bool TryTake();

 private:
  Clock& clock_;
  const double rate_per_ms_;
  const double burst_;
  double tokens_;
  int64_t last_ms_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_LIMITS_H_
