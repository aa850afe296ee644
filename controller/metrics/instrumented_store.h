// InstrumentedStore: a StoreWrapper that times every call into ServiceMetrics
// (blkbench_store_operation_duration_seconds, blkbench_store_errors_total); the
// controller's store is wrapped in it when metrics are on.
#ifndef BLKBENCH_CONTROLLER_METRICS_INSTRUMENTED_STORE_H_
#define BLKBENCH_CONTROLLER_METRICS_INSTRUMENTED_STORE_H_

#include <memory>

#include "controller/metrics/service_metrics.h"
#include "controller/store/store.h"
#include "controller/store/store_wrapper.h"

namespace blkbench {

// Thread-safe as the wrapped store is. `metrics` must outlive this object.
class InstrumentedStore final : public StoreWrapper {
 public:
  InstrumentedStore(std::unique_ptr<Store> inner, ServiceMetrics& metrics)
      : StoreWrapper(std::move(inner)), metrics_(metrics) {}

 private:
  void Observe(const char* operation, double seconds, bool ok) override {
    metrics_.ObserveStore(operation, seconds, ok);
  }

  ServiceMetrics& metrics_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_METRICS_INSTRUMENTED_STORE_H_
