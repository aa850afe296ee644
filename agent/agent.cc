// Agent connection and run bookkeeping; see agent.h.
#include "agent/agent.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "agent/cell/sim_device.h"
#include "agent/device/host_facts.h"
#include "common/build_info.h"
#include "common/log/log.h"
#include "common/metrics/free_memory.h"
#include "common/tls/credentials.h"
#include "common/tls/transport.h"

namespace blkbench {
namespace {

LogEvent Warn(absl::string_view event) { return LogEvent(LogLevel::kWarning, "agent", event); }
LogEvent Info(absl::string_view event) { return LogEvent(LogLevel::kInfo, "agent", event); }

std::string RandomInstanceId() {
  std::random_device rd;
  const uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return absl::StrCat(absl::Hex(v, absl::kZeroPad16));
}

}  // namespace

constexpr int kMaxMessageBytes = 64 << 20;
constexpr size_t kMaxUnackedSamples = 100'000;  // per run; older ones are dropped beyond

ChannelFactory TcpChannelFactory(const std::string& address,
                                 std::shared_ptr<grpc::ChannelCredentials> credentials) {
  if (!credentials) credentials = grpc::InsecureChannelCredentials();
  return [address, credentials] {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxMessageBytes);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    // Reconnect quickly after a controller restart; our own backoff paces retries.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2'000);
    return grpc::CreateCustomChannel(address, credentials, args);
  };
}

absl::StatusOr<ChannelFactory> ChannelFactoryFor(const AgentConfig& config) {
  auto transport = tls::ClientTransportFor(
      config.controller, config.tls_dir, tls::CertStem(tls::Kind::kAgent, config.agent_id),
      config.insecure, "`insecure: true` in the agent config (or --insecure)");
  if (!transport.ok()) return transport.status();
  // A root agent takes runs from whatever answers: say how it dials, every start.
  LogEvent(transport->warning.empty() ? LogLevel::kInfo : LogLevel::kWarning, "agent",
           "controller_transport")
      .Field("controller", config.controller)
      .Field("transport", transport->description)
      .Field("warning", transport->warning);
  return TcpChannelFactory(config.controller, transport->credentials);
}

Agent::Agent(AgentConfig config, RunExecutor& executor, Clock& clock, ChannelFactory channels,
             AgentObserver* observer)
    : config_(std::move(config)),
      executor_(executor),
      clock_(clock),
      channels_(std::move(channels)),
      observer_(observer),
      instance_id_(RandomInstanceId()) {}

Agent::~Agent() { Stop(); }

void Agent::Run() {
  std::mt19937_64 rng(std::hash<std::string>{}(config_.agent_id));
  int64_t backoff_ms = 200;
  std::thread fence([this] { FenceLoop(); });
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
    }
    const grpc::Status status = Session();
    bool was_registered;
    {
      absl::MutexLock lock(&mu_);
      was_registered = registered_;
      registered_ = false;
      if (stopping_) break;
    }
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      // The controller is at a limit (agent streams, threads, our message rate): keep
      // growing the backoff even after a session that registered, from at least
      // kBusyBackoffMs, so a full controller is not redialled every 200 ms by everyone.
      constexpr int64_t kBusyBackoffMs = 1'000;
      backoff_ms = std::max(backoff_ms, kBusyBackoffMs);
    } else if (was_registered) {
      backoff_ms = 200;
    }
    // Jittered exponential backoff: full jitter in [backoff/2, backoff].
    const int64_t wait = backoff_ms / 2 + static_cast<int64_t>(rng() % (backoff_ms / 2 + 1));
    backoff_ms = std::min<int64_t>(backoff_ms * 2, 10'000);
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::Milliseconds(wait));
  }
  fence.join();
}

uint64_t Agent::Sessions() {
  absl::MutexLock lock(&mu_);
  return sessions_opened_;
}

