// A gRPC server interceptor that counts the controller's calls, messages and status
// codes into ServiceMetrics (blkbench_grpc_server_*).
#ifndef BLKBENCH_CONTROLLER_METRICS_GRPC_METRICS_H_
#define BLKBENCH_CONTROLLER_METRICS_GRPC_METRICS_H_

#include <memory>

#include "controller/metrics/service_metrics.h"
#include "grpcpp/support/server_interceptor.h"

namespace blkbench {

// For ServerBuilder::experimental().SetInterceptorCreators. `metrics` must outlive the
// server.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewGrpcMetricsInterceptorFactory(ServiceMetrics& metrics);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_METRICS_GRPC_METRICS_H_
