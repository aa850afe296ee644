// blkbench-agent: the agent daemon. Restores anything a crashed run left changed, then
// connects to the controller and serves runs on its allowlisted devices.
#include <pthread.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "agent/agent.h"
#include "agent/device/null_blk.h"
#include "agent/metrics/agent_exporter.h"
#include "agent/runners.h"
#include "common/daemon_flags.h"
#include "common/log/log.h"
#include "common/man/daemon_man_page.h"
#include "common/tls/pki.h"

ABSL_FLAG(std::string, config, "/etc/blkbench/agent.yaml", "agent config file (YAML)");
ABSL_FLAG(std::string, controller, "", "override the config's controller address");
ABSL_FLAG(bool, insecure, false,
          "as `insecure: true` in the config: dial a controller on another host in plain "
          "text (loudly)");
ABSL_FLAG(std::optional<std::string>, metrics_listen, std::nullopt,
          "override the config's metrics_listen (Prometheus /metrics host:port, '' for none)");

namespace {

// blkbench-agent(8): the text around the flags (`blkbench-agent --man`).
blkbench::DaemonManInfo ManInfo() {
  return {
      .program = "blkbench-agent",
      .summary = "the blkbench agent daemon, runs benchmarks on this machine's devices",
      .synopsis = {"blkbench-agent [--config FILE] [--controller ADDR] [options]"},
      .description =
          {"The agent of blkbench, a block-layer benchmarking service. It dials the "
           "controller (blkbench-controller(8)), offers the devices its configuration "
           "allowlists (and simulated sim: devices, and VM test hosts' devices), and runs the "
           "benchmark runs placed on them: it sets the queue settings a run asks for, runs "
           "the I/O, streams samples and the result, and restores every setting afterwards. "
           "Only allowlisted devices are ever touched; one that is mounted, has holders, is "
           "swap, carries a signature or is no longer the device recorded at registration "
           "is refused. After a crash it restores what a run left changed before it "
           "connects again.",
           "Its configuration is a YAML file (--config); the package installs "
           "/etc/blkbench/agent.yaml with every setting commented out, and "
           "/usr/share/blkbench/config/agent.example.yaml explains each one. The packaged "
           "systemd unit blkbench-agent.service runs it as root with a bounded capability "
           "set; the package neither enables nor starts it."},
      .files = {{"/etc/blkbench/agent.yaml", "the configuration (a conffile of the package)"},
                {"/etc/blkbench/tls/", "the lab PKI: ca.pem and this agent's certificate and key"},
                {"/var/lib/blkbench-agent/", "the journal of original queue settings"},
                {"/usr/share/blkbench/profiles/", "machine profiles of the simulated devices"}},
      .see_also = {"blkbench(1)", "blkbench-controller(8)", "wipefs(8)"},
  };
}

}  // namespace

