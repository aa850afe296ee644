// The controller's domain object: experiments, run placement on agents' devices, leases
// and results. It includes no gRPC headers; controller_service.cc and agent_service.cc
// translate RPCs into calls on it.
#ifndef BLKBENCH_CONTROLLER_CONTROLLER_H_
#define BLKBENCH_CONTROLLER_CONTROLLER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "blkbench/v1/agent.pb.h"
#include "blkbench/v1/controller.pb.h"
#include "common/clock.h"
#include "controller/deadline.h"
#include "controller/metrics/observer.h"
#include "controller/report_batcher.h"
#include "controller/run_queue.h"
#include "controller/store/store.h"

namespace blkbench {

// How the controller reaches one connected agent. Thread-safe. Send returns false once
// the link is closed; the controller then treats the agent as disconnected.
class AgentLink {
 public:
  virtual ~AgentLink() = default;
  virtual bool Send(const v1::ControllerMessage& msg) = 0;
  // Where the agent connects from (e.g. "ipv4:127.0.0.1:5342"), for logs; "" if unknown.
  virtual std::string Peer() const { return ""; }
};

struct ControllerOptions {
  int64_t heartbeat_interval_ms = 5'000;
  int64_t lease_ttl_ms = 30'000;  // a run whose agent is silent this long is re-queued
  uint32_t max_attempts = 3;      // lease losses before a run fails
  uint32_t sample_interval_ms = 1'000;
  // After a failed store write, agents are told to resend after this long.
  uint32_t store_retry_ms = 1'000;
  // Runs one experiment may have (cells x repeats, plus added repeats): a small file can
  // ask for millions, each a row and placement work.
  uint64_t max_runs_per_experiment = 100'000;
  // Group commit of agents' samples and results (controller/report_batcher.h): one
  // durable transaction per batch, closed this long after its first report or at
  // commit_max_reports; acks go out after the commit. 0 = each report is committed on
  // its own in the receiving thread before On{Sample,Finished} returns (what the unit
  // tests' synchronous fakes expect); the daemon's default is 5 ms (--commit_window_ms).
  int64_t commit_window_ms = 0;
  uint32_t commit_max_reports = 512;
};

// Thread-safe. Every public method may be called from any thread.
class Controller {
 public:
  // `observer` (may be null) hears of committed samples, ended attempts; it must
  // outlive the Controller.
  Controller(Store& store, Clock& clock, ControllerOptions options,
             ControllerObserver* observer = nullptr);

  // Re-arms leases of runs that were active when the controller last stopped: each
  // gets a full TTL for its agent to reconnect (calm restarts). Loads the queued runs
  // into the placement queue: the one read of every queued run.
  absl::Status Start();

  // --- CLI side ---
  // Parses and validates the matrix (InvalidArgument naming file, line and key on bad
  // input; nothing is stored then), stores the experiment and its runs, places runs.
  // `submitted_by` (the caller's identity) is stored with it.
  //
  // `machine_files` are the machine profile files the matrix names by path, as the
  // submitter read them (SubmitExperimentRequest.machine_files); no path is opened here.
  // The reads and Submit take the call's `deadline` and return DeadlineExceeded (Submit:
  // before anything is stored) once it passed between their steps.
  absl::StatusOr<v1::Experiment> Submit(const std::string& file_name,
                                        const std::string& matrix_text,
                                        const std::string& submitted_by = "",
                                        const Deadline& deadline = Deadline(),
                                        std::map<std::string, std::string> machine_files = {});
  absl::StatusOr<v1::Experiment> GetExperiment(uint64_t id, bool with_results,
                                               const Deadline& deadline = Deadline());
  absl::StatusOr<std::vector<v1::Experiment>> ListExperiments(
      uint32_t limit, const Deadline& deadline = Deadline());
  // Records who asked (durably, so a restart still cancels), cancels queued runs now and
  // asks agents to stop running ones. Who may cancel what is the caller's check.
  absl::StatusOr<v1::Experiment> Cancel(uint64_t id, const std::string& canceled_by = "");
  absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents();
  absl::StatusOr<v1::GetResultsResponse> GetResults(uint64_t id, bool with_samples,
                                                    const Deadline& deadline = Deadline());
  // Adds `count` repeats (1 to kMaxAddedRepeats) of each of `cell_indices` to experiment
  // `id` and places them at once; an ended experiment is RUNNING again until they end.
  // The new runs' ids are in the response. InvalidArgument for a bad count or cell,
  // NotFound for an unknown experiment, FailedPrecondition for a canceled one.
  absl::StatusOr<v1::AddRepeatsResponse> AddRepeats(uint64_t id,
                                                    const std::vector<uint32_t>& cell_indices,
                                                    uint32_t count);
  static constexpr uint32_t kMaxAddedRepeats = 100;

