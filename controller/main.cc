// blkbench-controller: the controller daemon (gRPC on TCP and/or a Unix socket; a SQLite
// or PostgreSQL store), and `blkbench-controller migrate` from a SQLite store to PostgreSQL.
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "common/daemon_flags.h"
#include "common/man/daemon_man_page.h"
#include "common/tls/transport.h"
#include "controller/server.h"
#include "controller/store/store_factory.h"

ABSL_FLAG(std::string, listen, "",
          "TCP address to serve on (host:port; with --tls_dir, or --insecure), '' for none");
ABSL_FLAG(std::string, socket, blkbench::tls::kDefaultControllerSocket,
          "Unix socket path to serve on, '' for none: root, this daemon's user and the "
          "blkbench group are admin there, other local users read only (docs/security.md)");
ABSL_FLAG(std::string, tls_dir, "",
          "lab PKI directory (ca.pem, controller.pem, controller.key; `blkbench tls`): serve "
          "TCP with mutual TLS");
ABSL_FLAG(bool, insecure, false,
          "serve --listen without TLS: everyone who reaches it acts as admin (on loopback, "
          "every local user)");
ABSL_FLAG(std::string, db, "blkbench.db",
          "the store: a SQLite file (PATH or sqlite:PATH) or a PostgreSQL database "
          "(postgresql://user@host/dbname, any libpq URI; docs/deploy.md \"PostgreSQL\")");
ABSL_FLAG(bool, skip_db_check, false,
          "start without PRAGMA quick_check of a SQLite --db (it reads the whole file: seconds "
          "per GB cached, the disk's read speed cold; docs/reliability.md \"Store checks at "
          "open\"); whose file it is is checked either way");
ABSL_FLAG(int64_t, lease_ttl_ms, 30000, "re-queue a run whose agent is silent this long");
ABSL_FLAG(int64_t, heartbeat_ms, 5000, "agent heartbeat interval");
ABSL_FLAG(uint32_t, sample_interval_ms, 1000, "interval of live samples from agents");
ABSL_FLAG(uint32_t, max_attempts, 3, "lease losses before a run fails");
ABSL_FLAG(uint64_t, max_runs, 100000, "runs one experiment may have (cells x repeats)");
ABSL_FLAG(int64_t, commit_window_ms, 5,
          "group commit: agents' samples and results are committed (one fsync) in batches "
          "closed this long after their first report; 0 = one transaction per report");
ABSL_FLAG(uint32_t, commit_max_reports, 512, "group commit: a batch holds at most this many");
ABSL_FLAG(uint32_t, store_retry_ms, 1000,
          "after a failed store write, agents resend what was not stored after this long");
// Limits (docs/security.md "Limits"; defaults for a lab of ~1,000 agents).
ABSL_FLAG(int32_t, max_agent_streams, 2000,
          "concurrent agent streams; the one beyond gets RESOURCE_EXHAUSTED and backs off");
ABSL_FLAG(int32_t, max_watch_streams, 64, "concurrent `blkbench watch` streams");
ABSL_FLAG(int32_t, unary_threads, 64,
          "server threads kept for unary calls beyond the watch streams (max sync-server "
          "threads = max_watch_streams + unary_threads + 1; agent streams hold none)");
ABSL_FLAG(int32_t, agent_workers, 8, "threads handing agents' messages to the controller");
ABSL_FLAG(int32_t, agent_write_queue, 16384,
          "messages an agent stream may leave unread before the controller ends it");
ABSL_FLAG(int32_t, max_streams_per_connection, 16, "concurrent calls on one HTTP/2 connection");
ABSL_FLAG(int64_t, unary_deadline_ms, 30000,
          "a unary call ends DEADLINE_EXCEEDED after min(its own deadline, this)");
ABSL_FLAG(int64_t, max_connection_idle_ms, 300000, "close connections without calls after this");
ABSL_FLAG(int64_t, handshake_timeout_ms, 10000,
          "drop connections that have not finished TLS and HTTP/2 set-up by then");
ABSL_FLAG(double, agent_msg_rate, 4000,
          "messages per second one agent stream may send (a busy agent sends ~2,100 at worst)");
ABSL_FLAG(double, agent_msg_burst, 20000, "messages one agent stream may send at once");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9470",
          "Prometheus /metrics address (host:port), '' for none");
ABSL_FLAG(bool, metrics_tls, false,
          "serve /metrics, /sd/agents and /api/v1/* over HTTPS with --tls_dir's controller.pem");
ABSL_FLAG(bool, metrics_client_certs, false,
          "with --metrics_tls: require a client certificate from the lab CA (any role; "
          "revoked.txt honoured)");
ABSL_FLAG(std::string, metrics_token_file, "",
          "require `Authorization: Bearer <token>` on the HTTP endpoints, the token read from "
          "this file (mode 0600)");
ABSL_FLAG(int64_t, metrics_grace_ms, 300000,
          "keep a finished run's counters this long before dropping its series");
ABSL_FLAG(uint64_t, metrics_max_finished_runs, 1000,
          "keep the series of at most this many finished runs; past it the oldest go before "
          "their grace period ends");