grpc::Status Agent::Session() {
  auto channel = channels_();
  auto stub = v1::AgentService::NewStub(channel);
  grpc::ClientContext ctx;
  uint64_t session;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return grpc::Status::CANCELLED;
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
    std::thread heartbeat, sender;
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
        }
        if (observer_ != nullptr) observer_->OnConnection(true);
        if (!heartbeat.joinable()) {
          heartbeat = std::thread([this, session] { Heartbeats(session); });
          sender = std::thread([this, session] { Sender(session); });
        }
        ResendUnacked();
        SendHeartbeat();  // renews held leases (and confirms pending runs) at once
        continue;
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
      ++session_;       // ends the heartbeat and sender loops of this session
      outbox_.clear();  // what mattered in it is still unacked, resent after reconnecting
    }
    if (observer_ != nullptr) observer_->OnConnection(false);
    if (heartbeat.joinable()) heartbeat.join();
    if (sender.joinable()) sender.join();
  }
  // Read() returned false, or the first Write failed: the call is over and Finish()
  // returns the controller's status (e.g. ALREADY_EXISTS for a duplicate id) — not a
  // CANCELLED of our own making.
  grpc::Status status = stream->Finish();
  absl::MutexLock lock(&mu_);
  ctx_ = nullptr;
  if (!status.ok() && !stopping_) {
    Warn("controller_stream_ended")
        .Field("agent", config_.agent_id)
        .Field("code", static_cast<int>(status.error_code()))
        .Field("error", status.error_message());
  }
  return status;
}

v1::Register Agent::MakeRegister() {
  v1::Register reg;
  reg.set_agent_id(config_.agent_id);
  reg.set_version(BuildVersion());  // the CMake project version (common/build_info.h)
  reg.set_metrics_address(config_.metrics_listen);
  reg.set_instance_id(instance_id_);
  {
    absl::MutexLock lock(&mu_);
    reg.set_connection(sessions_opened_);
  }
  *reg.mutable_host() = ReadHostFacts();
  // Records each allowlisted device's identity (first registration) or re-checks it.
  DeviceOffer offer = executor_.OfferDevices();
  constexpr size_t kMaxNotOffered = 64;
  constexpr size_t kMaxReasonBytes = 8192;
  for (const auto& [path, reason] : offer.not_offered) {
    Warn("device_not_offered").Field("device", path).Field("error", reason);
    if (static_cast<size_t>(reg.not_offered_size()) >= kMaxNotOffered) continue;
    v1::DeviceNotOffered* n = reg.add_not_offered();
    n->set_path(path);
    // The tail: a console tail ends the reason of a guest that did not boot.
    n->set_reason(reason.size() <= kMaxReasonBytes
                      ? reason
                      : absl::StrCat(reason.substr(0, 512), "\n[...]\n",
                                     reason.substr(reason.size() - (kMaxReasonBytes - 600))));
  }
  for (v1::DeviceFacts& facts : offer.offered) *reg.add_devices() = std::move(facts);
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
  } else if (msg.has_renewed()) {
    OnRenewed(msg.renewed());
  } else if (msg.has_cancel()) {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(msg.cancel().run_id());
    if (it != runs_.end() && it->second->assignment.attempt() == msg.cancel().attempt()) {
      Info("run_cancel_requested")
          .Field("run", msg.cancel().run_id())
          .Field("attempt", msg.cancel().attempt())
          .Field("reason", msg.cancel().reason());
      it->second->cancel = true;
      if (!it->second->launched) Retire(it);  // never started: nothing to report
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
        Warn("run_rejected")
            .Field("run", ack.run_id())
            .Field("attempt", ack.attempt())
            .Field("error", ack.error());
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
          // Nothing left waiting: what is sent next gets a full heartbeat for its ack.
          run.resend_at_ms = run.unacked.empty() && !run.finished ? 0 : now + heartbeat_ms_;
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
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    auto it = runs_.find(a.run_id());
    if (it != runs_.end()) {
      const uint32_t held = it->second->assignment.attempt();
      if (held > a.attempt()) return;  // an older attempt, delivered late
      if (held == a.attempt()) {
        // A repeat (the controller had no confirmation): the heartbeat below confirms.
      } else {
        // A newer attempt supersedes what this agent still holds of the run (e.g. it
        // fenced itself during a controller stall): stop that one; Launch makes this one
        // wait until the old thread has left the device.
        Info("run_superseded")
            .Field("run", a.run_id())
            .Field("attempt", held)
            .Field("by_attempt", a.attempt());
        it->second->cancel = true;
        Retire(it);
        it = runs_.end();
      }
    }
    if (it == runs_.end()) {
      auto run = std::make_unique<ActiveRun>();
      run->assignment = a;
      runs_[a.run_id()] = std::move(run);
    }
  }
  SendHeartbeat();  // asks for the lease; OnRenewed launches the run
}