int main(int argc, char** argv) {
  blkbench::InitDaemonFlags("blkbench-agent", "blkbench-agent --config agent.yaml [flags]");
  absl::ParseCommandLine(argc, argv);
  if (blkbench::PrintManPageIfAsked(ManInfo())) return 0;
  auto config = blkbench::LoadAgentConfig(absl::GetFlag(FLAGS_config));
  if (!config.ok()) {
    fprintf(stderr, "blkbench-agent: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  for (const std::string& warning : config->warnings) {
    blkbench::LogEvent(blkbench::LogLevel::kWarning, "agent", "allowlist_kernel_name")
        .Field("warning", warning);
  }
  if (!absl::GetFlag(FLAGS_controller).empty())
    config->controller = absl::GetFlag(FLAGS_controller);
  if (absl::GetFlag(FLAGS_insecure)) config->insecure = true;
  if (absl::GetFlag(FLAGS_metrics_listen).has_value()) {
    config->metrics_listen = *absl::GetFlag(FLAGS_metrics_listen);
  }
  if (!config->sim_devices.empty()) {
    if (absl::Status sim = blkbench::CheckSimulatedDevicesRunnable(); !sim.ok()) {
      fprintf(stderr, "blkbench-agent: not offering simulated devices (%zu): %s\n",
              config->sim_devices.size(), std::string(sim.message()).c_str());
      config->sim_devices.clear();
    }
  }
  mkdir(config->state_dir.c_str(), 0700);
  // The runs' null_blk items may live in a configfs mounted outside /sys.
  std::vector<std::string> extra_roots;
  if (config->null_blk.enabled) extra_roots.push_back(config->null_blk.configfs);
  auto journal = blkbench::QueueSettingsJournal::Open(config->state_dir, blkbench::SystemPaths(),
                                                      std::move(extra_roots));
  if (!journal.ok()) {
    fprintf(stderr, "blkbench-agent: state dir: %s\n", journal.status().ToString().c_str());
    return 1;
  }
  // A previous agent may have died mid-run: put the host back as it was found.
  if (auto recovered = (*journal)->RecoverAll(); !recovered.ok()) {
    fprintf(stderr, "blkbench-agent: restoring settings left by a crashed run: %s\n",
            recovered.status().ToString().c_str());
    return 1;
  }
  // null_blk is offered while <configfs>/nullb exists: load the module if allowed to.
  if (config->null_blk.enabled && config->null_blk.load_module) {
    struct stat st;
    if (stat((config->null_blk.configfs + "/nullb").c_str(), &st) != 0) {
      if (absl::Status loaded = blkbench::LoadNullBlkModule(); !loaded.ok()) {
        blkbench::LogEvent(blkbench::LogLevel::kWarning, "agent", "null_blk_not_loaded")
            .Field("error", std::string(loaded.message()));
      }
    }
  }

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  blkbench::SystemClock clock;
  // Metrics are secondary to running benchmarks: a taken port is a loud warning, not a
  // refusal to serve (the agent then reports no metrics address and is not discovered).
  blkbench::AgentExporterOptions metrics{
      .listen = config->metrics_listen,
      .finished_grace_ms = config->metrics_grace_ms,
      .max_finished_runs = static_cast<size_t>(config->metrics_max_finished_runs)};
  auto security = blkbench::HttpSecurityFromFlags({
      .listen = config->metrics_listen,
      .tls_dir = config->tls_dir,
      .stem = blkbench::tls::CertStem(blkbench::tls::Kind::kAgent, config->agent_id),
      .tls = config->metrics_tls,
      .client_certs = config->metrics_client_certs,
      .token_file = config->metrics_token_file,
      .insecure = config->metrics_insecure,
      .revoked = nullptr,
  });
  if (!security.ok()) {  // a configuration error, unlike a port taken for a moment
    fprintf(stderr, "blkbench-agent: metrics_listen: %s\n",
            std::string(security.status().message()).c_str());
    return 2;
  }
  auto exporter = blkbench::AgentExporter::Start(metrics, clock, *security);
  if (!exporter.ok()) {
    fprintf(stderr, "blkbench-agent: WARNING: %s; running without /metrics\n",
            exporter.status().ToString().c_str());
    metrics.listen = "";
    exporter = blkbench::AgentExporter::Start(metrics, clock, *security);
    if (!exporter.ok()) return 1;
  }
  // Report the port actually bound (metrics_listen may say port 0).
  config->metrics_listen = (*exporter)->address();
  if (!config->metrics_listen.empty()) {
    fprintf(stderr, "blkbench-agent: metrics on %s/metrics as %s\n", config->metrics_listen.c_str(),
            security->Describe().c_str());
  }
  auto channels = blkbench::ChannelFactoryFor(*config);
  if (!channels.ok()) {
    fprintf(stderr, "blkbench-agent: %s\n", std::string(channels.status().message()).c_str());
    return 2;
  }
  blkbench::RunExecutor executor(*config, **journal, blkbench::DefaultRunnerFactory());
  blkbench::Agent agent(*config, executor, clock, *channels, exporter->get());
  fprintf(stderr, "blkbench-agent: %s connecting to %s with %zu allowlisted device(s)\n",
          config->agent_id.c_str(), config->controller.c_str(), config->devices.size());
  std::thread serve([&agent] { agent.Run(); });
  int sig = 0;
  sigwait(&sigs, &sig);
  fprintf(stderr, "blkbench-agent: stopping (runs canceled, host restored)\n");
  agent.Stop();
  serve.join();
  return 0;
}