namespace {

constexpr char kMigrateUsage[] =
    "usage: blkbench-controller migrate --from sqlite:FILE --to postgresql://…\n"
    "copies every experiment, run, sample, result and agent into an empty PostgreSQL "
    "database in one transaction (stop the controller first)\n";

// `blkbench-controller migrate --from X --to Y` (or --from=X --to=Y). Its own tiny parser,
// so the daemon's flags stay as they are.
int Migrate(int argc, char** argv) {
  std::string from, to;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    for (auto [name, out] : {std::pair{"--from", &from}, std::pair{"--to", &to}}) {
      const std::string prefix = std::string(name) + "=";
      if (arg == name && i + 1 < argc) {
        *out = argv[++i];
      } else if (arg.rfind(prefix, 0) == 0) {
        *out = arg.substr(prefix.size());
      }
    }
    if (arg == "--help" || arg == "-h") {
      fputs(kMigrateUsage, stdout);
      return 0;
    }
  }
  if (from.empty() || to.empty()) {
    fputs(kMigrateUsage, stderr);
    return 2;
  }
  auto summary = blkbench::MigrateStore(from, to);
  if (!summary.ok()) {
    fprintf(stderr, "blkbench-controller migrate: %s\n", summary.status().ToString().c_str());
    return 1;
  }
  fprintf(stderr,
          "blkbench-controller migrate: copied %zu experiments, %zu runs, %zu samples, %zu "
          "results and %zu agents from %s to %s\n",
          summary->experiments, summary->runs, summary->samples, summary->results, summary->agents,
          from.c_str(), blkbench::RedactedStoreName(to).c_str());
  return 0;
}

