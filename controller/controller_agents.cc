// Controller, agent side: registration, heartbeats, lease expiry and re-queueing
// (placement is controller_placement.cc, samples and results controller_reports.cc).
#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/states.h"
#include "controller/controller.h"
#include "workloads/labels.h"

namespace blkbench {
namespace {

LogEvent Warn(absl::string_view event) { return LogEvent(LogLevel::kWarning, "controller", event); }
LogEvent Info(absl::string_view event) { return LogEvent(LogLevel::kInfo, "controller", event); }

}  // namespace

absl::Status Controller::OnRegister(const v1::Register& reg,
                                    const std::shared_ptr<AgentLink>& link) {
  if (std::string p = workloads::LabelProblem(reg.agent_id()); !p.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("register: agent_id: ", p));
  }
  for (const v1::DeviceFacts& d : reg.devices()) {
    if (std::string p = workloads::LabelProblem(d.device_class()); !p.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("register: device ", absl::CEscape(d.path()), ": class: ", p));
    }
  }
  constexpr int kMaxNotOffered = 64;
  constexpr size_t kMaxReasonBytes = 8192;
  if (reg.not_offered_size() > kMaxNotOffered) {
    return absl::InvalidArgumentError(absl::StrCat("register: ", reg.not_offered_size(),
                                                   " devices not offered; at most ", kMaxNotOffered,
                                                   " are listed"));
  }
  for (const v1::DeviceNotOffered& n : reg.not_offered()) {
    if (n.reason().size() > kMaxReasonBytes || n.path().size() > kMaxReasonBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("register: the reason device ", absl::CEscape(n.path().substr(0, 256)),
                       " is not offered exceeds ", kMaxReasonBytes, " bytes"));
    }
  }
  Outbox out;
  {
    absl::MutexLock lock(&mu_);
    const std::string peer = link ? link->Peer() : "";
    auto existing = agents_.find(reg.agent_id());
    if (existing != agents_.end() && existing->second.link != nullptr &&
        !reg.instance_id().empty() && existing->second.instance_id != reg.instance_id()) {
      // Two live processes under one id (a cloned VM keeps its host name): the first
      // keeps its stream and leases; the newcomer is refused until that stream ends.
      AgentState& held = existing->second;
      held.info.set_refused_duplicates(held.info.refused_duplicates() + 1);
      held.info.set_last_refused_peer(peer);
      held.info.set_last_refused_unix_ms(clock_.WallMs());
      Warn("duplicate_agent_refused")
          .Field("agent", reg.agent_id())
          .Field("peer", peer)
          .Field("holder_peer", held.peer)
          .Field("instance", reg.instance_id())
          .Field("holder_instance", held.instance_id);
      Changed();
      return absl::AlreadyExistsError(absl::StrCat(
          "agent id \"", reg.agent_id(), "\" is already connected from ",
          held.peer.empty() ? "another process" : held.peer,
          "; a second agent with the same id is refused while that one is connected — give "
          "each agent its own agent_id in its config (the default is the host name)"));
    }
    if (existing != agents_.end() && !reg.instance_id().empty() &&
        existing->second.instance_id == reg.instance_id() &&
        reg.connection() < existing->second.connection) {
      // A dead connection's registration delivered after the live one's: replacing the
      // live stream with it would cut the agent off.
      Warn("stale_registration_refused")
          .Field("agent", reg.agent_id())
          .Field("connection", reg.connection())
          .Field("live_connection", existing->second.connection);
      return absl::FailedPreconditionError(absl::StrCat(
          "registration from an earlier connection (", reg.connection(), ") of agent \"",
          reg.agent_id(), "\"; connection ", existing->second.connection, " is live"));
    }
    v1::AgentInfo info;
    info.set_agent_id(reg.agent_id());
    *info.mutable_host() = reg.host();
    *info.mutable_devices() = reg.devices();
    *info.mutable_not_offered() = reg.not_offered();
    info.set_connected(true);
    info.set_last_seen_unix_ms(clock_.WallMs());
    if (absl::Status s = store_.UpsertAgent(info); !s.ok()) {
      Warn("register_store_failed").Field("agent", reg.agent_id()).Field("error", s.ToString());
      return absl::UnavailableError(absl::StrCat("registration of agent \"", reg.agent_id(),
                                                 "\" could not be stored (", s.message(),
                                                 "); the agent retries"));
    }
    AgentState& state = agents_[reg.agent_id()];
    if (state.link != nullptr) {
      Info("agent_stream_replaced").Field("agent", reg.agent_id()).Field("peer", peer);
    }
    info.set_refused_duplicates(state.info.refused_duplicates());
    info.set_last_refused_peer(state.info.last_refused_peer());
    info.set_last_refused_unix_ms(state.info.last_refused_unix_ms());
    state.info = info;
    state.link = link;
    state.peer = peer;
    state.instance_id = reg.instance_id();
    state.connection = reg.connection();
    Heard(state);
    if (observer_ != nullptr) observer_->OnAgentRegistered(info, reg.metrics_address());

    v1::ControllerMessage hello;
    hello.mutable_registered()->set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
    hello.mutable_registered()->set_lease_ttl_ms(options_.lease_ttl_ms);
    out.emplace_back(link, hello);

    // Runs the agent says it still has keep their lease; the agent is told to drop
    // runs whose lease is gone. An assignment the agent never confirmed is sent again
    // (it may have been lost with the old stream); confirmed leases the agent no longer
    // knows of (it restarted) are lost now rather than at TTL.
    std::set<uint64_t> reported;
    const int64_t now = clock_.MonotonicMs();
    for (const v1::ActiveRun& ar : reg.active_runs()) {
      if (LeaseMatches(reg.agent_id(), ar.run_id(), ar.attempt(), ar.lease_id())) {
        Lease& lease = leases_[ar.run_id()];
        if (lease.lose_reason.empty()) lease.expires_ms = now + options_.lease_ttl_ms;
        lease.delivered = true;
        lease.instance_id = reg.instance_id();
        reported.insert(ar.run_id());
        if (canceled_.count(lease.run.experiment_id())) {
          v1::ControllerMessage cancel;  // canceled while the agent was away
          cancel.mutable_cancel()->set_run_id(ar.run_id());
          cancel.mutable_cancel()->set_attempt(ar.attempt());
          cancel.mutable_cancel()->set_reason("experiment canceled");
          out.emplace_back(link, cancel);
        }
      } else {
        // Not ours any more. Even if its result is stored (a resent result then just
        // gets its ack), the agent must stop it and forget it if it never started.
        v1::ControllerMessage cancel;
        cancel.mutable_cancel()->set_run_id(ar.run_id());
        cancel.mutable_cancel()->set_attempt(ar.attempt());
        cancel.mutable_cancel()->set_reason("lease no longer held");
        out.emplace_back(link, cancel);
      }
    }
    std::vector<uint64_t> forgotten;
    for (auto& [run_id, lease] : leases_) {
      if (lease.agent_id != reg.agent_id() || reported.count(run_id)) continue;
      if (!lease.delivered && lease.assignment.has_assign()) {
        lease.instance_id = reg.instance_id();
        lease.sent_ms = now;
        lease.expires_ms = now + options_.lease_ttl_ms;
        out.emplace_back(link, lease.assignment);
      } else if (lease.instance_id.empty() || lease.instance_id == reg.instance_id()) {
        forgotten.push_back(run_id);  // the process that had it says it does not
      }
      // Else another process took the id: the one holding the lease may still be
      // writing until it fences itself, so the lease runs out its TTL.
    }
    for (uint64_t run_id : forgotten) {
      (void)LoseLease(run_id, "agent restarted without the run", out);  // retried by Tick
    }
    PlaceQueuedRuns(out);
    Changed();
  }
  Flush(out);
  return absl::OkStatus();
}

