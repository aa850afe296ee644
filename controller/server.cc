// ControllerServer: assembles store, controller, gRPC services and the ticker.
#include "controller/server.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/metrics/free_memory.h"
#include "common/tls/credentials.h"
#include "controller/metrics/grpc_metrics.h"
#include "controller/metrics/instrumented_store.h"
#include "controller/metrics/state_counts.h"
#include "controller/request_checks.h"
#include "controller/results_api.h"
#include "controller/store/store_factory.h"
#include "grpcpp/resource_quota.h"

namespace blkbench {

// Explicit message limits (RELIABILITY 10): larger requests get RESOURCE_EXHAUSTED. A
// request is at most a 4 MiB matrix (workloads/matrix.cc) or an agent's result; replies
// (results with samples) may be larger.
constexpr int kMaxReceiveBytes = 8 << 20;
constexpr int kMaxSendBytes = 64 << 20;

absl::StatusOr<std::unique_ptr<ControllerServer>> ControllerServer::Start(
    const ServerOptions& options, Clock& clock) {
  if (options.db_path.empty()) return absl::InvalidArgumentError("controller: --db is required");
  if (options.listen.empty() && options.unix_socket.empty() && !options.in_process_only) {
    return absl::InvalidArgumentError("controller: give --listen or --socket");
  }
  std::shared_ptr<grpc::ServerCredentials> tcp_credentials = grpc::InsecureServerCredentials();
  if (!options.tls_dir.empty()) {
    auto creds = tls::ServerCredentialsFromDir(options.tls_dir, options.revoked);
    if (!creds.ok()) return creds.status();
    tcp_credentials = *creds;
  } else if (!options.listen.empty() && !options.insecure) {
    return absl::InvalidArgumentError(absl::StrCat(
        "controller: refusing to serve ", options.listen, " without TLS: ",
        IsLoopbackAddress(options.listen) ? "every local user" : "anyone who can reach it",
        " could act as admin, register agents and forge results. Give --tls_dir (a lab PKI, "
        "see docs/security.md), serve only the Unix socket (--socket, the default; local "
        "users' roles from their uid), or --insecure"));
  }
  if (absl::Status st = CheckLimits(options.limits); !st.ok()) return st;
  std::unique_ptr<ControllerServer> s(new ControllerServer());
  OpenStoreOptions store_options;
  store_options.check_integrity = !options.skip_db_check;
  auto store = OpenStore(options.db_path, store_options);
  if (!store.ok()) return store.status();
  s->store_ = std::move(*store);
  if (options.wrap_store) s->store_ = options.wrap_store(std::move(s->store_));
  if (!options.metrics.listen.empty()) {
    ExporterOptions metrics_options = options.metrics;
    metrics_options.grpc_transport =
        !options.tls_dir.empty() ? "mutual_tls"
                                 : (options.listen.empty() ? "plaintext" : "plaintext_insecure");
    auto metrics = PrometheusExporter::Start(metrics_options, clock);
    if (!metrics.ok()) return metrics.status();
    s->metrics_ = std::move(*metrics);
    // Every store call timed.
    s->store_ = std::make_unique<InstrumentedStore>(std::move(s->store_), s->metrics_->service());
  }
  s->controller_ =
      std::make_unique<Controller>(*s->store_, clock, options.controller, s->metrics_.get());
  if (s->metrics_) {
    // Stored results served to Grafana as JSON, read through the Controller.
    Controller* c = s->controller_.get();
    s->metrics_->AddHandler("/api/v1/experiments",
                            [c](const HttpRequest& req) { return ExperimentsJson(*c, req); });
    s->metrics_->AddHandler("/api/v1/results",
                            [c](const HttpRequest& req) { return ResultsJson(*c, req); });
  }
  if (absl::Status st = s->controller_->Start(); !st.ok()) return st;
  ServiceMetrics* service_metrics = s->metrics_ ? &s->metrics_->service() : nullptr;
  const ServiceLimits& limits = options.limits;
  s->cli_service_ =
      std::make_unique<ControllerServiceImpl>(*s->controller_, clock, limits, service_metrics);
  s->agent_service_ =
      std::make_unique<AgentServiceImpl>(*s->controller_, clock, limits, service_metrics);

  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  builder.SetMaxSendMessageSize(kMaxSendBytes);
  // Threads: ControllerService is on the sync API, a thread per running call, capped so
  // that watches, within their own cap, always leave unary_threads free (limits.h
  // MaxServerThreads). AgentService is on the callback API: its streams hold no thread;
  // gRPC's callback threads start their reads and writes and the service's
  // limits.agent_workers threads hand their messages to the Controller.
  grpc::ResourceQuota quota("blkbench-controller");
  quota.SetMaxThreads(MaxServerThreads(limits));
  builder.SetResourceQuota(quota);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, limits.max_streams_per_connection);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             static_cast<int>(limits.max_connection_idle_ms));
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             static_cast<int>(limits.handshake_timeout_ms));
  // Notice dead agents' streams without waiting for TCP timeouts. Agents ping every 10 s
  // (agent.cc TcpChannelFactory, with their stream open); the server accepts pings 1 s
  // apart, so a healthy agent never collects a ping strike. Strikes stay unlimited (0):
  // a client's BDP pings during a large reply must not cost it a GOAWAY.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1'000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  if (!options.listen.empty()) {
    builder.AddListeningPort(options.listen, tcp_credentials, &s->port_);
  }
  if (!options.unix_socket.empty()) {
    auto local = LocalSocketListener::Bind(options.unix_socket, builder);
    if (!local.ok()) return local.status();
    s->local_socket_ = std::move(*local);
  }
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(NewRequestChecksInterceptorFactory(MaxServerThreads(limits)));
  if (s->metrics_) creators.push_back(NewGrpcMetricsInterceptorFactory(s->metrics_->service()));
  builder.experimental().SetInterceptorCreators(std::move(creators));
  builder.RegisterService(s->cli_service_.get());
  builder.RegisterService(s->agent_service_.get());
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || (!options.listen.empty() && s->port_ == 0)) {
    return absl::UnavailableError(absl::StrCat("controller: cannot listen on '", options.listen,
                                               "' / '", options.unix_socket,
                                               "' (address in use or not permitted?)"));
  }
  if (s->local_socket_) s->local_socket_->Start();
  s->tick_ms_ = options.tick_ms;
  ControllerServer* raw = s.get();
  if (raw->metrics_) raw->RefreshMetrics();  // the first scrape already has data
  s->ticker_ = std::thread([raw, &clock, refresh_ms = options.metrics_refresh_ms] {
    int64_t next_refresh = clock.MonotonicMs() + refresh_ms;
    while (!raw->stop_.WaitForNotificationWithTimeout(absl::Milliseconds(raw->tick_ms_))) {
      raw->controller_->Tick();
      if (raw->metrics_ && clock.MonotonicMs() >= next_refresh) {
        raw->RefreshMetrics();
        next_refresh = clock.MonotonicMs() + refresh_ms;
      }
    }
  });
  return s;
}

ControllerServer::~ControllerServer() {
  Shutdown();
  // The results API handlers use controller_, which is destroyed before metrics_ (the
  // Controller's observer); no request may be in flight by then.
  if (metrics_) metrics_->StopServing();
}

void ControllerServer::RefreshMetrics() {
  auto counts = CountStates(*store_);
  if (counts.ok()) metrics_->OnStateCounts(*counts);
  auto agents = controller_->ListAgents();
  if (agents.ok()) metrics_->OnAgentsChanged(*agents);
  metrics_->Sweep();
  // What the sweep and the scrapes since the last refresh freed goes back to the kernel.
  ReturnFreeMemoryToSystem();
}

std::shared_ptr<grpc::Channel> ControllerServer::InProcessChannel() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxSendBytes);  // what the server may send
  return server_->InProcessChannel(args);
}

void ControllerServer::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  stop_.Notify();
  if (ticker_.joinable()) ticker_.join();
  if (local_socket_) local_socket_->Stop();  // no new local connections
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

}  // namespace blkbench
