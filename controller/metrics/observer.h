// ControllerObserver: how the Controller tells metrics (or anything else) about
// committed state changes, without knowing who listens. Implemented by PrometheusExporter.
#ifndef BLKBENCH_CONTROLLER_METRICS_OBSERVER_H_
#define BLKBENCH_CONTROLLER_METRICS_OBSERVER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "blkbench/v1/controller.pb.h"
#include "blkbench/v1/metrics.pb.h"
#include "blkbench/v1/workload.pb.h"

namespace blkbench {

// Runs and experiments by state, across the whole store. States never seen are absent
// (an observer treats them as 0).
struct StateCounts {
  std::map<v1::RunState, int64_t> runs;
  std::map<v1::ExperimentState, int64_t> experiments;
};

// Every method is called only after the change it reports is durably committed, and may
// be called with the Controller's lock held: implementations must be thread-safe, must
// not block, and must never call back into the Controller.
class ControllerObserver {
 public:
  virtual ~ControllerObserver() = default;

  // A sample of `run`'s current attempt (run.attempt(); run.agent_id() and
  // run.device_path() say where it runs) was stored. `cell` is the run's cell. The same
  // (run, attempt, seq) may be reported again when an agent resends after a lost ack;
  // observers must ignore duplicates.
  virtual void OnRunSample(const v1::Run& run, const v1::CellSpec& cell,
                           const v1::Sample& sample) = 0;

  // The current attempt of run `run.id()` ended: its final outcome was stored, or its
  // lease was lost (it may be re-queued and come back as a later attempt).
  virtual void OnRunFinished(const v1::Run& run) = 0;

  // The full list of known agents (connected or not) and their devices.
  virtual void OnAgentsChanged(const std::vector<v1::AgentInfo>& agents) = 0;

  // Current counts of runs and experiments by state.
  virtual void OnStateCounts(const StateCounts& counts) = 0;

  // The hooks below have empty defaults: observers that need them override them.

  // An agent registered (stored as `info`). `metrics_address` is where it serves
  // /metrics (host:port, wildcard host already resolved; "" = none).
  virtual void OnAgentRegistered(const v1::AgentInfo& info, const std::string& metrics_address) {
    (void)info;
    (void)metrics_address;
  }
  // `run`'s current attempt succeeded and `result` was stored; `cell` is its cell.
  // Called before OnRunFinished for the same attempt.
  virtual void OnRunResult(const v1::Run& run, const v1::CellSpec& cell,
                           const v1::RunResult& result) {
    (void)run;
    (void)cell;
    (void)result;
  }
  // A placement pass over the queued runs took `seconds` and assigned `placed` (each
  // with its new agent, device, attempt and started time).
  virtual void OnPlacement(double seconds, const std::vector<v1::Run>& placed) {
    (void)seconds;
    (void)placed;
  }
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_METRICS_OBSERVER_H_
