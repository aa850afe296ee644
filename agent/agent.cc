// Agent connection and run bookkeeping; see agent.h.
#include "agent/agent.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "agent/device/device_facts.h"
#include "agent/device/host_facts.h"

namespace blkbench {

constexpr int kMaxMessageBytes = 64 << 20;
constexpr size_t kMaxUnackedSamples = 100'000;  // per run; older ones are dropped beyond

ChannelFactory TcpChannelFactory(const std::string& address) {
  return [address] {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxMessageBytes);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    // Reconnect quickly after a controller restart; our own backoff paces retries.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2'000);
    return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  };
}

Agent::Agent(AgentConfig config, RunExecutor& executor, Clock& clock, ChannelFactory channels,
             AgentObserver* observer)
    : config_(std::move(config)),
      executor_(executor),
      clock_(clock),
      channels_(std::move(channels)),
      observer_(observer) {
  absl::MutexLock lock(&mu_);
  last_contact_ms_ = clock_.MonotonicMs();
}

Agent::~Agent() { Stop(); }

void Agent::Run() {
  std::mt19937_64 rng(std::hash<std::string>{}(config_.agent_id));
  int64_t backoff_ms = 200;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
    }
    Session();
    bool was_registered;
    {
      absl::MutexLock lock(&mu_);
      was_registered = registered_;
      registered_ = false;
      if (stopping_) break;
    }
    FenceIfCutOff();
    if (was_registered) backoff_ms = 200;
    // Jittered exponential backoff: full jitter in [backoff/2, backoff].
    const int64_t wait = backoff_ms / 2 + static_cast<int64_t>(rng() % (backoff_ms / 2 + 1));
    backoff_ms = std::min<int64_t>(backoff_ms * 2, 10'000);
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::Milliseconds(wait));
  }
}

uint64_t Agent::Sessions() {
  absl::MutexLock lock(&mu_);
  return sessions_opened_;
}

void Agent::Session() {
  auto channel = channels_();
  auto stub = v1::AgentService::NewStub(channel);
  grpc::ClientContext ctx;
  uint64_t session;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    ctx_ = &ctx;
    session = ++session_;
    ++sessions_opened_;
  }
  std::unique_ptr<Stream> stream = stub->Connect(&ctx);
  v1::AgentMessage reg;
  *reg.mutable_register_() = MakeRegister();
  if (stream->Write(reg)) {
    {
      absl::MutexLock lock(&write_mu_);
      stream_ = stream.get();
    }
    std::thread heartbeat;
    v1::ControllerMessage msg;
    while (stream->Read(&msg)) {
      if (msg.has_registered()) {
        {
          absl::MutexLock lock(&mu_);
          registered_ = true;
          if (msg.registered().heartbeat_interval_ms() > 0) {
            heartbeat_ms_ = msg.registered().heartbeat_interval_ms();
          }
          if (msg.registered().lease_ttl_ms() > 0) lease_ttl_ms_ = msg.registered().lease_ttl_ms();
          last_contact_ms_ = clock_.MonotonicMs();
        }
        if (observer_ != nullptr) observer_->OnConnection(true);
        if (!heartbeat.joinable())
          heartbeat = std::thread([this, session] { Heartbeats(session); });
        ResendUnacked();
        continue;
      }
      {
        absl::MutexLock lock(&mu_);
        last_contact_ms_ = clock_.MonotonicMs();
      }
      Handle(msg);
    }
    {
      absl::MutexLock lock(&write_mu_);
      stream_ = nullptr;
    }
    {
      absl::MutexLock lock(&mu_);
      registered_ = false;
      ++session_;  // ends the heartbeat loop of this session
    }
    if (observer_ != nullptr) observer_->OnConnection(false);
    if (heartbeat.joinable()) heartbeat.join();
  }
  ctx.TryCancel();
  grpc::Status status = stream->Finish();
  absl::MutexLock lock(&mu_);
  ctx_ = nullptr;
  if (!status.ok() && !stopping_) {
    fprintf(stderr, "blkbench-agent: controller stream ended: %s (%d)\n",
            status.error_message().c_str(), static_cast<int>(status.error_code()));
  }
}

v1::Register Agent::MakeRegister() {
  v1::Register reg;
  reg.set_agent_id(config_.agent_id);
  reg.set_version("0.1.0");
  reg.set_metrics_address(config_.metrics_listen);
  *reg.mutable_host() = ReadHostFacts();
  for (const AllowedDevice& d : config_.devices) {
    auto facts = ReadDeviceFacts(d.path, d.device_class);
    if (!facts.ok()) {
      fprintf(stderr, "blkbench-agent: not offering %s: %s\n", d.path.c_str(),
              facts.status().ToString().c_str());
      continue;
    }
    facts->set_path(d.path);
    facts->set_device_class(d.device_class);
    *reg.add_devices() = *facts;
  }
  for (const std::string& sim : config_.sim_devices) *reg.add_devices() = SimulatedDeviceFacts(sim);
  {
    absl::MutexLock lock(&mu_);
    for (v1::ActiveRun& ar : ActiveRunList()) *reg.add_active_runs() = ar;
  }
  if (observer_ != nullptr) observer_->OnRegister(reg);
  return reg;
}