void Agent::OnRenewed(const v1::Renewed& renewed) {
  absl::MutexLock lock(&mu_);
  auto sent = heartbeat_sent_ms_.find(renewed.seq());
  if (sent == heartbeat_sent_ms_.end()) return;  // not ours to time (or answered already)
  const int64_t sent_ms = sent->second;
  heartbeat_sent_ms_.erase(heartbeat_sent_ms_.begin(), std::next(sent));
  for (const v1::ActiveRun& ar : renewed.runs()) {
    auto it = runs_.find(ar.run_id());
    if (it == runs_.end() || it->second->assignment.attempt() != ar.attempt()) continue;
    ActiveRun& run = *it->second;
    run.renewed_ms = std::max(run.renewed_ms, sent_ms);
    // A confirmation that arrives too late to leave any lease time (it was delayed with
    // a stalled controller) starts nothing; the next heartbeat's answer will.
    const int64_t budget = lease_ttl_ms_ - lease_ttl_ms_ / kFenceMarginDivisor;
    if (!run.launched && !run.cancel && clock_.MonotonicMs() < run.renewed_ms + budget) {
      Launch(&run);
    }
  }
  ++fence_epoch_;
}

void Agent::Launch(ActiveRun* r) {
  r->launched = true;
  // One writer per device: this run starts only after the run launched before it on the
  // same device (a superseded attempt draining its I/O, or a canceled run restoring the
  // host) has exited.
  std::shared_ptr<absl::Notification>& last = device_writer_[r->assignment.device_path()];
  if (last && !last->HasBeenNotified()) r->wait_for = last;
  last = r->exited;
  r->thread = std::thread([this, r] {
    if (r->wait_for) r->wait_for->WaitForNotification();  // the device's last writer is off
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
      // Queued, never written here: a stream that does not drain must not keep the
      // executor (which also checks the cancel flag) from stopping.
      Post(std::move(msg));
    };
    const v1::RunAssignment& a = r->assignment;
    // run_started / run_stopped bracket every write the run makes to its device: the
    // chaos tests check from them that no device ever has two writers.
    Info("run_started")
        .Field("agent", config_.agent_id)
        .Field("run", a.run_id())
        .Field("attempt", a.attempt())
        .Field("device", a.device_path());
    if (observer_ != nullptr) observer_->OnRunStarted(a);
    v1::RunFinished fin = executor_.Execute(a, r->cancel, on_sample);
    if (observer_ != nullptr) observer_->OnRunEnded(a, fin);
    {
      absl::MutexLock guard(&mu_);
      if (r->fenced) {
        fin.set_outcome(v1::RUN_OUTCOME_FENCED);
        fin.set_error(absl::StrCat("no lease renewal confirmed for ",
                                   lease_ttl_ms_ - lease_ttl_ms_ / kFenceMarginDivisor,
                                   " ms (lease TTL ", lease_ttl_ms_, " ms)"));
        fin.clear_result();
      }
      fin.set_last_sample_seq(r->last_seq);  // the result is stored only after these
      r->finished = fin;
      r->resend_at_ms = 0;  // the result gets a heartbeat for its ack before a resend
    }
    Info("run_stopped")
        .Field("agent", config_.agent_id)
        .Field("run", a.run_id())
        .Field("attempt", a.attempt())
        .Field("device", a.device_path())
        .Field("outcome", v1::RunOutcome_Name(fin.outcome()))
        .Field("error", fin.error());
    r->exited->Notify();
    v1::AgentMessage msg;
    *msg.mutable_finished() = fin;
    Post(std::move(msg));
  });
}

void Agent::Retire(std::map<uint64_t, std::unique_ptr<ActiveRun>>::iterator it) {
  std::unique_ptr<ActiveRun> run = std::move(it->second);
  runs_.erase(it);
  if (!run->launched) {
    run->exited->Notify();
    return;
  }
  retired_.push_back(std::move(run));
}

void Agent::ReapRetired() {
  std::vector<std::unique_ptr<ActiveRun>> done;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = retired_.begin(); it != retired_.end();) {
      if ((*it)->exited->HasBeenNotified()) {
        done.push_back(std::move(*it));
        it = retired_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& run : done) {
    if (run->thread.joinable()) run->thread.join();
  }
}

bool Agent::Send(const v1::AgentMessage& msg) {
  absl::MutexLock lock(&write_mu_);
  if (stream_ == nullptr) return false;  // kept as unacked; resent after reconnecting
  return stream_->Write(msg);
}

bool Agent::Post(v1::AgentMessage msg, bool resend) {
  absl::MutexLock lock(&mu_);
  return PostLocked(std::move(msg), resend);
}

bool Agent::PostLocked(v1::AgentMessage msg, bool resend) {
  if (!registered_) return false;  // no session: unacked messages wait for the next one
  constexpr size_t kMaxOutbox = 10'000;
  if (outbox_.size() >= kMaxOutbox) outbox_.pop_front();  // still unacked: resent later
  outbox_.emplace_back(std::move(msg), resend);
  return true;
}

