// AgentService.Connect on the callback API; see agent_service.h.
//
// Who touches one stream, and why it is safe:
//  - gRPC's callback threads run the reactions: OnReadDone, OnWriteDone, OnCancel, OnDone.
//  - a worker (WorkPool) handles the message just read, or ends the stream.
//  - any thread may call AgentLink::Send: acks from the batcher, assignments from
//    placement, renewals from a worker.
// The Controller keeps the StreamLink (a shared_ptr) as long as it likes; the reactor
// (Stream) deletes itself in OnDone. So whatever reaches the reactor from outside its read
// path goes through the link, under the link's mutex, which holds the reactor pointer and
// clears it in OnDone: a Send after that returns false. The read path is sequential —
// StartRead → OnReadDone → a worker's Step → StartRead …, or → End, which hands the final
// status to the link — and the link calls Finish only once no write is in flight. OnDone
// comes only after Finish and after every reaction, so it never runs under a worker (the
// worker's last act is handing over the status) nor under Send (it takes the link's mutex
// first). gRPC runs no reaction inline in StartWrite, Finish or TryCancel (they are not
// inlineable for a user reactor), so calling them under the link's mutex cannot re-enter it.
#include "controller/agent_service.h"

#include <deque>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log/log.h"
#include "controller/metrics/http_sd.h"
#include "controller/request_checks.h"
#include "controller/services.h"

namespace blkbench {
namespace {

using StreamReactor = grpc::ServerBidiReactor<v1::AgentMessage, v1::ControllerMessage>;
constexpr char kConnectMethod[] = "/blkbench.v1.AgentService/Connect";

// OnReadDone(false) means both the end of the stream and a message that did not parse
// (grpc CallOpRecvMessage::FinishOp sets the op's status to the deserializer's result),
// as the sync API's Read() did. gRPC parses with MessageLite::ParseFromZeroCopyStream,
// which clears the message first (message_lite.h: "Clear() will be called before merging
// the input"), so a marker put into the message's unknown fields before StartRead is
// still there only if no message arrived.
constexpr int kMarkerField = 536'870'911;  // the largest field number
constexpr uint64_t kMarker = 0x626b'626e'6e6f'6e65;

void PutMarker(v1::AgentMessage& msg) {
  msg.Clear();
  msg.GetReflection()->MutableUnknownFields(&msg)->AddVarint(kMarkerField, kMarker);
}

bool MarkerUntouched(const v1::AgentMessage& msg) {
  const google::protobuf::UnknownFieldSet& unknown = msg.GetReflection()->GetUnknownFields(msg);
  return unknown.field_count() == 1 && unknown.field(0).number() == kMarkerField &&
         unknown.field(0).type() == google::protobuf::UnknownField::TYPE_VARINT &&
         unknown.field(0).varint() == kMarker;
}

// A stream beyond the cap: ends at once.
class RefusedStream final : public StreamReactor {
 public:
  explicit RefusedStream(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

// An agent's stream as an AgentLink, and the stream's write side: a queue of messages
// written one at a time (the front one is in flight while `writing_`).
class StreamLink final : public AgentLink {
 public:
  StreamLink(StreamReactor* reactor, grpc::CallbackServerContext* ctx, StreamSlots::Slot slot,
             size_t max_waiting)
      : peer_(ctx->peer()),
        max_waiting_(max_waiting),
        reactor_(reactor),
        ctx_(ctx),
        slot_(std::move(slot)) {}

  std::string Peer() const override { return peer_; }

  // Never blocks: queues `msg`, starting its write if none is in flight. False (nothing
  // queued) once the stream is ending or gone, and when max_waiting messages wait
  // already: the agent is not reading, so the stream is cancelled.
  bool Send(const v1::ControllerMessage& msg) override {
    absl::MutexLock lock(&mu_);
    if (reactor_ == nullptr || !open_ || cancelled_.load()) return false;
    if (writes_.size() > max_waiting_) {
      open_ = false;
      overflowed_ = true;
      writes_.resize(1);  // the one in flight stays: gRPC holds a pointer to it
      ctx_->TryCancel();  // fails the stuck write and the pending read: the stream ends
      return false;
    }
    writes_.push_back(msg);
    if (!writing_) {
      writing_ = true;
      reactor_->StartWrite(&writes_.front());
    }
    return true;
  }

  // OnWriteDone: the next write, or the deferred Finish.
  void WriteDone(bool ok) {
    absl::MutexLock lock(&mu_);
    writes_.pop_front();
    writing_ = false;
    if (!ok) {  // the stream is broken: nothing more gets through
      open_ = false;
      writes_.clear();
    }
    if (!writes_.empty()) {
      writing_ = true;
      reactor_->StartWrite(&writes_.front());
      return;
    }
    MaybeFinish();
  }

  // OnCancel: refuse Sends from now on (no lock: a reaction must not wait).
  void Cancelled() { cancelled_.store(true); }

  // The read side ended with `status`: Sends are refused, what is queued is still
  // written, then the stream is finished. The reactor may be gone when this returns.
  void Finish(grpc::Status status) {
    absl::MutexLock lock(&mu_);
    open_ = false;
    final_ = std::move(status);
    MaybeFinish();
  }

  // OnDone: the reactor is about to be deleted.
  void Detach() {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
    ctx_ = nullptr;
    writes_.clear();
    { StreamSlots::Slot release = std::move(slot_); }  // released already unless Finish was skipped
  }

  bool overflowed() const {
    absl::MutexLock lock(&mu_);
    return overflowed_;
  }

 private:
  void MaybeFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!final_.has_value() || finished_ || writing_) return;
    finished_ = true;
    // Freed before the agent can see the status, so a reconnect right after it finds
    // the slot free.
    { StreamSlots::Slot release = std::move(slot_); }
    reactor_->Finish(*final_);
  }