void Controller::OnHeartbeat(const std::string& agent_id, const v1::Heartbeat& hb) {
  v1::ControllerMessage renewed;
  renewed.mutable_renewed()->set_seq(hb.seq());
  std::vector<v1::ControllerMessage> cancels;
  std::shared_ptr<AgentLink> link;
  Outbox placed;
  {
    absl::MutexLock lock(&mu_);
    auto agent = agents_.find(agent_id);
    if (agent == agents_.end()) return;
    agent->second.info.set_last_seen_unix_ms(clock_.WallMs());
    const bool was_silent = Heard(agent->second);
    link = agent->second.link;
    const int64_t expires = clock_.MonotonicMs() + options_.lease_ttl_ms;
    for (const v1::ActiveRun& ar : hb.active_runs()) {
      if (!LeaseMatches(agent_id, ar.run_id(), ar.attempt(), ar.lease_id())) {
        // The agent holds a run whose lease is gone (e.g. failed while it was away):
        // it must stop it, and drop it if it never started.
        v1::ControllerMessage cancel;
        cancel.mutable_cancel()->set_run_id(ar.run_id());
        cancel.mutable_cancel()->set_attempt(ar.attempt());
        cancel.mutable_cancel()->set_reason("lease no longer held");
        cancels.push_back(std::move(cancel));
        continue;
      }
      Lease& lease = leases_[ar.run_id()];
      if (!lease.lose_reason.empty()) continue;  // being given up: not renewed
      lease.expires_ms = expires;
      lease.delivered = true;
      v1::ActiveRun* r = renewed.mutable_renewed()->add_runs();
      r->set_run_id(ar.run_id());
      r->set_attempt(ar.attempt());
    }
    // Back from silence (a partition healed): its free devices take queued runs now, not
    // at the next tick.
    if (was_silent) PlaceQueuedRuns(placed);
  }
  // Sent after the renewal is in effect: the agent's fencing clock starts from when it
  // sent this heartbeat, which is no later than the renewal.
  if (!link) return;
  link->Send(renewed);
  for (const v1::ControllerMessage& c : cancels) link->Send(c);
  Flush(placed);
}

