// The request-checks interceptor; see request_checks.h.
#include "controller/request_checks.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/support/interceptor.h"

namespace blkbench {
namespace {

using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::ServerRpcInfo;

// "blkbench.v1.GetExperimentRequest" for "/blkbench.v1.ControllerService/GetExperiment";
// "" for a method the generated pool does not know.
std::string RequestType(const std::string& full_method) {
  std::string name = full_method;
  if (!name.empty() && name.front() == '/') name.erase(0, 1);
  absl::StrReplaceAll({{"/", "."}}, &name);
  const google::protobuf::MethodDescriptor* method =
      google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(name);
  return method == nullptr ? "" : method->input_type()->full_name();
}

// What the sync server answers (RESOURCE_EXHAUSTED) when it has no thread for a call
// (grpc 1.51 src/cpp/server/server_cc.cc).
constexpr char kThreadpoolExhausted[] = "Server Threadpool Exhausted";

class RequestChecksInterceptor final : public grpc::experimental::Interceptor {
 public:
  RequestChecksInterceptor(ServerRpcInfo* info, int max_threads)
      : method_(info->method() != nullptr ? info->method() : ""),
        single_request_(info->type() == ServerRpcInfo::Type::UNARY ||
                        info->type() == ServerRpcInfo::Type::SERVER_STREAMING),
        max_threads_(max_threads) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr && single_request_) {
      no_request_ = true;
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      if (no_request_ && status.error_code() == grpc::StatusCode::INTERNAL) {
        // The handler did not run: the only INTERNAL then is gRPC's failed deserialization.
        methods->ModifySendStatus(MalformedRequest(method_));
      } else if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
                 status.error_message() == kThreadpoolExhausted) {
        methods->ModifySendStatus(grpc::Status(
            grpc::StatusCode::RESOURCE_EXHAUSTED,
            absl::StrCat(kThreadpoolExhausted, ": controller has no thread free for ", method_,
                         " (at most ", max_threads_,
                         " threads: --max_watch_streams + --unary_threads + 1); try again later")));
      }
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  const bool single_request_;
  const int max_threads_;
  bool no_request_ = false;
};

class RequestChecksFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RequestChecksFactory(int max_threads) : max_threads_(max_threads) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(ServerRpcInfo* info) override {
    return new RequestChecksInterceptor(info, max_threads_);  // owned and deleted by gRPC
  }

 private:
  const int max_threads_;
};

}  // namespace

grpc::Status MalformedRequest(const std::string& full_method, uint64_t index) {
  const std::string type = RequestType(full_method);
  return grpc::Status(
      grpc::StatusCode::INVALID_ARGUMENT,
      absl::StrCat(index > 0 ? absl::StrCat("message ", index, " on ") : "the request to ",
                   full_method, " is not a valid ", type.empty() ? "protobuf message" : type,
                   " (malformed protobuf)"));
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewRequestChecksInterceptorFactory(int max_threads) {
  return std::make_unique<RequestChecksFactory>(max_threads);
}

}  // namespace blkbench