// blkbench-controller(8): the text around the flags (`blkbench-controller --man`).
blkbench::DaemonManInfo ManInfo() {
  return {
      .program = "blkbench-controller",
      .summary = "the blkbench controller daemon",
      .synopsis = {"blkbench-controller [--listen ADDR] [--socket PATH] [--db FILE|URI] "
                   "[--metrics_listen ADDR] [options]",
                   "blkbench-controller migrate --from sqlite:FILE --to postgresql://URI"},
      .description =
          {"The controller of blkbench, a block-layer benchmarking service: it keeps the "
           "experiments, their runs, samples and results in a store (a SQLite file or a "
           "PostgreSQL database), places runs on the agents (blkbench-agent(8)) that dial "
           "in, re-queues a run whose agent goes silent, and serves the blkbench(1) command "
           "line over gRPC: on TCP with mutual TLS (--tls_dir) and on a local Unix socket. "
           "Prometheus metrics, agent discovery (/sd/agents) and the results API are served "
           "over HTTP(S) on --metrics_listen.",
           "The packaged systemd unit blkbench-controller.service runs it on 0.0.0.0:7450 "
           "with the lab PKI in /etc/blkbench/tls and its database in /var/lib/blkbench; "
           "the package neither enables nor starts it.",
           "migrate copies a stopped controller's SQLite store into an empty PostgreSQL "
           "database in one transaction."},
      .files = {{"/etc/blkbench/tls/",
                 "the lab PKI (ca.pem, controller.pem, controller.key, "
                 "revoked.txt) and metrics.token"},
                {"/var/lib/blkbench/blkbench.db", "the SQLite store of the packaged unit"},
                {"/run/blkbench/controller.sock", "the local Unix socket (the default --socket)"},
                {"/usr/share/doc/blkbench/",
                 "the README; docs/deploy.md and docs/security.md "
                 "in the source tree"}},
      .see_also = {"blkbench(1)", "blkbench-agent(8)", "systemd.service(5)"},
  };
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "migrate") == 0) return Migrate(argc, argv);
  blkbench::InitDaemonFlags("blkbench-controller",
                            "blkbench-controller [--listen ADDR] [--socket PATH] [--db FILE|URI] "
                            "[--metrics_listen ADDR] [flags]\n"
                            "       blkbench-controller migrate --from sqlite:FILE --to "
                            "postgresql://…");
  absl::ParseCommandLine(argc, argv);
  if (blkbench::PrintManPageIfAsked(ManInfo())) return 0;
  blkbench::ServerOptions opts;
  opts.listen = absl::GetFlag(FLAGS_listen);
  opts.unix_socket = absl::GetFlag(FLAGS_socket);
  opts.db_path = absl::GetFlag(FLAGS_db);
  opts.skip_db_check = absl::GetFlag(FLAGS_skip_db_check);
  opts.tls_dir = absl::GetFlag(FLAGS_tls_dir);
  opts.insecure = absl::GetFlag(FLAGS_insecure);
  opts.controller.lease_ttl_ms = absl::GetFlag(FLAGS_lease_ttl_ms);
  opts.controller.heartbeat_interval_ms = absl::GetFlag(FLAGS_heartbeat_ms);
  opts.controller.sample_interval_ms = absl::GetFlag(FLAGS_sample_interval_ms);
  opts.controller.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  opts.controller.max_runs_per_experiment = absl::GetFlag(FLAGS_max_runs);
  opts.controller.store_retry_ms = absl::GetFlag(FLAGS_store_retry_ms);
  opts.controller.commit_window_ms = absl::GetFlag(FLAGS_commit_window_ms);
  opts.controller.commit_max_reports = absl::GetFlag(FLAGS_commit_max_reports);
  opts.limits.max_agent_streams = absl::GetFlag(FLAGS_max_agent_streams);
  opts.limits.max_watch_streams = absl::GetFlag(FLAGS_max_watch_streams);
  opts.limits.unary_threads = absl::GetFlag(FLAGS_unary_threads);
  opts.limits.agent_workers = absl::GetFlag(FLAGS_agent_workers);
  opts.limits.agent_write_queue = absl::GetFlag(FLAGS_agent_write_queue);
  opts.limits.max_streams_per_connection = absl::GetFlag(FLAGS_max_streams_per_connection);
  opts.limits.unary_deadline_ms = absl::GetFlag(FLAGS_unary_deadline_ms);
  opts.limits.max_connection_idle_ms = absl::GetFlag(FLAGS_max_connection_idle_ms);
  opts.limits.handshake_timeout_ms = absl::GetFlag(FLAGS_handshake_timeout_ms);
  opts.limits.agent_messages_per_s = absl::GetFlag(FLAGS_agent_msg_rate);
  opts.limits.agent_message_burst = absl::GetFlag(FLAGS_agent_msg_burst);
  opts.metrics.listen = absl::GetFlag(FLAGS_metrics_listen);
  opts.metrics.finished_grace_ms = absl::GetFlag(FLAGS_metrics_grace_ms);
  opts.metrics.max_finished_runs = absl::GetFlag(FLAGS_metrics_max_finished_runs);
  // One deny list for gRPC and HTTPS: a revoked agent is refused by both at once.
  if (!opts.tls_dir.empty()) {
    auto revoked = blkbench::tls::RevocationList::Load(
        absl::StrCat(opts.tls_dir, "/", blkbench::tls::kRevokedFile));
    if (!revoked.ok()) {
      fprintf(stderr, "blkbench-controller: %s\n", std::string(revoked.status().message()).c_str());
      return 2;
    }
    opts.revoked = std::move(*revoked);
  }
  auto http_security = blkbench::HttpSecurityFromFlags({
      .listen = opts.metrics.listen,
      .tls_dir = opts.tls_dir,
      .stem = "controller",
      .tls = absl::GetFlag(FLAGS_metrics_tls),
      .client_certs = absl::GetFlag(FLAGS_metrics_client_certs),
      .token_file = absl::GetFlag(FLAGS_metrics_token_file),
      .insecure = opts.insecure,
      .revoked = opts.revoked,
  });
  if (!http_security.ok()) {
    fprintf(stderr, "blkbench-controller: --metrics_listen: %s\n",
            std::string(http_security.status().message()).c_str());
    return 2;
  }
  opts.metrics.security = std::move(*http_security);

  // Block SIGINT/SIGTERM in every thread; main waits for them with sigwait.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  blkbench::SystemClock clock;
  auto server = blkbench::ControllerServer::Start(opts, clock);
  if (!server.ok()) {
    fprintf(stderr, "blkbench-controller: %s\n", server.status().ToString().c_str());
    return 1;
  }
  fprintf(stderr, "blkbench-controller: serving on %s%s%s%s (db %s)\n",
          opts.listen.empty() ? "" : ("port " + std::to_string((*server)->port())).c_str(),
          opts.listen.empty() ? "" : (opts.tls_dir.empty() ? " without TLS" : " with mutual TLS"),
          opts.unix_socket.empty() ? "" : " unix:", opts.unix_socket.c_str(),
          blkbench::RedactedStoreName(opts.db_path).c_str());
  if (!opts.unix_socket.empty()) {
    fprintf(stderr,
            "blkbench-controller: on unix:%s root, this daemon's user and the %s group are "
            "admin; other local users may only read\n",
            opts.unix_socket.c_str(), blkbench::kLocalAdminGroup);
  }
  if (!opts.listen.empty() && opts.tls_dir.empty() && opts.insecure) {
    fprintf(
        stderr,
        "blkbench-controller: WARNING: --insecure: %s is served without TLS or "
        "authentication; %s acts as admin\n",
        opts.listen.c_str(),
        blkbench::IsLoopbackAddress(opts.listen) ? "every local user" : "anyone who can reach it");
  }
  if ((*server)->metrics_port() != 0) {
    fprintf(stderr, "blkbench-controller: metrics on %s (port %d)/metrics as %s\n",
            opts.metrics.listen.c_str(), (*server)->metrics_port(),
            opts.metrics.security.Describe().c_str());
    if (!blkbench::IsLoopbackAddress(opts.metrics.listen) &&
        !(opts.metrics.security.tls() && opts.metrics.security.authenticates())) {
      fprintf(stderr,
              "blkbench-controller: WARNING: --insecure: %s serves metrics, agents and results "
              "to anyone who can reach it\n",
              opts.metrics.listen.c_str());
    }
  }
  int sig = 0;
  sigwait(&sigs, &sig);
  fprintf(stderr, "blkbench-controller: shutting down\n");
  (*server)->Shutdown();
  return 0;
}