bool Controller::Heard(AgentState& agent) {
  agent.heard_ms = clock_.MonotonicMs();
  if (!agent.silent) return false;
  agent.silent = false;
  placement_due_ = true;
  return true;
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
    std::vector<std::pair<uint64_t, std::string>> expired;
    for (auto& [run_id, lease] : leases_) {
      if (!lease.lose_reason.empty()) {
        expired.emplace_back(run_id, lease.lose_reason);  // a loss whose store write failed
      } else if (lease.expires_ms <= now) {
        expired.emplace_back(
            run_id, absl::StrCat("lease expired: agent silent for ", options_.lease_ttl_ms, " ms"));
        // The process on the agent's stream is the lease's, and nothing came from it
        // since the lease's last renewal: no new run for it until it is heard from
        // (AgentState::silent); the run goes to another agent, or back to this one once
        // its partition heals. (Another process that took the id is not the silent one.)
        auto agent = agents_.find(lease.agent_id);
        if (agent != agents_.end() && agent->second.instance_id == lease.instance_id &&
            agent->second.heard_ms <= lease.expires_ms - options_.lease_ttl_ms) {
          agent->second.silent = true;
        }
      } else if (!lease.delivered && lease.assignment.has_assign() &&
                 now - lease.sent_ms >= 2 * options_.heartbeat_interval_ms) {
        // Not confirmed within two heartbeats: the assignment may have been lost.
        auto agent = agents_.find(lease.agent_id);
        if (agent != agents_.end() && agent->second.link != nullptr) {
          lease.sent_ms = now;
          out.emplace_back(agent->second.link, lease.assignment);
        }
      }
    }
    for (const auto& [run_id, why] : expired) (void)LoseLease(run_id, why, out);
    const std::set<uint64_t> unsynced = unsynced_experiments_;
    for (uint64_t id : unsynced) SyncExperimentState(id);
    const std::set<uint64_t> unqueued = std::exchange(unqueued_experiments_, {});
    for (uint64_t id : unqueued) {
      auto exp = store_.GetExperiment(id, false);
      if (exp.ok()) {
        EnqueueRunsOf(*exp);
      } else if (!absl::IsNotFound(exp.status())) {
        unqueued_experiments_.insert(id);
      }
    }
    // Only when something happened that can place a run: a tick with nothing new costs
    // O(leases), however many runs wait.
    if (placement_due_) PlaceQueuedRuns(out);
    if (!expired.empty()) Changed();
  }
  Flush(out);
}

