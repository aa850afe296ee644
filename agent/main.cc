// blkbench-agent: the agent daemon. Restores anything a crashed run left changed, then
// connects to the controller and serves runs on its allowlisted devices.
#include <pthread.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "agent/agent.h"
#include "agent/runners.h"

ABSL_FLAG(std::string, config, "/etc/blkbench/agent.yaml", "agent config file (YAML)");
ABSL_FLAG(std::string, controller, "", "override the config's controller address");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("blkbench-agent --config agent.yaml");
  absl::ParseCommandLine(argc, argv);
  auto config = blkbench::LoadAgentConfig(absl::GetFlag(FLAGS_config));
  if (!config.ok()) {
    fprintf(stderr, "blkbench-agent: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  if (!absl::GetFlag(FLAGS_controller).empty())
    config->controller = absl::GetFlag(FLAGS_controller);
  mkdir(config->state_dir.c_str(), 0700);
  auto journal = blkbench::QueueSettingsJournal::Open(config->state_dir);
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

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  blkbench::SystemClock clock;
  blkbench::RunExecutor executor(*config, **journal, blkbench::DefaultRunnerFactory());
  blkbench::Agent agent(*config, executor, clock, blkbench::TcpChannelFactory(config->controller));
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
