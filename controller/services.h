// gRPC transport for the controller: ControllerService (CLI, the sync API; AgentService
// is agent_service.h). Thin: each RPC checks its caller (Authorize: read < submit < admin
// from the client certificate; an agent only as itself), converts protobuf to calls on
// Controller and absl::Status to grpc::Status, in one place (ToGrpc).
#ifndef BLKBENCH_CONTROLLER_SERVICES_H_
#define BLKBENCH_CONTROLLER_SERVICES_H_

#include "absl/status/status.h"
#include "blkbench/v1/controller.grpc.pb.h"
#include "common/tls/credentials.h"
#include "controller/controller.h"
#include "controller/deadline.h"
#include "controller/limits.h"
#include "controller/metrics/service_metrics.h"
#include "grpcpp/grpcpp.h"

namespace blkbench {

// The status as gRPC's, same code and message, except that an Unavailable (the store's:
// the Controller answers no other) gets kStoreUnavailablePrefix (client_errors.h).
grpc::Status ToGrpc(const absl::Status& s);

// The caller of `ctx` (tls::CallerIdentity) if it holds `need`; PermissionDenied naming
// the caller, what it tried (`what`, e.g. "submit experiments") and the role it lacks.
absl::StatusOr<tls::Identity> Authorize(const grpc::ServerContext* ctx, tls::Role need,
                                        const char* what);

// The refusal of a `kind` ("agent", "watch") stream beyond its cap (RESOURCE_EXHAUSTED
// naming --max_<kind>_streams), counted in `metrics` (may be null) as "<kind>_streams".
grpc::Status AtStreamCap(const StreamSlots& slots, const std::string& kind,
                         ServiceMetrics* metrics);

// `clock` and `metrics` (may be null) must outlive the service.
class ControllerServiceImpl final : public v1::ControllerService::Service {
 public:
  ControllerServiceImpl(Controller& controller, Clock& clock, const ServiceLimits& limits,
                        ServiceMetrics* metrics)
      : controller_(controller),
        clock_(clock),
        unary_deadline_ms_(limits.unary_deadline_ms),
        metrics_(metrics),
        watch_slots_(limits.max_watch_streams) {}

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
  // The deadline of a unary call: min(the client's, --unary_deadline_ms) from now.
  Deadline UnaryDeadline(const grpc::ServerContext* ctx) const;

  Controller& controller_;
  Clock& clock_;
  const int64_t unary_deadline_ms_;
  ServiceMetrics* const metrics_;  // may be null
  StreamSlots watch_slots_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_SERVICES_H_