uint32_t Controller::CountedAttempts(const v1::Run& run, bool fenced) const {
  auto it = fenced_losses_.find(run.id());
  const uint32_t spared = (it == fenced_losses_.end() ? 0 : it->second) + (fenced ? 1 : 0);
  return run.attempt() - std::min(run.attempt(), spared);
}

absl::Status Controller::LoseLease(uint64_t run_id, const std::string& why, Outbox& out,
                                   bool fenced) {
  auto it = leases_.find(run_id);
  if (it == leases_.end()) return absl::OkStatus();
  Lease& lease = it->second;
  auto run = store_.GetRun(run_id);
  absl::Status s = run.status();
  if (run.ok() && !IsFinalRunState(run->state())) {
    const int64_t now = clock_.WallMs();
    if (canceled_.count(run->experiment_id())) {
      s = store_.FinishRun(run_id, run->attempt(), v1::RUN_CANCELED, why, now, nullptr);
    } else if (CountedAttempts(*run, fenced) >= options_.max_attempts) {
      s = store_.FinishRun(
          run_id, run->attempt(), v1::RUN_FAILED,
          absl::StrCat(why, " (attempt ", run->attempt(), " of ", options_.max_attempts, ")"), now,
          nullptr);
    } else {
      // Back to the queue; the store drops this attempt's samples in the same
      // transaction, so results and counts never mix attempts.
      run->set_state(v1::RUN_QUEUED);
      run->set_error(why);
      run->set_agent_id("");
      run->set_device_path("");
      run->set_lease_id("");
      s = store_.UpdateRun(*run);
      if (s.ok()) Enqueue(run_id, run->experiment_id(), run->cell_index());
    }
  }
  if (!s.ok() && !absl::IsNotFound(s)) {
    // The lease stays (its device stays busy) and Tick tries again: the run is never
    // left ASSIGNED to nobody.
    Warn("lease_loss_store_failed")
        .Field("run", run_id)
        .Field("attempt", lease.attempt)
        .Field("reason", why)
        .Field("error", s.ToString());
    lease.lose_reason = why;
    return s;
  }
  if (fenced) ++fenced_losses_[run_id];
  const Lease lost = lease;
  leases_.erase(it);
  placement_due_ = true;  // its device is free
  stored_.erase(run_id);
  Warn("lease_lost")
      .Field("run", run_id)
      .Field("attempt", lost.attempt)
      .Field("agent", lost.agent_id)
      .Field("device", lost.device_path)
      .Field("reason", why);
  if (observer_ != nullptr) {
    v1::Run ended;
    ended.set_id(run_id);
    ended.set_attempt(lost.attempt);
    observer_->OnRunFinished(ended);
  }
  auto agent = agents_.find(lost.agent_id);
  if (agent != agents_.end() && agent->second.link != nullptr) {
    v1::ControllerMessage cancel;  // fencing: a late agent must stop, too
    cancel.mutable_cancel()->set_run_id(run_id);
    cancel.mutable_cancel()->set_attempt(lost.attempt);
    cancel.mutable_cancel()->set_reason(why);
    out.emplace_back(agent->second.link, cancel);
  }
  if (run.ok()) SyncExperimentState(run->experiment_id());
  return absl::OkStatus();
}

}  // namespace blkbench