void Agent::Handle(const v1::ControllerMessage& msg) {
  if (msg.has_assign()) {
    StartRun(msg.assign());
  } else if (msg.has_cancel()) {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(msg.cancel().run_id());
    if (it != runs_.end() && it->second->assignment.attempt() == msg.cancel().attempt()) {
      it->second->cancel = true;
    }
  } else if (msg.has_ack()) {
    const v1::Ack& ack = msg.ack();
    std::unique_ptr<ActiveRun> done;
    size_t acked = 0, dropped = 0, buffered = 0;
    {
      absl::MutexLock lock(&mu_);
      auto it = runs_.find(ack.run_id());
      if (it == runs_.end() || it->second->assignment.attempt() != ack.attempt()) return;
      ActiveRun& run = *it->second;
      if (!ack.error().empty()) {
        // The controller no longer holds our lease: stop and forget the run (fencing).
        fprintf(stderr, "blkbench-agent: run %lu rejected: %s\n",
                static_cast<unsigned long>(ack.run_id()), ack.error().c_str());
        run.cancel = true;
        dropped = run.unacked.size();
        run.unacked.clear();
        if (run.finished) {
          done = std::move(it->second);
          runs_.erase(it);
        }
      } else {
        while (!run.unacked.empty() && run.unacked.front().sample().seq() <= ack.sample_seq()) {
          run.unacked.pop_front();
          ++acked;
        }
        const int64_t now = clock_.MonotonicMs();
        if (ack.retry_after_ms() > 0) {
          // The controller could not store something: resend it then, on this stream.
          run.resend_at_ms = now + ack.retry_after_ms();
        } else if (acked > 0) {
          run.resend_backoff_ms = 0;
          run.resend_at_ms = now + heartbeat_ms_;
        }
        if (ack.finished() && run.finished) {
          done = std::move(it->second);
          runs_.erase(it);
        }
      }
      buffered = UnackedSamples();
    }
    if (observer_ != nullptr && (acked > 0 || dropped > 0)) {
      observer_->OnSampleBuffer(buffered, acked, dropped);
    }
    if (done && done->thread.joinable()) done->thread.join();
  }
}

void Agent::StartRun(const v1::RunAssignment& a) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || runs_.count(a.run_id())) return;  // a duplicate assignment
  auto run = std::make_unique<ActiveRun>();
  run->assignment = a;
  ActiveRun* r = run.get();
  runs_[a.run_id()] = std::move(run);
  r->thread = std::thread([this, r] {
    auto on_sample = [this, r](const v1::Sample& s) {
      v1::AgentMessage msg;
      v1::RunSample* rs = msg.mutable_sample();
      rs->set_run_id(r->assignment.run_id());
      rs->set_attempt(r->assignment.attempt());
      rs->set_lease_id(r->assignment.lease_id());
      *rs->mutable_sample() = s;
      if (observer_ != nullptr) observer_->OnRunSample(r->assignment, s);
      size_t dropped = 0, buffered = 0;
      {
        absl::MutexLock guard(&mu_);
        if (r->unacked.size() >= kMaxUnackedSamples) {
          r->unacked.pop_front();
          dropped = 1;
        }
        r->unacked.push_back(*rs);
        r->last_seq = std::max(r->last_seq, s.seq());
        buffered = UnackedSamples();
      }
      if (observer_ != nullptr) observer_->OnSampleBuffer(buffered, 0, dropped);
      if (Send(msg) && observer_ != nullptr) observer_->OnSampleSent(false);
    };
    if (observer_ != nullptr) observer_->OnRunStarted(r->assignment);
    v1::RunFinished fin = executor_.Execute(r->assignment, r->cancel, on_sample);
    if (observer_ != nullptr) observer_->OnRunEnded(r->assignment, fin);
    if (fin.outcome() == v1::RUN_OUTCOME_FAILED) {
      fprintf(stderr, "blkbench-agent: run %lu failed: %s\n",
              static_cast<unsigned long>(fin.run_id()), fin.error().c_str());
    }
    {
      absl::MutexLock guard(&mu_);
      fin.set_last_sample_seq(r->last_seq);  // the result is stored only after these
      r->finished = fin;
    }
    v1::AgentMessage msg;
    *msg.mutable_finished() = fin;
    Send(msg);
  });
}