  const std::string peer_;
  const size_t max_waiting_;
  std::atomic<bool> cancelled_{false};
  mutable absl::Mutex mu_;
  StreamReactor* reactor_ ABSL_GUARDED_BY(mu_);            // null after OnDone
  grpc::CallbackServerContext* ctx_ ABSL_GUARDED_BY(mu_);  // likewise
  StreamSlots::Slot slot_ ABSL_GUARDED_BY(mu_);            // held until Finish
  // std::deque: push_back and pop_front keep the front's address, which gRPC holds.
  std::deque<v1::ControllerMessage> writes_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool open_ ABSL_GUARDED_BY(mu_) = true;  // Send accepts
  bool overflowed_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> final_ ABSL_GUARDED_BY(mu_);  // the read side ended
  bool finished_ ABSL_GUARDED_BY(mu_) = false;              // Finish was called
};

}  // namespace

// One admitted stream's read side. Its members below link_ are touched only by the read
// path, one step at a time (each step starts the next: StartRead, OnReadDone, Step), so
// they need no lock.
class AgentServiceImpl::Stream final : public StreamReactor {
 public:
  Stream(AgentServiceImpl& service, grpc::CallbackServerContext* ctx, StreamSlots::Slot slot)
      : service_(service),
        ctx_(ctx),
        link_(std::make_shared<StreamLink>(this, ctx, std::move(slot),
                                           static_cast<size_t>(service.limits_.agent_write_queue))),
        bucket_(service.clock_, service.limits_.agent_messages_per_s,
                service.limits_.agent_message_burst) {
    StartNextRead();
  }

  void OnReadDone(bool ok) override {
    service_.workers_.Post([this, ok] { Step(ok); });
  }
  void OnWriteDone(bool ok) override { link_->WriteDone(ok); }
  void OnCancel() override { link_->Cancelled(); }
  void OnDone() override {
    link_->Detach();
    delete this;
  }

 private:
  void StartNextRead() {
    PutMarker(msg_);
    StartRead(&msg_);
  }

  // On a worker: the message just read (or the end), then the next read or End.
  void Step(bool ok) {
    std::optional<grpc::Status> end = Handle(ok);
    if (end.has_value()) {
      End(std::move(*end));
    } else {
      StartNextRead();
    }
  }

  // Nothing to keep reading on; otherwise the status that ends the stream.
  std::optional<grpc::Status> Handle(bool ok) {
    if (!ok) {
      if (link_->overflowed()) return Overflowed();
      if (MarkerUntouched(msg_)) return grpc::Status::OK;  // the end (or a cancel)
      return MalformedRequest(kConnectMethod, received_ + 1);
    }
    ++received_;
    if (!bucket_.TryTake()) return RateExceeded();
    if (!registered_) return Register();
    Controller& controller = service_.controller_;
    switch (msg_.msg_case()) {
      case v1::AgentMessage::kHeartbeat:
        controller.OnHeartbeat(agent_id_, msg_.heartbeat());
        break;
      case v1::AgentMessage::kSample:
        controller.OnSample(agent_id_, msg_.sample());
        break;
      case v1::AgentMessage::kFinished:
        controller.OnFinished(agent_id_, msg_.finished());
        break;
      default:
        break;  // a second register on one stream is ignored
    }
    return std::nullopt;
  }

