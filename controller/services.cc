// gRPC transport for the controller; see services.h.
#include "controller/services.h"

#include <memory>

#include "absl/synchronization/mutex.h"
#include "common/states.h"
#include "controller/metrics/http_sd.h"

namespace blkbench {
namespace {

// An agent's stream as an AgentLink. Writes from any thread are serialized; once the
// Connect handler returns the link is closed and Send refuses (the stream is gone).
class StreamLink final : public AgentLink {
 public:
  StreamLink(grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream,
             std::string peer)
      : stream_(stream), peer_(std::move(peer)) {}
  std::string Peer() const override { return peer_; }

  bool Send(const v1::ControllerMessage& msg) override {
    absl::MutexLock lock(&mu_);
    if (stream_ == nullptr) return false;
    return stream_->Write(msg);
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    stream_ = nullptr;
  }

 private:
  absl::Mutex mu_;
  grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream_ ABSL_GUARDED_BY(mu_);
  const std::string peer_;
};

}  // namespace

grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

grpc::Status ControllerServiceImpl::SubmitExperiment(grpc::ServerContext*,
                                                     const v1::SubmitExperimentRequest* req,
                                                     v1::Experiment* resp) {
  auto exp = controller_.Submit(req->file_name(), req->matrix_text());
  if (!exp.ok()) return ToGrpc(exp.status());
  *resp = std::move(*exp);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::GetExperiment(grpc::ServerContext*,
                                                  const v1::GetExperimentRequest* req,
                                                  v1::Experiment* resp) {
  auto exp = controller_.GetExperiment(req->id(), req->with_results());
  if (!exp.ok()) return ToGrpc(exp.status());
  *resp = std::move(*exp);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::ListExperiments(grpc::ServerContext*,
                                                    const v1::ListExperimentsRequest* req,
                                                    v1::ListExperimentsResponse* resp) {
  auto exps = controller_.ListExperiments(req->limit());
  if (!exps.ok()) return ToGrpc(exps.status());
  for (auto& e : *exps) *resp->add_experiments() = std::move(e);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::WatchExperiment(grpc::ServerContext* ctx,
                                                    const v1::WatchExperimentRequest* req,
                                                    grpc::ServerWriter<v1::WatchEvent>* writer) {
  uint64_t seen = 0;
  while (!ctx->IsCancelled()) {
    auto exp = controller_.GetExperiment(req->id(), false);
    if (!exp.ok()) return ToGrpc(exp.status());
    v1::WatchEvent ev;
    *ev.mutable_experiment() = *exp;
    if (!writer->Write(ev)) return grpc::Status::OK;
    if (IsEndedExperimentState(exp->state())) return grpc::Status::OK;
    // Wake on any change, and at least every second so a cancelled client is noticed.
    seen = controller_.WaitForChange(seen, absl::Seconds(1));
  }
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::CancelExperiment(grpc::ServerContext*,
                                                     const v1::CancelExperimentRequest* req,
                                                     v1::Experiment* resp) {
  auto exp = controller_.Cancel(req->id());
  if (!exp.ok()) return ToGrpc(exp.status());
  *resp = std::move(*exp);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::ListAgents(grpc::ServerContext*, const v1::ListAgentsRequest*,
                                               v1::ListAgentsResponse* resp) {
  auto agents = controller_.ListAgents();
  if (!agents.ok()) return ToGrpc(agents.status());
  for (auto& a : *agents) *resp->add_agents() = std::move(a);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::GetResults(grpc::ServerContext*,
                                               const v1::GetResultsRequest* req,
                                               v1::GetResultsResponse* resp) {
  auto res = controller_.GetResults(req->experiment_id(), req->with_samples());
  if (!res.ok()) return ToGrpc(res.status());
  *resp = std::move(*res);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::AddRepeats(grpc::ServerContext*,
                                               const v1::AddRepeatsRequest* req,
                                               v1::AddRepeatsResponse* resp) {
  const std::vector<uint32_t> cells(req->cell_indices().begin(), req->cell_indices().end());
  auto res = controller_.AddRepeats(req->experiment_id(), cells, req->count());
  if (!res.ok()) return ToGrpc(res.status());
  *resp = std::move(*res);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::GetHistory(grpc::ServerContext*,
                                               const v1::GetHistoryRequest* req,
                                               v1::GetHistoryResponse* resp) {
  auto res = controller_.GetHistory(*req);
  if (!res.ok()) return ToGrpc(res.status());
  *resp = std::move(*res);
  return grpc::Status::OK;
}

grpc::Status AgentServiceImpl::Connect(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream) {
  v1::AgentMessage msg;
  if (!stream->Read(&msg)) return grpc::Status::OK;
  if (!msg.has_register_()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "the first message on AgentService.Connect must be register");
  }
  const std::string agent_id = msg.register_().agent_id();
  // "0.0.0.0:9471" means "where I connect from": make it a scrapable target.
  msg.mutable_register_()->set_metrics_address(
      ResolveMetricsAddress(msg.register_().metrics_address(), ctx->peer()));
  auto link = std::make_shared<StreamLink>(stream, ctx->peer());
  if (absl::Status s = controller_.OnRegister(msg.register_(), link); !s.ok()) {
    link->Close();
    return ToGrpc(s);
  }
  while (stream->Read(&msg)) {
    switch (msg.msg_case()) {
      case v1::AgentMessage::kHeartbeat:
        controller_.OnHeartbeat(agent_id, msg.heartbeat());
        break;
      case v1::AgentMessage::kSample:
        controller_.OnSample(agent_id, msg.sample());
        break;
      case v1::AgentMessage::kFinished:
        controller_.OnFinished(agent_id, msg.finished());
        break;
      default:
        break;  // a second register on one stream is ignored
    }
  }
  controller_.OnDisconnect(agent_id, link.get());
  link->Close();
  return grpc::Status::OK;
}

}  // namespace blkbench