bool Agent::Send(const v1::AgentMessage& msg) {
  absl::MutexLock lock(&write_mu_);
  if (stream_ == nullptr) return false;  // kept as unacked; resent after reconnecting
  return stream_->Write(msg);
}

void Agent::AppendUnacked(const ActiveRun& run, std::vector<v1::AgentMessage>* out) {
  for (const v1::RunSample& rs : run.unacked) {
    v1::AgentMessage m;
    *m.mutable_sample() = rs;
    out->push_back(std::move(m));
  }
  if (run.finished) {
    v1::AgentMessage m;
    *m.mutable_finished() = *run.finished;
    out->push_back(std::move(m));
  }
}

void Agent::ResendDue() {
  constexpr int64_t kMaxResendBackoffMs = 10'000;
  std::vector<v1::AgentMessage> pending;
  {
    absl::MutexLock lock(&mu_);
    const int64_t now = clock_.MonotonicMs();
    for (auto& [id, run] : runs_) {
      if (run->unacked.empty() && !run->finished) continue;
      if (run->resend_at_ms == 0) {  // first seen waiting: give the ack a heartbeat
        run->resend_at_ms = now + heartbeat_ms_;
        continue;
      }
      if (now < run->resend_at_ms) continue;
      AppendUnacked(*run, &pending);
      run->resend_backoff_ms =
          std::clamp<int64_t>(run->resend_backoff_ms * 2, heartbeat_ms_, kMaxResendBackoffMs);
      run->resend_at_ms = now + run->resend_backoff_ms;
    }
  }
  for (const v1::AgentMessage& m : pending) {
    if (!Send(m)) return;
    if (observer_ != nullptr && m.has_sample()) observer_->OnSampleSent(true);
  }
}

void Agent::ResendUnacked() {
  std::vector<v1::AgentMessage> pending;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, run] : runs_) AppendUnacked(*run, &pending);
  }
  for (const v1::AgentMessage& m : pending) {
    if (!Send(m)) return;
    if (observer_ != nullptr && m.has_sample()) observer_->OnSampleSent(true);
  }
}

void Agent::Heartbeats(uint64_t session) {
  while (true) {
    v1::AgentMessage msg;
    {
      absl::MutexLock lock(&mu_);
      auto session_over = [this, session]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || session_ != session;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&session_over), absl::Milliseconds(heartbeat_ms_))) {
        return;
      }
      for (v1::ActiveRun& ar : ActiveRunList()) *msg.mutable_heartbeat()->add_active_runs() = ar;
      msg.mutable_heartbeat();
    }
    if (!Send(msg)) return;
    ResendDue();
  }
}

void Agent::FenceIfCutOff() {
  absl::MutexLock lock(&mu_);
  if (clock_.MonotonicMs() - last_contact_ms_ < lease_ttl_ms_) return;
  // The controller has certainly given our leases away by now: stop writing (fencing).
  for (auto& [id, run] : runs_) {
    if (!run->finished && !run->cancel) {
      fprintf(stderr, "blkbench-agent: no controller contact for %ld ms, stopping run %lu\n",
              static_cast<long>(lease_ttl_ms_), static_cast<unsigned long>(id));
      run->cancel = true;
    }
  }
}

std::vector<v1::ActiveRun> Agent::ActiveRunList() {
  std::vector<v1::ActiveRun> out;
  for (const auto& [id, run] : runs_) {
    v1::ActiveRun ar;
    ar.set_run_id(id);
    ar.set_attempt(run->assignment.attempt());
    ar.set_lease_id(run->assignment.lease_id());
    out.push_back(ar);
  }
  return out;
}

size_t Agent::UnackedSamples() {
  size_t n = 0;
  for (const auto& [id, run] : runs_) n += run->unacked.size();
  return n;
}

void Agent::Stop() {
  std::vector<std::unique_ptr<ActiveRun>> runs;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && runs_.empty()) return;
    stopping_ = true;
    for (auto& [id, run] : runs_) run->cancel = true;
  }
  // Runs restore the host before their threads end.
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, run] : runs_) runs.push_back(std::move(run));
    runs_.clear();
  }
  for (auto& run : runs) {
    if (run->thread.joinable()) run->thread.join();
  }
  absl::MutexLock lock(&mu_);
  if (ctx_ != nullptr) ctx_->TryCancel();
}

size_t Agent::ActiveRuns() {
  absl::MutexLock lock(&mu_);
  return runs_.size();
}

bool Agent::Connected() {
  absl::MutexLock lock(&mu_);
  return registered_;
}

bool Agent::WaitConnected(bool want, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this, want]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return registered_ == want; };
  return mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
}

}  // namespace blkbench