  // One metric of one cell across experiments: every experiment (newest `limit`, oldest
  // first in the answer) with a cell matching req.cell on req.device_class contributes
  // a point per matching cell, holding each RUN_DONE run's value; change points come
  // from E-divisive means over the points' medians (controller/gate/history.h).
  // For dashboards: this is the function to serve over HTTP (e.g. GET
  // /api/history?metric=p99&cell=bs=4k,iodepth=32&device_class=nvme as JSON with
  // google::protobuf::util::MessageToJsonString); it reads only the store and is
  // thread-safe. InvalidArgument for an unknown metric or an empty cell.
  absl::StatusOr<v1::GetHistoryResponse> GetHistory(const v1::GetHistoryRequest& req,
                                                    const Deadline& deadline = Deadline());

  // Blocks until something changed after `seen` or `timeout` passed; returns the
  // current change counter. Watchers poll the experiment after each wake-up.
  uint64_t WaitForChange(uint64_t seen, absl::Duration timeout);

  // --- agent side ---
  // An agent (re)connected. Its reply (Registered) and any assignment go out on `link`.
  // AlreadyExists (and nothing changes) while another process, by Register.instance_id,
  // holds the same agent_id on a live stream; Unavailable if the store cannot record it.
  absl::Status OnRegister(const v1::Register& reg, const std::shared_ptr<AgentLink>& link);
  // Renews the leases the heartbeat lists and answers with Renewed (same seq, the runs
  // renewed). Listing a run also confirms its assignment was delivered.
  void OnHeartbeat(const std::string& agent_id, const v1::Heartbeat& hb);
  // Queues the sample for the next group commit and acknowledges it once committed (the
  // ack may come from another thread, after this returns, when commit_window_ms > 0), or
  // rejects it when the lease is stale. A failed commit acknowledges nothing past what
  // is stored and tells the agent to resend after store_retry_ms.
  void OnSample(const std::string& agent_id, const v1::RunSample& sample);
  // Stores the final outcome durably (in the group commit, after the stream's samples
  // before it), then acknowledges it. RUN_OUTCOME_FENCED (the agent stopped in time on
  // its own) re-queues the run like an expired lease.
  void OnFinished(const std::string& agent_id, const v1::RunFinished& finished);
  // The agent's stream ended. Its leases stay until they expire.
  void OnDisconnect(const std::string& agent_id, const AgentLink* link);

  // What the controller holds in memory, entry counts per structure. After every run
  // ended and its experiment is stored as ended, each per-run and per-experiment count is
  // back to zero; `agents` counts agents ever registered in this process (bounded by the
  // fleet, not by runs). For tests and the memory soak (bench/memory_soak.sh).
  struct DebugSizes {
    size_t agents = 0;
    size_t leases = 0;          // active runs
    size_t stored_samples = 0;  // runs with sample bookkeeping
    size_t cells = 0;           // experiments with cached cells
    size_t canceled = 0;
    size_t fenced_losses = 0;
    size_t unsynced_experiments = 0;
    size_t unqueued_experiments = 0;
    size_t queued_runs = 0;
    bool operator==(const DebugSizes&) const = default;
  };
  DebugSizes Sizes();

  // Expires leases whose agent has been silent for the TTL, re-queues their runs, re-sends
  // assignments not confirmed within two heartbeat intervals, retries state writes that
  // failed, and places queued runs. Called periodically by the server (and by tests).
  void Tick();

