// gRPC transport for the controller: ControllerService (CLI) and AgentService (agents).
// Thin: each RPC checks its caller (Authorize: read < submit < admin from the client
// certificate; an agent only as itself), converts protobuf to calls on Controller and
// absl::Status to grpc::Status, in one place (ToGrpc).
#ifndef BLKBENCH_CONTROLLER_SERVICES_H_
#define BLKBENCH_CONTROLLER_SERVICES_H_

#include <atomic>

#include "absl/status/status.h"
#include "blkbench/v1/agent.grpc.pb.h"
#include "blkbench/v1/controller.grpc.pb.h"
#include "common/tls/credentials.h"
#include "controller/controller.h"
#include "grpcpp/grpcpp.h"

namespace blkbench {

grpc::Status ToGrpc(const absl::Status& s);

// The caller of `ctx` (tls::CallerIdentity) if it holds `need`; PermissionDenied naming
// the caller, what it tried (`what`, e.g. "submit experiments") and the role it lacks.
absl::StatusOr<tls::Identity> Authorize(const grpc::ServerContext* ctx, tls::Role need,
                                        const char* what);

class ControllerServiceImpl final : public v1::ControllerService::Service {
 public:
  explicit ControllerServiceImpl(Controller& controller) : controller_(controller) {}

  grpc::Status SubmitExperiment(grpc::ServerContext*, const v1::SubmitExperimentRequest* req,
                                v1::Experiment* resp) override;
  grpc::Status GetExperiment(grpc::ServerContext*, const v1::GetExperimentRequest* req,
                             v1::Experiment* resp) override;
  grpc::Status ListExperiments(grpc::ServerContext*, const v1::ListExperimentsRequest* req,
                               v1::ListExperimentsResponse* resp) override;
  grpc::Status WatchExperiment(grpc::ServerContext* ctx, const v1::WatchExperimentRequest* req,
                               grpc::ServerWriter<v1::WatchEvent>* writer) override;
  grpc::Status CancelExperiment(grpc::ServerContext*, const v1::CancelExperimentRequest* req,
                                v1::Experiment* resp) override;
  grpc::Status ListAgents(grpc::ServerContext*, const v1::ListAgentsRequest* req,
                          v1::ListAgentsResponse* resp) override;
  grpc::Status GetResults(grpc::ServerContext*, const v1::GetResultsRequest* req,
                          v1::GetResultsResponse* resp) override;
  grpc::Status AddRepeats(grpc::ServerContext*, const v1::AddRepeatsRequest* req,
                          v1::AddRepeatsResponse* resp) override;
  grpc::Status GetHistory(grpc::ServerContext*, const v1::GetHistoryRequest* req,
                          v1::GetHistoryResponse* resp) override;

 private:
  // OK if `who` submitted experiment `id` or is an admin; PermissionDenied otherwise.
  grpc::Status CheckOwner(const tls::Identity& who, uint64_t id, const char* what);
  Controller& controller_;
};

class AgentServiceImpl final : public v1::AgentService::Service {
 public:
  explicit AgentServiceImpl(Controller& controller) : controller_(controller) {}

  grpc::Status Connect(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream) override;

 private:
  Controller& controller_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_SERVICES_H_
