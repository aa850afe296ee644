// ServiceMetrics: families and observations; see service_metrics.h.
#include "controller/metrics/service_metrics.h"

namespace blkbench {
namespace {

// 100 us .. 10 s: an fsync'ed SQLite commit is ~1 ms on SSD, tens of ms on HDD.
const prometheus::Histogram::BucketBoundaries kStoreBuckets = {
    100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1, 10};
// Queue waits run from milliseconds (free devices) to hours (a busy lab).
const prometheus::Histogram::BucketBoundaries kQueueWaitBuckets = {
    0.01, 0.1, 1, 10, 60, 300, 900, 3600, 4 * 3600, 24 * 3600};

}  // namespace

prometheus::Labels RpcLabels(const std::string& full_method) {
  const size_t slash = full_method.rfind('/');
  if (full_method.empty() || full_method[0] != '/' || slash == 0 || slash == std::string::npos) {
    return {{"service", "unknown"}, {"method", full_method}};
  }
  return {{"service", full_method.substr(1, slash - 1)}, {"method", full_method.substr(slash + 1)}};
}

std::string GrpcCodeName(int code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  if (code < 0 || code >= static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))) return "UNKNOWN";
  return kNames[code];
}

ServiceMetrics::ServiceMetrics(prometheus::Registry& registry,
                               const std::vector<std::string>& store_operations)
    : store_duration_(prometheus::BuildHistogram()
                          .Name("blkbench_store_operation_duration_seconds")
                          .Help("Duration of store operations (one SQLite transaction each), by "
                                "operation")
                          .Register(registry)),
      store_errors_(prometheus::BuildCounter()
                        .Name("blkbench_store_errors_total")
                        .Help("Store operations that returned an error, by operation")
                        .Register(registry)),
      placement_duration_(prometheus::BuildHistogram()
                              .Name("blkbench_placement_duration_seconds")
                              .Help("Duration of a placement pass over the queued runs (store "
                                    "reads and assignments)")
                              .Register(registry)
                              .Add({}, kStoreBuckets)),
      queue_wait_(prometheus::BuildHistogram()
                      .Name("blkbench_run_queue_wait_seconds")
                      .Help("Time from a run's submission to its (latest) assignment to an "
                            "agent's device")
                      .Register(registry)
                      .Add({}, kQueueWaitBuckets)),
      runs_placed_(prometheus::BuildCounter()
                       .Name("blkbench_runs_placed_total")
                       .Help("Run attempts assigned to an agent's device")
                       .Register(registry)
                       .Add({})),
      rpc_started_(prometheus::BuildCounter()
                       .Name("blkbench_grpc_server_started_total")
                       .Help("gRPC calls started on the controller, by service and method")
                       .Register(registry)),
      rpc_handled_(prometheus::BuildCounter()
                       .Name("blkbench_grpc_server_handled_total")
                       .Help("gRPC calls completed by the controller, by service, method and "
                             "status code (code != OK are errors)")
                       .Register(registry)),
      rpc_received_(prometheus::BuildCounter()
                        .Name("blkbench_grpc_server_msg_received_total")
                        .Help("Messages received on gRPC calls (agent stream messages count "
                              "one each), by service and method")
                        .Register(registry)),
      rpc_duration_(prometheus::BuildHistogram()
                        .Name("blkbench_grpc_server_handling_seconds")
                        .Help("Duration of unary gRPC calls, by service and method")
                        .Register(registry)),
      limit_refusals_(prometheus::BuildCounter()
                          .Name("blkbench_grpc_server_limit_refusals_total")
                          .Help("Streams refused or ended at a limit: agent_streams, "
                                "watch_streams (caps on concurrent streams), "
                                "agent_message_rate (an agent outran --agent_msg_rate)")
                          .Register(registry)) {
  for (const char* limit : {"agent_streams", "watch_streams", "agent_message_rate"}) {
    limit_refusals_.Add({{"limit", limit}});
  }
  for (const std::string& op : store_operations) {
    store_errors_.Add({{"operation", op}});
    store_duration_.Add({{"operation", op}}, kStoreBuckets);
  }
}

void ServiceMetrics::ObserveStore(const std::string& operation, double seconds, bool ok) {
  store_duration_.Add({{"operation", operation}}, kStoreBuckets).Observe(seconds);
  if (!ok) store_errors_.Add({{"operation", operation}}).Increment();
}

void ServiceMetrics::ObservePlacement(double seconds, const std::vector<v1::Run>& placed) {
  placement_duration_.Observe(seconds);
  for (const v1::Run& run : placed) {
    runs_placed_.Increment();
    if (run.started_unix_ms() >= run.created_unix_ms() && run.created_unix_ms() > 0) {
      queue_wait_.Observe(static_cast<double>(run.started_unix_ms() - run.created_unix_ms()) / 1e3);
    }
  }
}

void ServiceMetrics::RpcStarted(const std::string& full_method) {
  rpc_started_.Add(RpcLabels(full_method)).Increment();
}

void ServiceMetrics::RpcMessageReceived(const std::string& full_method) {
  rpc_received_.Add(RpcLabels(full_method)).Increment();
}

void ServiceMetrics::RpcHandled(const std::string& full_method, const std::string& code,
                                double seconds, bool unary) {
  prometheus::Labels labels = RpcLabels(full_method);
  if (unary) rpc_duration_.Add(labels, kStoreBuckets).Observe(seconds);
  labels["code"] = code;
  rpc_handled_.Add(labels).Increment();
}

void ServiceMetrics::LimitRefused(const std::string& limit) {
  limit_refusals_.Add({{"limit", limit}}).Increment();
}

}  // namespace blkbench
