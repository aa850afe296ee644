// ControllerServer: the controller daemon assembled — SQLite store, Controller, gRPC
// server on TCP and/or a Unix socket, and the lease ticker. Used by main.cc and by
// in-process integration tests.
#ifndef BLKBENCH_CONTROLLER_SERVER_H_
#define BLKBENCH_CONTROLLER_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/tls/revocation.h"
#include "controller/agent_service.h"
#include "controller/controller.h"
#include "controller/limits.h"
#include "controller/local_socket.h"
#include "controller/metrics/prometheus_exporter.h"
#include "controller/services.h"
#include "controller/store/store.h"
#include "grpcpp/grpcpp.h"

namespace blkbench {

struct ServerOptions {
  std::string listen;  // host:port; port 0 picks a free one; "" = none
  // Path of the Unix socket (controller/local_socket.h: no TLS; root, the controller's
  // user and the blkbench group are admin, other local users read); "" = none. The
  // daemon's default is tls::kDefaultControllerSocket.
  std::string unix_socket;
  // Neither listen nor unix_socket: served only through InProcessChannel() (the CLI's
  // `--db FILE`, reading a local store through the controller's own services).
  bool in_process_only = false;
  // Lab PKI directory (ca.pem, controller.pem/.key): TCP is served with mutual TLS and
  // callers act as their certificates say. "" = no TLS: TCP only with `insecure`.
  std::string tls_dir;
  // Serve `listen` without TLS (loudly): every caller is admin — on loopback every local
  // user, beyond it anyone who can reach the port.
  bool insecure = false;
  // The deny list both gRPC and HTTPS consult, loaded once by the caller so the two
  // cannot disagree; null: <tls_dir>/revoked.txt, loaded by Start.
  std::shared_ptr<tls::RevocationList> revoked;
  std::string db_path;  // the store (required): a SQLite file or postgresql:// URI (OpenStore)
  // Skip a SQLite store's PRAGMA quick_check at start (--skip_db_check): it reads the whole
  // file. Whose file it is is checked either way.
  bool skip_db_check = false;
  ControllerOptions controller;
  ServiceLimits limits;   // streams, threads, deadlines, rates (controller/limits.h)
  int64_t tick_ms = 500;  // lease expiry and placement check period
  ExporterOptions metrics = ExporterListening("");  // /metrics address; "" = no exporter
  int64_t metrics_refresh_ms = 5'000;               // store-derived gauges (state counts, agents)
  // Test seam: decorates the opened store (e.g. with controller/store/store_wrapper.h's
  // FaultyStore) before anything uses it. Null = the store as opened.
  std::function<std::unique_ptr<Store>(std::unique_ptr<Store>)> wrap_store;
};

class ControllerServer {
 public:
  static absl::StatusOr<std::unique_ptr<ControllerServer>> Start(const ServerOptions& options,
                                                                 Clock& clock);
  ~ControllerServer();  // shuts down

  // The TCP port actually bound (0 if none).
  int port() const { return port_; }
  // The /metrics port actually bound (0 if none).
  int metrics_port() const { return metrics_ ? metrics_->port() : 0; }
  Controller& controller() { return *controller_; }
  // The exporter behind /metrics; null when options.metrics.listen was "".
  PrometheusExporter* metrics() { return metrics_.get(); }
  const AgentServiceImpl& agent_service() const { return *agent_service_; }
  std::shared_ptr<grpc::Channel> InProcessChannel();
  void Shutdown();

 private:
  ControllerServer() = default;
  // Pushes state counts and agents to the exporter and sweeps finished runs' series.
  void RefreshMetrics();

  std::unique_ptr<Store> store_;
  std::unique_ptr<PrometheusExporter> metrics_;  // before controller_: outlives it
  std::unique_ptr<Controller> controller_;
  std::unique_ptr<ControllerServiceImpl> cli_service_;
  std::unique_ptr<AgentServiceImpl> agent_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<LocalSocketListener> local_socket_;  // null without unix_socket
  int port_ = 0;
  int64_t tick_ms_ = 500;
  absl::Notification stop_;
  std::thread ticker_;
  bool shut_down_ = false;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_SERVER_H_