void Agent::Sender(uint64_t session) {
  while (true) {
    std::deque<std::pair<v1::AgentMessage, bool>> batch;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this, session]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || session_ != session || !outbox_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (stopping_ || session_ != session) return;
      batch.swap(outbox_);
    }
    for (const auto& [m, resend] : batch) {
      if (!Send(m)) return;  // the stream broke; the session ends
      if (observer_ != nullptr && m.has_sample()) observer_->OnSampleSent(resend);
    }
  }
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
      run->resend_backoff_ms = std::min(std::max(run->resend_backoff_ms * 2, heartbeat_ms_),
                                        std::max(heartbeat_ms_, kMaxResendBackoffMs));
      run->resend_at_ms = now + run->resend_backoff_ms;
    }
  }
  for (v1::AgentMessage& m : pending) {
    if (!Post(std::move(m), /*resend=*/true)) return;
  }
}

void Agent::ResendUnacked() {
  std::vector<v1::AgentMessage> pending;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, run] : runs_) AppendUnacked(*run, &pending);
  }
  for (v1::AgentMessage& m : pending) {
    if (!Post(std::move(m), /*resend=*/true)) return;
  }
}

bool Agent::SendHeartbeat() {
  v1::AgentMessage msg;
  absl::MutexLock lock(&mu_);
  {
    v1::Heartbeat* hb = msg.mutable_heartbeat();
    for (v1::ActiveRun& ar : ActiveRunList()) *hb->add_active_runs() = ar;
    hb->set_seq(++heartbeat_seq_);
    // Taken before the write: the renewal happens no earlier than this.
    heartbeat_sent_ms_[hb->seq()] = clock_.MonotonicMs();
    constexpr size_t kMaxUnanswered = 1024;  // a controller that never answers
    while (heartbeat_sent_ms_.size() > kMaxUnanswered) {
      heartbeat_sent_ms_.erase(heartbeat_sent_ms_.begin());
    }
  }
  return PostLocked(std::move(msg), false);
}

void Agent::Heartbeats(uint64_t session) {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto session_over = [this, session]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || session_ != session;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&session_over), absl::Milliseconds(heartbeat_ms_))) {
        return;
      }
    }
    if (!SendHeartbeat()) return;
    ResendDue();
    ReapRetired();
    // Finished runs' state freed since the last beat goes back to the kernel.
    ReturnFreeMemoryToSystem();
  }
}

void Agent::FenceLoop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    const int64_t now = clock_.MonotonicMs();
    const int64_t budget = lease_ttl_ms_ - lease_ttl_ms_ / kFenceMarginDivisor;
    int64_t next = -1;
    for (auto& [id, run] : runs_) {
      if (!run->launched || run->finished || run->cancel) continue;
      const int64_t deadline = run->renewed_ms + budget;
      if (now >= deadline) {
        // The controller may give this lease away at renewed_ms + TTL: stop writing now,
        // with the margin to spare, whether or not the stream looks alive.
        Warn("run_fenced")
            .Field("agent", config_.agent_id)
            .Field("run", id)
            .Field("attempt", run->assignment.attempt())
            .Field("since_renewal_ms", now - run->renewed_ms)
            .Field("lease_ttl_ms", lease_ttl_ms_);
        run->fenced = true;
        run->cancel = true;
      } else if (next < 0 || deadline < next) {
        next = deadline;
      }
    }
    const uint64_t epoch = fence_epoch_;
    auto moved = [this, epoch]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || fence_epoch_ != epoch;
    };
    // The clock is the injected one; wake at the nearest deadline (at least every
    // heartbeat so a test clock's jumps are noticed) or when a deadline moved.
    const int64_t wait = next < 0 ? heartbeat_ms_ : std::min(next - now, heartbeat_ms_);
    mu_.AwaitWithTimeout(absl::Condition(&moved), absl::Milliseconds(std::max<int64_t>(wait, 1)));
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
    for (auto& run : retired_) runs.push_back(std::move(run));
    retired_.clear();
    ++fence_epoch_;
  }
  for (auto& run : runs) {
    if (run->thread.joinable()) run->thread.join();
  }
  absl::MutexLock lock(&mu_);
  if (ctx_ != nullptr) ctx_->TryCancel();
}

Agent::DebugSizes Agent::Sizes() {
  absl::MutexLock lock(&mu_);
  return DebugSizes{.runs = runs_.size(),
                    .retired = retired_.size(),
                    .unanswered_heartbeats = heartbeat_sent_ms_.size(),
                    .outbox = outbox_.size(),
                    .device_writers = device_writer_.size()};
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
