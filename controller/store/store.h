// The Store interface: everything the controller persists. SqliteStore is the embedded default,
// PgStore keeps it in PostgreSQL; OpenStore (store_factory.h) picks one from --db.
#ifndef BLKBENCH_CONTROLLER_STORE_STORE_H_
#define BLKBENCH_CONTROLLER_STORE_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "blkbench/v1/controller.pb.h"
#include "blkbench/v1/metrics.pb.h"

namespace blkbench {

// One sample or final outcome an agent reported, for Store::CommitReports (the
// controller's group commit, controller/report_batcher.h).
struct AgentReport {
  enum class Kind { kSample, kFinish };
  Kind kind = Kind::kSample;
  uint64_t run_id = 0;
  uint32_t attempt = 0;
  // The run's current lease: a report is stored only while the run's stored attempt and
  // lease_id are these (FailedPrecondition otherwise), so a report that waited in a batch
  // while its lease was lost cannot land on the re-queued or re-assigned run.
  std::string lease_id;
  v1::Sample sample;  // kSample: as AppendSample
  // kFinish: as FinishRun, and only once samples 1..samples_through of the attempt are
  // all stored (FailedPrecondition naming the missing ones otherwise): a run never
  // ends with holes.
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  std::string error;
  int64_t finished_unix_ms = 0;
  bool has_result = false;
  v1::RunResult result;
  uint64_t samples_through = 0;
};

// How far an experiment's runs got: what the controller needs to keep the experiment's
// state in line with its runs, without reading every run.
struct ExperimentProgress {
  v1::ExperimentState state = v1::EXPERIMENT_STATE_UNSPECIFIED;  // as stored
  uint64_t runs = 0;
  uint64_t queued = 0;      // RUN_QUEUED
  uint64_t final_runs = 0;  // RUN_DONE, RUN_FAILED or RUN_CANCELED
  uint64_t failed = 0;      // RUN_FAILED
};

// What UpdateRuns wrote: the first `count` runs; `status` is the error that stopped it.
struct RunsWritten {
  size_t count = 0;
  absl::Status status;
};

// CommitReports' refusals, shared by the implementations: FailedPrecondition unless
// `run` (as stored) is at the report's attempt and lease; FailedPrecondition naming the
// samples first_missing..samples_through that a kFinish report is missing.
absl::Status CheckReportLease(const AgentReport& report, const v1::Run& run);

// The arguments every implementation refuses before touching its database, with the same
// InvalidArgument messages: CreateExperiment without repeats or cells; AddRuns with count
// 0, no cells or a repeated cell index; FinishRun with a state that is not final.
absl::Status CheckNewExperiment(const v1::Experiment& experiment);
absl::Status CheckAddRuns(const std::vector<uint32_t>& cell_indices, uint32_t count);
absl::Status CheckFinalState(v1::RunState state);
absl::Status MissingSamples(const AgentReport& report, uint64_t first_missing);

// GetResults' rows without samples: each run of `experiment` (as GetExperiment returns
// it with results) with its cell, in run order; the experiment without its runs.
v1::GetResultsResponse ResultsOf(v1::Experiment experiment);

// Thread-safe: every method may be called from any thread. Every mutating method is
// one transaction: on error nothing it was asked to change has changed.
class Store {
 public:
  virtual ~Store() = default;

  // Stores a new experiment (name, file_name, matrix_text, repeats, cells, created time,
  // submitted_by, state QUEUED) and creates cells.size() * repeats runs in state RUN_QUEUED with
  // attempt 0. Returns the new experiment id (ids start at 1 and never repeat).
  // Cell i gets cell_index i (its stored CellSpec.index is set to i). Runs are created
  // repeat-major — repeat 0 of every cell, then repeat 1, ... — so dispatching in id
  // order spreads each cell's repeats over the experiment; their created time is the
  // experiment's. InvalidArgument if repeats is 0 or there are no cells.
  virtual absl::StatusOr<uint64_t> CreateExperiment(const v1::Experiment& experiment) = 0;

  // Appends `count` runs (RUN_QUEUED, attempt 0, created at created_unix_ms) to each of
  // `cell_indices`, repeat-major like CreateExperiment, with repeat numbers continuing
  // after each cell's highest repeat. An experiment that had ended DONE or FAILED is set
  // back to RUNNING (no error, no finished time). Returns the new run ids in id order.
  // NotFound for an unknown experiment; InvalidArgument for count 0, no cells, or a cell
  // index that is unknown or repeated; FailedPrecondition for a CANCELED experiment.
  virtual absl::StatusOr<std::vector<uint64_t>> AddRuns(uint64_t experiment_id,
                                                        const std::vector<uint32_t>& cell_indices,
                                                        uint32_t count,
                                                        int64_t created_unix_ms) = 0;

  // The experiment with its cells and runs (ordered by run id). Runs carry their
  // result only if with_results; last_sample and samples (count) are always filled.
  // last_sample, samples and result are those of each run's current attempt.
  // NotFound if there is no such id.
  virtual absl::StatusOr<v1::Experiment> GetExperiment(uint64_t id, bool with_results) = 0;

