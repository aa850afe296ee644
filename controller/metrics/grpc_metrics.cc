// gRPC server interceptor feeding ServiceMetrics; see grpc_metrics.h.
#include "controller/metrics/grpc_metrics.h"

#include <chrono>
#include <string>

#include "grpcpp/support/interceptor.h"

namespace blkbench {
namespace {

using grpc::experimental::InterceptionHookPoints;

class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(grpc::experimental::ServerRpcInfo* info, ServiceMetrics& metrics)
      : metrics_(metrics),
        method_(info->method() != nullptr ? info->method() : ""),
        unary_(info->type() == grpc::experimental::ServerRpcInfo::Type::UNARY),
        start_(std::chrono::steady_clock::now()) {
    metrics_.RpcStarted(method_);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() != nullptr) {
      metrics_.RpcMessageReceived(method_);
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      metrics_.RpcHandled(method_, GrpcCodeName(static_cast<int>(status.error_code())), seconds,
                          unary_);
    }
    methods->Proceed();
  }

 private:
  ServiceMetrics& metrics_;
  const std::string method_;
  const bool unary_;
  const std::chrono::steady_clock::time_point start_;
};

class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(ServiceMetrics& metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(info, metrics_);  // owned and deleted by gRPC
  }

 private:
  ServiceMetrics& metrics_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewGrpcMetricsInterceptorFactory(ServiceMetrics& metrics) {
  return std::make_unique<MetricsInterceptorFactory>(metrics);
}

}  // namespace blkbench
