// Controller, agent side: registration, heartbeats, samples, results, lease expiry and
// placement of queued runs on free devices.
#include <chrono>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "common/placement.h"
#include "common/states.h"
#include "controller/controller.h"

namespace blkbench {

absl::Status Controller::OnRegister(const v1::Register& reg, std::shared_ptr<AgentLink> link) {
  if (reg.agent_id().empty()) return absl::InvalidArgumentError("register: empty agent_id");
  Outbox out;
  {
    absl::MutexLock lock(&mu_);
    v1::AgentInfo info;
    info.set_agent_id(reg.agent_id());
    *info.mutable_host() = reg.host();
    *info.mutable_devices() = reg.devices();
    info.set_connected(true);
    info.set_last_seen_unix_ms(clock_.WallMs());
    absl::Status s = store_.UpsertAgent(info);
    if (!s.ok()) return s;
    AgentState& state = agents_[reg.agent_id()];
    state.info = info;
    state.link = link;
    if (observer_ != nullptr) observer_->OnAgentRegistered(info, reg.metrics_address());

    v1::ControllerMessage hello;
    hello.mutable_registered()->set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
    hello.mutable_registered()->set_lease_ttl_ms(options_.lease_ttl_ms);
    out.emplace_back(link, hello);

    // Runs the agent says it still has keep their lease; the agent is told to drop
    // runs whose lease is gone. Leases the agent no longer knows of (it restarted)
    // are lost now rather than at TTL: the agent itself says they are not running.
    std::map<uint64_t, bool> reported;
    const int64_t expires = clock_.MonotonicMs() + options_.lease_ttl_ms;
    for (const v1::ActiveRun& ar : reg.active_runs()) {
      if (LeaseMatches(reg.agent_id(), ar.run_id(), ar.attempt(), ar.lease_id())) {
        leases_[ar.run_id()].expires_ms = expires;
        reported[ar.run_id()] = true;
      } else {
        auto run = store_.GetRun(ar.run_id());
        bool final_same_attempt = run.ok() && IsFinalRunState(run->state()) &&
                                  run->attempt() == ar.attempt() &&
                                  run->lease_id() == ar.lease_id();
        if (final_same_attempt) continue;  // result already stored; the agent gets an ack
        v1::ControllerMessage cancel;
        cancel.mutable_cancel()->set_run_id(ar.run_id());
        cancel.mutable_cancel()->set_attempt(ar.attempt());
        cancel.mutable_cancel()->set_reason("lease no longer held");
        out.emplace_back(link, cancel);
      }
    }
    std::vector<uint64_t> forgotten;
    for (const auto& [run_id, lease] : leases_) {
      if (lease.agent_id == reg.agent_id() && !reported.count(run_id)) forgotten.push_back(run_id);
    }
    for (uint64_t run_id : forgotten) LoseLease(run_id, "agent restarted without the run", out);
    PlaceQueuedRuns(out);
    Changed();
  }
  Flush(out);
  return absl::OkStatus();
}

void Controller::OnHeartbeat(const std::string& agent_id, const v1::Heartbeat& hb) {
  absl::MutexLock lock(&mu_);
  auto agent = agents_.find(agent_id);
  if (agent != agents_.end()) agent->second.info.set_last_seen_unix_ms(clock_.WallMs());
  const int64_t expires = clock_.MonotonicMs() + options_.lease_ttl_ms;
  for (const v1::ActiveRun& ar : hb.active_runs()) {
    if (LeaseMatches(agent_id, ar.run_id(), ar.attempt(), ar.lease_id())) {
      leases_[ar.run_id()].expires_ms = expires;
    }
  }
}

void Controller::OnSample(const std::string& agent_id, const v1::RunSample& rs) {
  v1::ControllerMessage ack;
  ack.mutable_ack()->set_run_id(rs.run_id());
  ack.mutable_ack()->set_attempt(rs.attempt());
  std::shared_ptr<AgentLink> link;
  {
    absl::MutexLock lock(&mu_);
    auto agent = agents_.find(agent_id);
    if (agent == agents_.end()) return;
    link = agent->second.link;
    if (!LeaseMatches(agent_id, rs.run_id(), rs.attempt(), rs.lease_id())) {
      ack.mutable_ack()->set_error("stale lease: run is no longer assigned to this agent");
    } else {
      absl::Status s = store_.AppendSample(rs.run_id(), rs.attempt(), rs.sample());
      if (!s.ok()) {
        // Not acknowledged past what is stored: the agent keeps the sample and resends it
        // after retry_after_ms, on this stream.
        fprintf(stderr, "controller: storing sample %lu of run %lu failed: %s\n",
                static_cast<unsigned long>(rs.sample().seq()),
                static_cast<unsigned long>(rs.run_id()), s.ToString().c_str());
        ack.mutable_ack()->set_sample_seq(StoredThrough(rs.run_id(), rs.attempt()));
        ack.mutable_ack()->set_retry_after_ms(options_.store_retry_ms);
        if (link) link->Send(ack);
        return;
      }
      leases_[rs.run_id()].expires_ms = clock_.MonotonicMs() + options_.lease_ttl_ms;
      auto run = store_.GetRun(rs.run_id());
      if (run.ok() && run->state() == v1::RUN_ASSIGNED) {
        run->set_state(v1::RUN_RUNNING);
        (void)store_.UpdateRun(*run);
      }
      if (observer_ != nullptr && run.ok()) {
        auto cells = CellsOf(run->experiment_id());
        if (cells.ok() && run->cell_index() < (*cells)->size()) {
          observer_->OnRunSample(*run, (**cells)[run->cell_index()], rs.sample());
        }
      }
      ack.mutable_ack()->set_sample_seq(MarkStored(rs.run_id(), rs.attempt(), rs.sample().seq()));
      Changed();
    }
  }
  if (link) link->Send(ack);
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

void Controller::OnFinished(const std::string& agent_id, const v1::RunFinished& fin) {
  v1::ControllerMessage ack;
  ack.mutable_ack()->set_run_id(fin.run_id());
  ack.mutable_ack()->set_attempt(fin.attempt());
  ack.mutable_ack()->set_finished(true);
  Outbox out;
  {
    absl::MutexLock lock(&mu_);
    auto agent = agents_.find(agent_id);
    if (agent == agents_.end()) return;
    std::shared_ptr<AgentLink> link = agent->second.link;
    auto run = store_.GetRun(fin.run_id());
    const bool already_stored = run.ok() && IsFinalRunState(run->state()) &&
                                run->attempt() == fin.attempt() &&
                                run->lease_id() == fin.lease_id();
    if (already_stored) {
      out.emplace_back(link, ack);  // a resend after a lost ack
    } else if (!LeaseMatches(agent_id, fin.run_id(), fin.attempt(), fin.lease_id())) {
      ack.mutable_ack()->set_error("stale lease: result rejected");
      out.emplace_back(link, ack);
    } else {
      v1::RunState state = v1::RUN_DONE;
      if (fin.outcome() == v1::RUN_OUTCOME_FAILED) state = v1::RUN_FAILED;
      if (fin.outcome() == v1::RUN_OUTCOME_CANCELED) state = v1::RUN_CANCELED;
      // A result is taken only with every sample before it: a run never ends with holes.
      const uint64_t through = StoredThrough(fin.run_id(), fin.attempt());
      absl::Status s =
          through < fin.last_sample_seq()
              ? absl::FailedPreconditionError(absl::StrCat(
                    "samples ", through + 1, "..", fin.last_sample_seq(), " not stored yet"))
              : store_.FinishRun(fin.run_id(), fin.attempt(), state, fin.error(), clock_.WallMs(),
                                 state == v1::RUN_DONE ? &fin.result() : nullptr);
      if (!s.ok()) {
        fprintf(stderr, "controller: storing result of run %lu failed: %s\n",
                static_cast<unsigned long>(fin.run_id()), s.ToString().c_str());
        ack.mutable_ack()->set_finished(false);  // not stored: resend after retry_after_ms
        ack.mutable_ack()->set_sample_seq(through);
        ack.mutable_ack()->set_retry_after_ms(options_.store_retry_ms);
        out.emplace_back(link, ack);
      } else {
        FinishStored(fin, state, run, link, out);
      }
    }
  }
  Flush(out);
}

void Controller::FinishStored(const v1::RunFinished& fin, v1::RunState state,
                              const absl::StatusOr<v1::Run>& run,
                              const std::shared_ptr<AgentLink>& link, Outbox& out) {
  v1::ControllerMessage ack;
  ack.mutable_ack()->set_run_id(fin.run_id());
  ack.mutable_ack()->set_attempt(fin.attempt());
  ack.mutable_ack()->set_finished(true);
  leases_.erase(fin.run_id());
  stored_.erase(fin.run_id());
  if (observer_ != nullptr && run.ok() && state == v1::RUN_DONE) {
    auto cells = CellsOf(run->experiment_id());
    if (cells.ok() && run->cell_index() < (*cells)->size()) {
      observer_->OnRunResult(*run, (**cells)[run->cell_index()], fin.result());
    }
  }
  if (observer_ != nullptr && run.ok()) observer_->OnRunFinished(*run);
  out.emplace_back(link, ack);
  if (run.ok()) MaybeFinishExperiment(run->experiment_id());
  PlaceQueuedRuns(out);
  Changed();
}

void Controller::OnDisconnect(const std::string& agent_id, const AgentLink* link) {
  absl::MutexLock lock(&mu_);
  auto agent = agents_.find(agent_id);
  if (agent == agents_.end() || agent->second.link.get() != link) return;
  agent->second.link = nullptr;
  agent->second.info.set_connected(false);
  Changed();
}

void Controller::Tick() {
  Outbox out;
  {
    absl::MutexLock lock(&mu_);
    const int64_t now = clock_.MonotonicMs();
    std::vector<uint64_t> expired;
    for (const auto& [run_id, lease] : leases_) {
      if (lease.expires_ms <= now) expired.push_back(run_id);
    }
    for (uint64_t run_id : expired) {
      LoseLease(run_id,
                absl::StrCat("lease expired: agent silent for ", options_.lease_ttl_ms, " ms"),
                out);
    }
    PlaceQueuedRuns(out);
    if (!expired.empty()) Changed();
  }
  Flush(out);
}

absl::StatusOr<const std::vector<v1::CellSpec>*> Controller::CellsOf(uint64_t experiment_id) {
  auto it = cells_.find(experiment_id);
  if (it != cells_.end()) return &it->second;
  auto exp = store_.GetExperiment(experiment_id, false);
  if (!exp.ok()) return exp.status();
  std::vector<v1::CellSpec>& cells = cells_[experiment_id];
  cells.assign(exp->cells().begin(), exp->cells().end());
  return &cells;
}

bool Controller::DeviceBusy(const std::string& agent_id, const std::string& path) const {
  for (const auto& [run_id, lease] : leases_) {
    if (lease.agent_id == agent_id && lease.device_path == path) return true;
  }
  return false;
}

void Controller::PlaceQueuedRuns(Outbox& out) {
  // Metrics: how long a pass takes (store reads and writes under the lock) and what it
  // placed. A steady clock, not clock_: this measures real latency, never a timeout.
  const auto pass_start = std::chrono::steady_clock::now();
  std::vector<v1::Run> placed;
  struct Report {
    ControllerObserver* observer;
    const std::chrono::steady_clock::time_point& start;
    const std::vector<v1::Run>& placed;
    ~Report() {
      if (observer == nullptr) return;
      observer->OnPlacement(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), placed);
    }
  } report{observer_, pass_start, placed};
  auto queued = store_.ListRunsInStates({v1::RUN_QUEUED});
  if (!queued.ok()) {
    fprintf(stderr, "controller: listing queued runs failed: %s\n",
            queued.status().ToString().c_str());
    return;
  }
  for (v1::Run& run : *queued) {
    auto cells = CellsOf(run.experiment_id());
    if (!cells.ok() || run.cell_index() >= (*cells)->size()) continue;
    const v1::CellSpec& cell = (**cells)[run.cell_index()];
    // Agents in name order, devices in registration order: deterministic placement;
    // one run per device at a time spreads an experiment over every matching device.
    for (auto& [agent_id, agent] : agents_) {
      if (agent.link == nullptr) continue;
      const v1::DeviceFacts* chosen = nullptr;
      for (const v1::DeviceFacts& dev : agent.info.devices()) {
        if (DeviceMatches(cell, agent.info, dev) && !DeviceBusy(agent_id, dev.path())) {
          chosen = &dev;
          break;
        }
      }
      if (chosen == nullptr) continue;
      char lease_id[40];
      snprintf(lease_id, sizeof(lease_id), "L%lx-%lu", static_cast<unsigned long>(clock_.WallMs()),
               static_cast<unsigned long>(++lease_counter_));
      run.set_attempt(run.attempt() + 1);
      run.set_state(v1::RUN_ASSIGNED);
      run.set_agent_id(agent_id);
      run.set_device_path(chosen->path());
      run.set_lease_id(lease_id);
      run.set_started_unix_ms(clock_.WallMs());
      run.set_error("");
      if (absl::Status s = store_.UpdateRun(run); !s.ok()) {
        fprintf(stderr, "controller: assigning run %lu failed: %s\n",
                static_cast<unsigned long>(run.id()), s.ToString().c_str());
        return;
      }
      leases_[run.id()] = Lease{agent_id, chosen->path(), lease_id, run.attempt(),
                                clock_.MonotonicMs() + options_.lease_ttl_ms};
      auto exp = store_.GetExperiment(run.experiment_id(), false);
      if (exp.ok() && exp->state() == v1::EXPERIMENT_QUEUED) {
        (void)store_.UpdateExperimentState(run.experiment_id(), v1::EXPERIMENT_RUNNING, "", 0);
      }
      v1::ControllerMessage msg;
      v1::RunAssignment* a = msg.mutable_assign();
      a->set_run_id(run.id());
      a->set_attempt(run.attempt());
      a->set_lease_id(lease_id);
      a->set_experiment_id(run.experiment_id());
      a->set_device_path(chosen->path());
      *a->mutable_cell() = cell;
      a->set_sample_interval_ms(options_.sample_interval_ms);
      a->set_repeat(run.repeat());
      out.emplace_back(agent.link, msg);
      placed.push_back(run);
      break;
    }
  }
}

void Controller::LoseLease(uint64_t run_id, const std::string& why, Outbox& out) {
  auto it = leases_.find(run_id);
  if (it == leases_.end()) return;
  Lease lease = it->second;
  leases_.erase(it);
  if (observer_ != nullptr) {
    v1::Run ended;
    ended.set_id(run_id);
    ended.set_attempt(lease.attempt);
    observer_->OnRunFinished(ended);
  }
  auto agent = agents_.find(lease.agent_id);
  if (agent != agents_.end() && agent->second.link != nullptr) {
    v1::ControllerMessage cancel;  // fencing: a late agent must stop, too
    cancel.mutable_cancel()->set_run_id(run_id);
    cancel.mutable_cancel()->set_attempt(lease.attempt);
    cancel.mutable_cancel()->set_reason(why);
    out.emplace_back(agent->second.link, cancel);
  }
  auto run = store_.GetRun(run_id);
  if (!run.ok() || IsFinalRunState(run->state())) return;
  const int64_t now = clock_.WallMs();
  if (canceled_.count(run->experiment_id())) {
    (void)store_.FinishRun(run_id, run->attempt(), v1::RUN_CANCELED, why, now, nullptr);
  } else if (run->attempt() >= options_.max_attempts) {
    (void)store_.FinishRun(
        run_id, run->attempt(), v1::RUN_FAILED,
        absl::StrCat(why, " (attempt ", run->attempt(), " of ", options_.max_attempts, ")"), now,
        nullptr);
  } else {
    run->set_state(v1::RUN_QUEUED);
    run->set_error(why);
    run->set_agent_id("");
    run->set_device_path("");
    run->set_lease_id("");
    (void)store_.UpdateRun(*run);
  }
  MaybeFinishExperiment(run->experiment_id());
}

}  // namespace blkbench