  // Newest first, at most `limit` (0 = all); without cells, runs or matrix text.
  virtual absl::StatusOr<std::vector<v1::Experiment>> ListExperiments(uint32_t limit) = 0;

  // Sets state, error and finished time. NotFound if there is no such id.
  virtual absl::Status UpdateExperimentState(uint64_t id, v1::ExperimentState state,
                                             const std::string& error,
                                             int64_t finished_unix_ms) = 0;

  // Records that `who` asked to cancel the experiment (its canceled_by; "" is stored as
  // "unknown"), durably, before any run is touched. NotFound if there is no such id.
  virtual absl::Status RecordCancel(uint64_t id, const std::string& who) = 0;

  // One run with last_sample, samples and (if recorded for its current attempt) its
  // result. NotFound if there is no such run.
  virtual absl::StatusOr<v1::Run> GetRun(uint64_t run_id) = 0;

  // Runs in any of `states`, across all experiments, ordered by id (result, last_sample
  // and samples omitted). Empty `states` → no runs.
  virtual absl::StatusOr<std::vector<v1::Run>> ListRunsInStates(
      const std::vector<v1::RunState>& states) = 0;

  // Writes a run's mutable bookkeeping fields: state, attempt, agent_id, device_path,
  // lease_id, started/finished times and error. The result is written only by
  // FinishRun. Setting RUN_QUEUED (a re-queue after a lost lease) deletes the run's
  // samples of every attempt in the same transaction, so a run's samples are always
  // those of one attempt. NotFound if there is no such run.
  virtual absl::Status UpdateRun(const v1::Run& run) = 0;

  // UpdateRun for each of `runs`, in order (a placement pass's assignments). SqliteStore
  // and PgStore write them in one transaction: all (count == runs.size()) or none (count 0 and the
  // error). The default implementation calls UpdateRun per run and stops at the first
  // error: the runs before it are written (count), the rest are not.
  virtual RunsWritten UpdateRuns(const std::vector<v1::Run>& runs);

  // Appends one sample of (run_id, attempt). Idempotent: a sample whose seq is already
  // stored for that run and attempt is ignored (returns OK). Committed before return.
  // Any attempt is accepted (fencing stale attempts is the caller's job); only the
  // current attempt's samples are listed. If `attempt` is the run's current attempt and
  // the run is RUN_ASSIGNED, it becomes RUN_RUNNING in the same transaction. NotFound if
  // there is no such run.
  virtual absl::Status AppendSample(uint64_t run_id, uint32_t attempt,
                                    const v1::Sample& sample) = 0;

  // Samples of the run's current attempt, ordered by seq. NotFound if there is no such run.
  virtual absl::StatusOr<std::vector<v1::Sample>> ListSamples(uint64_t run_id) = 0;

  // Records the final outcome of (run_id, attempt) in one durable transaction: state
  // (DONE, FAILED or CANCELED), error, finished time and, if given, the result.
  // Idempotent: if the run is already final for that attempt, returns OK and changes
  // nothing. FailedPrecondition if the run's current attempt is not `attempt`;
  // InvalidArgument if `state` is not final; NotFound if there is no such run. A result
  // replaces one recorded for an earlier attempt.
  virtual absl::Status FinishRun(uint64_t run_id, uint32_t attempt, v1::RunState state,
                                 const std::string& error, int64_t finished_unix_ms,
                                 const v1::RunResult* result) = 0;

  // Stores `reports` in order, durably, in one transaction: the group commit of what
  // agents send. The outer status is the transaction's: on error nothing is stored
  // (every report failed). Otherwise one status per report, in order: OK (stored, or a
  // duplicate/already-final report, as AppendSample and FinishRun are idempotent), or
  // that report's own refusal (NotFound, FailedPrecondition, InvalidArgument), in which
  // case it alone changed nothing.
  //
  // The default implementation calls GetRun, AppendSample and FinishRun per report; it
  // is not one transaction (its outer status is always OK). SqliteStore and PgStore: one
  // transaction. StoreWrapper forwards the batch whole, so a wrapped store keeps it one.
  virtual absl::StatusOr<std::vector<absl::Status>> CommitReports(
      const std::vector<AgentReport>& reports);

  // The experiment's stored state and its runs counted by state. NotFound if there is no
  // such id. The default implementation reads the whole experiment (GetExperiment);
  // SqliteStore and PgStore count with one indexed query.
  virtual absl::StatusOr<ExperimentProgress> GetExperimentProgress(uint64_t id);

  // Inserts or replaces an agent and its devices (keyed by agent_id; devices by path).
  // The device list is replaced as a whole. running_run_ids is not stored (see
  // ListAgents). InvalidArgument if agent_id is empty or a device path repeats.
  virtual absl::Status UpsertAgent(const v1::AgentInfo& agent) = 0;
  // All agents ordered by agent_id, devices by path; running_run_ids are derived from
  // the runs in RUN_ASSIGNED or RUN_RUNNING with that agent_id, ordered by id.
  virtual absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents() = 0;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_STORE_STORE_H_
