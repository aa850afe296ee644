// Controller, agents' reports: samples and results go through the group commit
// (report_batcher.h) — checked under the lock, committed in one store transaction per
// batch without it, acknowledged under it after the commit.
#include <algorithm>

#include "absl/container/btree_set.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/states.h"
#include "controller/controller.h"
#include "controller/experiment_lifecycle.h"

namespace blkbench {
namespace {

LogEvent Warn(absl::string_view event) { return LogEvent(LogLevel::kWarning, "controller", event); }

v1::ControllerMessage AckOf(const AgentReport& r) {
  v1::ControllerMessage ack;
  ack.mutable_ack()->set_run_id(r.run_id);
  ack.mutable_ack()->set_attempt(r.attempt);
  return ack;
}

}  // namespace

void Controller::OnSample(const std::string& agent_id, const v1::RunSample& rs) {
  std::shared_ptr<AgentLink> stale_link;
  {
    absl::MutexLock lock(&mu_);
    auto agent = agents_.find(agent_id);
    if (agent == agents_.end()) return;
    Heard(agent->second);
    if (!LeaseMatches(agent_id, rs.run_id(), rs.attempt(), rs.lease_id())) {
      stale_link = agent->second.link;
      if (stale_link == nullptr) return;
    }
  }
  if (stale_link != nullptr) {
    v1::ControllerMessage ack;
    ack.mutable_ack()->set_run_id(rs.run_id());
    ack.mutable_ack()->set_attempt(rs.attempt());
    ack.mutable_ack()->set_error("stale lease: run is no longer assigned to this agent");
    stale_link->Send(ack);
    return;
  }
  PendingReport pending;
  pending.agent_id = agent_id;
  pending.report.kind = AgentReport::Kind::kSample;
  pending.report.run_id = rs.run_id();
  pending.report.attempt = rs.attempt();
  pending.report.lease_id = rs.lease_id();
  pending.report.sample = rs.sample();
  // One transaction with the batch: the sample, and RUN_ASSIGNED → RUN_RUNNING on the
  // first one. Outside the lock: Add may wait for room, or commit here (window 0).
  batcher_.Add(std::move(pending));
}

void Controller::OnFinished(const std::string& agent_id, const v1::RunFinished& fin) {
  v1::ControllerMessage ack;
  ack.mutable_ack()->set_run_id(fin.run_id());
  ack.mutable_ack()->set_attempt(fin.attempt());
  ack.mutable_ack()->set_finished(true);
  Outbox out;
  PendingReport pending;
  bool queue = false;
  auto stored_already = [&fin](const absl::StatusOr<v1::Run>& run) {
    return run.ok() && IsFinalRunState(run->state()) && run->attempt() == fin.attempt() &&
           run->lease_id() == fin.lease_id();
  };
  // Read before taking mu_: the store may be busy with a batch's fsync, and every
  // stream's samples wait on mu_. A final state read here stays final; a run that became
  // final meanwhile (this result's first copy committed) is read again below.
  absl::StatusOr<v1::Run> run = store_.GetRun(fin.run_id());
  {
    absl::MutexLock lock(&mu_);
    auto agent = agents_.find(agent_id);
    if (agent == agents_.end()) return;
    Heard(agent->second);
    std::shared_ptr<AgentLink> link = agent->second.link;
    bool already_stored = stored_already(run);
    const bool current = LeaseMatches(agent_id, fin.run_id(), fin.attempt(), fin.lease_id());
    if (!already_stored && !current) {
      run = store_.GetRun(fin.run_id());  // rare: a resend or a stale lease
      already_stored = stored_already(run);
    }
    if (already_stored) {
      out.emplace_back(link, ack);  // a resend after a lost ack
    } else if (!current) {
      ack.mutable_ack()->set_error("stale lease: result rejected");
      out.emplace_back(link, ack);
    } else if (fin.outcome() == v1::RUN_OUTCOME_FENCED) {
      // The agent stopped writing on its own because its lease was about to run out:
      // the attempt is lost, the run goes back to the queue (a store failure leaves the
      // lease marked and Tick retries). Acknowledged either way: the agent is done.
      (void)LoseLease(fin.run_id(), absl::StrCat("agent fenced itself: ", fin.error()), out,
                      /*fenced=*/true);
      out.emplace_back(link, ack);
      PlaceQueuedRuns(out);
      Changed();
    } else {
      // The shared rule (experiment_lifecycle.h): a success without I/O is a failure.
      const RunEnd end = RunEndOf(fin);
      AgentReport& r = pending.report;
      r.kind = AgentReport::Kind::kFinish;
      r.run_id = fin.run_id();
      r.attempt = fin.attempt();
      r.lease_id = fin.lease_id();
      r.state = end.state;
      r.error = end.error;
      r.finished_unix_ms = clock_.WallMs();
      r.has_result = end.has_result;
      if (r.has_result) r.result = fin.result();
      // A result is taken only with every sample before it (checked in the commit, after
      // this stream's samples queued before it): a run never ends with holes.
      r.samples_through = fin.last_sample_seq();
      pending.agent_id = agent_id;
      pending.run = std::move(run);
      queue = true;
    }
  }
  Flush(out);
  if (queue) batcher_.Add(std::move(pending));
}

void Controller::CommitReports(std::vector<PendingReport>& batch) {
  std::vector<AgentReport> reports;
  reports.reserve(batch.size());
  for (PendingReport& p : batch) reports.push_back(std::move(p.report));
  // The durable commit (one fsync), without mu_: heartbeats, registrations and the next
  // batch's checks go on meanwhile.
  absl::StatusOr<std::vector<absl::Status>> committed = store_.CommitReports(reports);
  if (committed.ok() && committed->size() != reports.size()) {
    committed = absl::InternalError("store answered a batch with the wrong number of statuses");
  }
  Outbox out;
  {
    absl::MutexLock lock(&mu_);
    bool changed = false;
    // Experiments that had a run finish in this batch: their state is brought up to date
    // once for the batch, and one placement pass fills the freed devices — not one of
    // each per result (a state read counts the experiment's runs: per result, an
    // experiment whose runs end together cost O(runs²) under the lock).
    absl::btree_set<uint64_t> finished_experiments;
    bool any_finished = false;
    for (size_t i = 0; i < reports.size(); ++i) {
      const AgentReport& r = reports[i];
      const PendingReport& p = batch[i];
      const absl::Status s = committed.ok() ? (*committed)[i] : committed.status();
      auto agent = agents_.find(p.agent_id);
      std::shared_ptr<AgentLink> link = agent == agents_.end() ? nullptr : agent->second.link;
      // The lease may have been lost (or the run finished) while the report waited.
      const bool current = LeaseMatches(p.agent_id, r.run_id, r.attempt, r.lease_id);
      v1::ControllerMessage ack = AckOf(r);
      if (r.kind == AgentReport::Kind::kFinish && s.ok()) {
        if (current) {
          FinishStored(r, p.run, link, out);
          if (p.run.ok()) finished_experiments.insert(p.run->experiment_id());
          any_finished = true;
        } else {
          // Final already (canceled or failed meanwhile: the store kept that outcome).
          ack.mutable_ack()->set_finished(true);
          out.emplace_back(link, ack);
        }
        continue;
      }
      if (!current) {
        ack.mutable_ack()->set_error(r.kind == AgentReport::Kind::kFinish
                                         ? "stale lease: result rejected"
                                         : "stale lease: run is no longer assigned to this agent");
        out.emplace_back(link, ack);
        continue;
      }
      if (!s.ok()) {
        // Not acknowledged past what is stored: the agent keeps the report and resends it
        // after retry_after_ms, on this stream.
        Warn(r.kind == AgentReport::Kind::kSample ? "sample_store_failed" : "result_store_failed")
            .Field("run", r.run_id)
            .Field("attempt", r.attempt)
            .Field("seq", r.kind == AgentReport::Kind::kSample ? r.sample.seq() : r.samples_through)
            .Field("error", s.ToString());
        ack.mutable_ack()->set_sample_seq(StoredThrough(r.run_id, r.attempt));
        ack.mutable_ack()->set_retry_after_ms(options_.store_retry_ms);
        out.emplace_back(link, ack);
        continue;
      }
      Lease& lease = leases_[r.run_id];
      if (lease.lose_reason.empty()) {
        lease.expires_ms = clock_.MonotonicMs() + options_.lease_ttl_ms;
      }
      lease.delivered = true;
      lease.run.set_state(v1::RUN_RUNNING);
      if (observer_ != nullptr) {
        auto cells = CellsOf(lease.run.experiment_id());
        if (cells.ok() && lease.run.cell_index() < (*cells)->size()) {
          observer_->OnRunSample(lease.run, (**cells)[lease.run.cell_index()], r.sample);
        }
      }
      ack.mutable_ack()->set_sample_seq(MarkStored(r.run_id, r.attempt, r.sample.seq()));
      out.emplace_back(link, ack);
      changed = true;
    }
    for (uint64_t id : finished_experiments) SyncExperimentState(id);
    if (any_finished) PlaceQueuedRuns(out);
    if (changed || any_finished) Changed();
  }
  Flush(out);
}

Controller::StoredSamples& Controller::StoredFor(uint64_t run_id, uint32_t attempt) {
  StoredSamples& st = stored_[run_id];
  if (st.attempt != attempt) {
    // First sample or result of this attempt in this process: what is stored already
    // decides where the contiguous prefix ends (after a restart, samples acked by the
    // previous process).
    st = StoredSamples{attempt, 0, {}};
    auto samples = store_.ListSamples(run_id);
    if (samples.ok()) {
      for (const v1::Sample& s : *samples) st.ahead.insert(s.seq());
    }
    Advance(st);
  }
  return st;
}

void Controller::Advance(StoredSamples& st) {
  while (!st.ahead.empty() && *st.ahead.begin() <= st.through + 1) {
    st.through = std::max(st.through, *st.ahead.begin());
    st.ahead.erase(st.ahead.begin());
  }
}

uint64_t Controller::MarkStored(uint64_t run_id, uint32_t attempt, uint64_t seq) {
  StoredSamples& st = StoredFor(run_id, attempt);
  st.ahead.insert(seq);
  Advance(st);
  return st.through;
}

uint64_t Controller::StoredThrough(uint64_t run_id, uint32_t attempt) {
  return StoredFor(run_id, attempt).through;
}

void Controller::FinishStored(const AgentReport& report, const absl::StatusOr<v1::Run>& run,
                              const std::shared_ptr<AgentLink>& link, Outbox& out) {
  v1::ControllerMessage ack = AckOf(report);
  ack.mutable_ack()->set_finished(true);
  leases_.erase(report.run_id);
  stored_.erase(report.run_id);
  fenced_losses_.erase(report.run_id);
  if (observer_ != nullptr && run.ok() && report.state == v1::RUN_DONE) {
    auto cells = CellsOf(run->experiment_id());
    if (cells.ok() && run->cell_index() < (*cells)->size()) {
      observer_->OnRunResult(*run, (**cells)[run->cell_index()], report.result);
    }
  }
  if (observer_ != nullptr && run.ok()) observer_->OnRunFinished(*run);
  out.emplace_back(link, ack);
}

}  // namespace blkbench
