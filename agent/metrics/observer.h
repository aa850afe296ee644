// AgentObserver: how the Agent tells its metrics exporter (or anything else) about its
// connection, devices, runs and sample buffer, without knowing who listens.
#ifndef BLKBENCH_AGENT_METRICS_OBSERVER_H_
#define BLKBENCH_AGENT_METRICS_OBSERVER_H_

#include <cstddef>

#include "blkbench/v1/agent.pb.h"

namespace blkbench {

// Implementations must be thread-safe (calls come from the session, heartbeat and run
// threads) and must not block or call back into the Agent.
class AgentObserver {
 public:
  virtual ~AgentObserver() = default;

  // The agent is about to register with `reg`: its host facts and every device it
  // offers (allowlisted and simulated). Called once per connection attempt.
  virtual void OnRegister(const v1::Register& reg) = 0;
  // The controller accepted the registration (true), or the stream ended (false).
  virtual void OnConnection(bool connected) = 0;
  // A run starts on its device (the executor is about to run it).
  virtual void OnRunStarted(const v1::RunAssignment& run) = 0;
  // The run's runner produced `sample` (before it is sent).
  virtual void OnRunSample(const v1::RunAssignment& run, const v1::Sample& sample) = 0;
  // The run ended with `finished` (its device is restored and free again).
  virtual void OnRunEnded(const v1::RunAssignment& run, const v1::RunFinished& finished) = 0;
  // A sample was written to the controller stream (first send or resend).
  virtual void OnSampleSent(bool resend) = 0;
  // The resend buffer changed: `buffered` samples (over all runs) now wait for an
  // acknowledgement; `acked` were just acknowledged and `dropped` just discarded (a
  // run's buffer was full, or the controller rejected the run).
  virtual void OnSampleBuffer(size_t buffered, size_t acked, size_t dropped) = 0;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_METRICS_OBSERVER_H_