  std::optional<grpc::Status> Register() {
    if (!msg_.has_register_()) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "the first message on AgentService.Connect must be register");
    }
    const std::string agent_id = msg_.register_().agent_id();
    // An agent registers only as the agent its certificate names, or as any agent from
    // an admin's local connection (the Unix socket's root agent, or --insecure TCP).
    absl::StatusOr<tls::Identity> who = tls::CallerIdentity(*ctx_->auth_context());
    if (!who.ok()) return ToGrpc(who.status());
    const bool allowed = who->local ? who->Allows(tls::Role::kAdmin)
                                    : who->kind == tls::Kind::kAgent && who->name == agent_id;
    if (!allowed) {
      LogEvent(LogLevel::kWarning, "controller", "agent_identity_refused")
          .Field("agent", agent_id)
          .Field("certificate", who->Describe())
          .Field("peer", link_->Peer());
      return ToGrpc(absl::PermissionDeniedError(
          who->local ? absl::StrCat(who->Describe(), " may not register agents (",
                                    tls::kLocalAdminHint, ")")
                     : absl::StrCat("the client certificate is for ", who->Describe(),
                                    "; registering as agent \"", agent_id, "\" is refused")));
    }
    // "0.0.0.0:9471" means "where I connect from": make it a scrapable target.
    msg_.mutable_register_()->set_metrics_address(
        ResolveMetricsAddress(msg_.register_().metrics_address(), link_->Peer()));
    if (service_.link_hook_) service_.link_hook_(agent_id, link_);
    if (absl::Status s = service_.controller_.OnRegister(msg_.register_(), link_); !s.ok()) {
      return ToGrpc(s);
    }
    agent_id_ = agent_id;
    registered_ = true;
    return std::nullopt;
  }

  grpc::Status RateExceeded() {
    service_.rate_limited_.fetch_add(1);
    if (service_.metrics_ != nullptr) service_.metrics_->LimitRefused("agent_message_rate");
    const ServiceLimits& limits = service_.limits_;
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat("agent stream from ", link_->Peer(), " sent more than ",
                     limits.agent_messages_per_s, " messages/s (burst ", limits.agent_message_burst,
                     "; --agent_msg_rate, --agent_msg_burst); reconnect and send slower"));
  }

  grpc::Status Overflowed() {
    service_.write_overflows_.fetch_add(1);
    if (service_.metrics_ != nullptr) service_.metrics_->LimitRefused("agent_write_queue");
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat("agent stream from ", link_->Peer(), " left more than ",
                     service_.limits_.agent_write_queue,
                     " messages unread (--agent_write_queue); reconnect and read the stream"));
  }

  // The stream's last step on the read path: the Controller hears of the disconnect,
  // then the link finishes the stream once its writes are out.
  void End(grpc::Status status) {
    if (registered_) {
      if (!status.ok()) {
        LogEvent(LogLevel::kWarning, "controller", "agent_stream_refused")
            .Field("agent", agent_id_)
            .Field("peer", link_->Peer())
            .Field("error", status.error_message());
      }
      service_.controller_.OnDisconnect(agent_id_, link_.get());
    }
    const std::shared_ptr<StreamLink> link = link_;  // *this may be deleted inside Finish
    link->Finish(std::move(status));
  }

  AgentServiceImpl& service_;
  grpc::CallbackServerContext* const ctx_;
  const std::shared_ptr<StreamLink> link_;
  v1::AgentMessage msg_;  // the read in flight lands here
  TokenBucket bucket_;
  uint64_t received_ = 0;
  bool registered_ = false;
  std::string agent_id_;
};

AgentServiceImpl::AgentServiceImpl(Controller& controller, Clock& clock,
                                   const ServiceLimits& limits, ServiceMetrics* metrics)
    : controller_(controller),
      clock_(clock),
      limits_(limits),
      metrics_(metrics),
      slots_(limits.max_agent_streams),
      workers_(limits.agent_workers, "agent_worker") {}

StreamReactor* AgentServiceImpl::Connect(grpc::CallbackServerContext* ctx) {
  StreamSlots::Slot slot = slots_.TryAcquire();
  if (!slot.held()) return new RefusedStream(AtStreamCap(slots_, "agent", metrics_));
  return new Stream(*this, ctx, std::move(slot));
}

}  // namespace blkbench
