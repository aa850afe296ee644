// ServiceMetrics: the controller's own health — store operation latencies and errors,
// placement pass latency and queue wait, gRPC requests by method and status code.
#ifndef BLKBENCH_CONTROLLER_METRICS_SERVICE_METRICS_H_
#define BLKBENCH_CONTROLLER_METRICS_SERVICE_METRICS_H_

#include <string>
#include <vector>

#include "blkbench/v1/controller.pb.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace blkbench {

// Thread-safe (prometheus-cpp families and metrics are). Families live in `registry`,
// which must outlive this object.
class ServiceMetrics {
 public:
  // `store_operations` are pre-created with zero errors so dashboards show 0, not "no
  // data", on a healthy store.
  ServiceMetrics(prometheus::Registry& registry, const std::vector<std::string>& store_operations);

  // One Store call named `operation` took `seconds`; `ok` is false when it failed.
  void ObserveStore(const std::string& operation, double seconds, bool ok);
  // A placement pass took `seconds` and assigned `placed` (see ControllerObserver).
  void ObservePlacement(double seconds, const std::vector<v1::Run>& placed);
  // gRPC, per full method name ("/blkbench.v1.ControllerService/SubmitExperiment").
  void RpcStarted(const std::string& full_method);
  void RpcMessageReceived(const std::string& full_method);
  // `seconds` is observed only for unary calls (streams last as long as agents stay).
  void RpcHandled(const std::string& full_method, const std::string& code, double seconds,
                  bool unary);
  // A call or stream was refused or ended at a limit ("agent_streams", "watch_streams",
  // "agent_message_rate"; docs/security.md "Limits").
  void LimitRefused(const std::string& limit);

 private:
  prometheus::Family<prometheus::Histogram>& store_duration_;
  prometheus::Family<prometheus::Counter>& store_errors_;
  prometheus::Histogram& placement_duration_;
  prometheus::Histogram& queue_wait_;
  prometheus::Counter& runs_placed_;
  prometheus::Family<prometheus::Counter>& rpc_started_;
  prometheus::Family<prometheus::Counter>& rpc_handled_;
  prometheus::Family<prometheus::Counter>& rpc_received_;
  prometheus::Family<prometheus::Histogram>& rpc_duration_;
  prometheus::Family<prometheus::Counter>& limit_refusals_;
};

// "/blkbench.v1.ControllerService/SubmitExperiment" -> {service: "blkbench.v1.ControllerService",
// method: "SubmitExperiment"}; anything else -> {service: "unknown", method: the input}.
prometheus::Labels RpcLabels(const std::string& full_method);

// "DEADLINE_EXCEEDED" for grpc::StatusCode 4, as grpc's own metrics name codes.
std::string GrpcCodeName(int code);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_METRICS_SERVICE_METRICS_H_