 private:
  struct Lease {
    std::string agent_id;
    std::string instance_id;  // the agent process that holds it (Register.instance_id)
    std::string device_path;
    std::string lease_id;
    uint32_t attempt = 0;
    int64_t expires_ms = 0;
    // The agent listed the run in a heartbeat or sent a sample: it has the assignment.
    // Until then `assignment` is re-sent (on reconnect, or after two heartbeat intervals
    // at sent_ms). Leases re-armed after a controller restart count as delivered.
    bool delivered = false;
    int64_t sent_ms = 0;
    v1::ControllerMessage assignment;
    v1::Run run;  // as assigned (ids, agent, device) for the observer
    // Non-empty: the lease is being given up but the store write failed; Tick retries
    // and heartbeats no longer renew it.
    std::string lose_reason;
  };
  struct AgentState {
    v1::AgentInfo info;
    std::shared_ptr<AgentLink> link;  // null while disconnected
    std::string peer;                 // of the current or last stream
    std::string instance_id;          // Register.instance_id of that stream
    uint64_t connection = 0;          // Register.connection of that stream
    // A lease of this agent expired and nothing was heard from the agent since that
    // lease's last renewal: it is silent, not just done with that run. Until it is heard
    // from again (a heartbeat, a report, a registration) it gets no new run: its stream
    // may be stalled (a partition), and an assignment written into it would only sit
    // there until that lease expired too.
    bool silent = false;
    int64_t heard_ms = 0;  // monotonic; the last message from it
  };
  using Outbox = std::vector<std::pair<std::shared_ptr<AgentLink>, v1::ControllerMessage>>;
  // Records that sample `seq` of (run_id, attempt) is stored; returns the contiguous
  // stored prefix to acknowledge.
  uint64_t MarkStored(uint64_t run_id, uint32_t attempt, uint64_t seq)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A sample or result on its way to the group commit: the store's report plus what the
  // controller needs to acknowledge it afterwards.
  struct PendingReport {
    AgentReport report;
    std::string agent_id;
    absl::StatusOr<v1::Run> run;  // kFinish: the run as read when the result arrived
  };
  // The batcher's flush: commits `batch` in one store transaction (mu_ not held), then
  // acknowledges each report under mu_ once, and sends after releasing it.
  void CommitReports(std::vector<PendingReport>& batch) ABSL_LOCKS_EXCLUDED(mu_);
  // After the result of `report` is stored: forgets its lease, tells the observer, acks.
  // The caller then syncs the experiment's state and places queued runs (once a batch).
  void FinishStored(const AgentReport& report, const absl::StatusOr<v1::Run>& run,
                    const std::shared_ptr<AgentLink>& link, Outbox& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The contiguous stored prefix of (run_id, attempt)'s samples.
  uint64_t StoredThrough(uint64_t run_id, uint32_t attempt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // The experiment's cells, from cells_ or (then cached) the store.
  absl::StatusOr<const std::vector<v1::CellSpec>*> CellsOf(uint64_t experiment_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts a run the store holds as RUN_QUEUED into queue_ under its cell's placement key
  // and marks a placement pass due. If its cells cannot be read, the experiment goes to
  // unqueued_experiments_ and Tick queues its runs later.
  void Enqueue(uint64_t run_id, uint64_t experiment_id, uint32_t cell_index)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Enqueue for each RUN_QUEUED run of `exp` (as read from the store).
  void EnqueueRunsOf(const v1::Experiment& exp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Places queued runs on free devices: the devices without a lease of connected agents
  // that are not silent (AgentState::silent), matched against queue_ (RunQueue::Choose), so the
  // pass costs O(free devices x keys) plus a store read and write per run placed, however many runs
  // wait. Called on the events that can change its answer — runs queued, a device freed, an agent
  // registered — and by Tick only while placement_due_. Returns the experiments it
  // placed runs of.
  std::vector<uint64_t> PlaceQueuedRuns(Outbox& out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A run stops being active: requeue it (lease lost) or fail it after max_attempts.
  // The store write comes first; if it fails the lease is kept, marked with `why`, and
  // Tick retries (the error is returned too).
  // `fenced`: the agent reported it stopped in time; the attempt is not counted.
  absl::Status LoseLease(uint64_t run_id, const std::string& why, Outbox& out, bool fenced = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Attempts of `run` that count toward max_attempts: all but those lost to fencing
  // (fenced_losses_, plus this one if `fenced`).
  uint32_t CountedAttempts(const v1::Run& run, bool fenced) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Brings the stored experiment state in line with its runs: RUNNING once a run left
  // the queue, DONE/FAILED/CANCELED once every run is final. A failed write is logged and
  // retried by Tick (unsynced_experiments_).
  void SyncExperimentState(uint64_t experiment_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool LeaseMatches(const std::string& agent_id, uint64_t run_id, uint32_t attempt,
                    const std::string& lease_id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Changed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The agent was heard from now: if it was silent, it may take runs again (a placement
  // pass is due). True when it was.
  bool Heard(AgentState& agent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Flush(Outbox& out);

  Store& store_;
  Clock& clock_;
  const ControllerOptions options_;
  ControllerObserver* const observer_;  // may be null

  absl::Mutex mu_;
  absl::CondVar changed_cv_;
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, AgentState> agents_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Lease> leases_ ABSL_GUARDED_BY(mu_);  // by run id
  // Which samples of a run's current attempt are stored: all seq <= through, and the
  // ones above a hole. Acks report `through` only, so an ack never covers a sample that
  // failed to store. Loaded from the store on a run's first sample in this process.
  struct StoredSamples {
    uint32_t attempt = 0;
    uint64_t through = 0;
    std::set<uint64_t> ahead;
  };
  std::map<uint64_t, StoredSamples> stored_ ABSL_GUARDED_BY(mu_);  // by run id
  // stored_[run_id] for `attempt`, loaded from the store when this process has not seen
  // that attempt yet.
  StoredSamples& StoredFor(uint64_t run_id, uint32_t attempt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Advance(StoredSamples& st);  // moves `through` over stored seqs
  // Cells of experiments with runs to place or running, by experiment id; an ended
  // experiment's entry is dropped (SyncExperimentState), so this is bounded by the
  // experiments in flight, not by their runs or by history.
  std::map<uint64_t, std::vector<v1::CellSpec>> cells_ ABSL_GUARDED_BY(mu_);
  // Experiments someone asked to cancel that have not ended yet (their running runs are
  // being stopped); dropped once the experiment is stored as CANCELED.
  std::set<uint64_t> canceled_ ABSL_GUARDED_BY(mu_);
  // The runs stored as RUN_QUEUED, by placement key: loaded once by Start, then kept in
  // step with every transition (submit, added repeats, re-queue, cancel, assignment). It
  // may hold a run that ended meanwhile (placement checks each run with the store and
  // drops those), never miss a queued one (but see unqueued_experiments_).
  RunQueue queue_ ABSL_GUARDED_BY(mu_);
  // Experiments whose queued runs could not be put into queue_ (a failed store read);
  // Tick retries.
  std::set<uint64_t> unqueued_experiments_ ABSL_GUARDED_BY(mu_);
  // Something that can change placement happened since the last pass (or that pass could
  // not finish): Tick runs one. A tick with nothing new runs none.
  bool placement_due_ ABSL_GUARDED_BY(mu_) = false;
  std::set<uint64_t> unsynced_experiments_ ABSL_GUARDED_BY(mu_);
  // Leases a run lost because its agent fenced itself in time (not because the agent went
  // silent for the TTL): these attempts do not count toward max_attempts, so stalls of
  // the controller shorter than the TTL never fail a run. In memory only.
  std::map<uint64_t, uint32_t> fenced_losses_ ABSL_GUARDED_BY(mu_);
  // Last: destroyed first, flushing what is queued while everything it uses still lives.
  ReportBatcher<PendingReport> batcher_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_CONTROLLER_H_
