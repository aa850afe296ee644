// AgentService.Connect on gRPC's callback API: a reactor per agent stream, so an idle
// stream costs memory (its call, a reactor, a link), not a thread. Controller calls run
// on a small WorkPool, never on gRPC's callback threads; writes to the agent are queued
// per stream and never block the sender.
#ifndef BLKBENCH_CONTROLLER_AGENT_SERVICE_H_
#define BLKBENCH_CONTROLLER_AGENT_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "blkbench/v1/agent.grpc.pb.h"
#include "common/clock.h"
#include "controller/controller.h"
#include "controller/limits.h"
#include "controller/metrics/service_metrics.h"
#include "controller/work_pool.h"
#include "grpcpp/grpcpp.h"

namespace blkbench {

// Admits at most limits.max_agent_streams Connect streams at once (the one beyond ends at
// once with RESOURCE_EXHAUSTED) and ends a stream whose messages outrun its token bucket
// (limits.agent_messages_per_s, burst agent_message_burst) with RESOURCE_EXHAUSTED; its
// leases then take the path of any lost stream (reconnect within the TTL, or expiry).
// A message that does not parse ends the stream with INVALID_ARGUMENT.
//
// Threads: gRPC's callback threads only start reads and writes; each message is handled
// on one of limits.agent_workers threads (a stream has at most one message in hand at a
// time, and reads its next only after, so a stream's messages reach the Controller in
// order and a slow Controller slows the streams instead of queueing without bound).
// Messages to the agent (AgentLink::Send, from any thread) are queued on the stream and
// written one at a time; a stream with more than limits.agent_write_queue messages
// waiting behind the one being written is ended (its agent is not reading) — that Send
// and every later one return false.
//
// `controller`, `clock` and `metrics` (may be null) must outlive the service; the gRPC
// server serving it must be shut down before it is destroyed.
class AgentServiceImpl final : public v1::AgentService::CallbackService {
 public:
  AgentServiceImpl(Controller& controller, Clock& clock, const ServiceLimits& limits,
                   ServiceMetrics* metrics);

  grpc::ServerBidiReactor<v1::AgentMessage, v1::ControllerMessage>* Connect(
      grpc::CallbackServerContext* ctx) override;

  const StreamSlots& stream_slots() const { return slots_; }
  // Streams ended for outrunning their message rate.
  uint64_t rate_limited() const { return rate_limited_.load(); }
  // Streams ended because their write queue was full.
  uint64_t write_overflows() const { return write_overflows_.load(); }

  // Test seam: called on a worker thread with each stream's link when its agent's
  // register arrives (after the identity check), just before Controller::OnRegister, so
  // before the agent can see Registered. Set before serving.
  using LinkHook = std::function<void(const std::string& agent_id, std::shared_ptr<AgentLink>)>;
  void SetLinkHookForTest(LinkHook hook) { link_hook_ = std::move(hook); }

 private:
  class Stream;  // the reactor of one admitted stream (agent_service.cc)

  Controller& controller_;
  Clock& clock_;
  const ServiceLimits limits_;
  ServiceMetrics* const metrics_;  // may be null
  StreamSlots slots_;
  std::atomic<uint64_t> rate_limited_{0};
  std::atomic<uint64_t> write_overflows_{0};
  LinkHook link_hook_;
  WorkPool workers_;  // last: joined first, while everything its tasks use still lives
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_AGENT_SERVICE_H_
