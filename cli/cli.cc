// The `blkbench` command line: parse against the command table (command_registry.h),
// check, then run the command with a controller, a --db store or neither; see cli.h.
#include "cli/cli.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <utility>

#include "cli/cli_common.h"
#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/tls_cmd.h"
#include "common/build_info.h"
#include "common/clock.h"
#include "controller/server.h"
#include "controller/store/store_factory.h"

namespace blkbench {

int RunCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err,
           std::shared_ptr<grpc::Channel> channel) {
  const std::vector<CommandSpec>& commands = Commands();
  absl::StatusOr<Args> parsed = ParseCommandLine(argv, commands);
  if (!parsed.ok()) {
    err << parsed.status().message() << "\n";
    // A usage error of a command keeps its own code (the gate's "could not run").
    for (const std::string& s : argv) {
      if (const CommandSpec* c = FindCommand(commands, s)) return c->usage_exit;
    }
    return 2;
  }
  Args& a = *parsed;  // a command's check may load its input into it
  if (a.flags.count("version")) {
    out << VersionLine("blkbench") << "\n";
    return 0;
  }
  const CommandSpec* cmd = FindCommand(commands, a.positional[0]);
  if (cmd == nullptr) {
    (a.flags.count("help") ? out : err) << GlobalUsage(commands);
    return a.flags.count("help") ? 0 : 2;
  }
  if (a.flags.count("help")) {
    out << CommandUsage(*cmd);
    return 0;
  }
  // Check everything that needs no controller first: bad input never dials.
  if (cmd->check) {
    if (int rc = cmd->check(a, err); rc != 0) return rc;
  }
  if (!cmd->needs_controller) return cmd->run(a, nullptr, out, err);

  // --db: the controller's own services over a local store, in this process, so every
  // command reads it exactly as it reads a controller.
  SystemClock clock;
  std::unique_ptr<ControllerServer> local;
  if (auto db = a.flags.find("db"); db != a.flags.end()) {
    // Nothing runs behind a local store: no agent would ever take new runs.
    for (const char* flag : {"submit", "auto-repeat"}) {
      if (a.flags.count(flag)) {
        err << "blkbench " << cmd->name << ": --" << flag
            << " needs a controller with agents; with --db, gate what blkbench run or sim "
               "stored\n";
        return cmd->usage_exit;
      }
    }
    struct stat st;
    if (!IsPostgresUri(db->second) && stat(db->second.c_str(), &st) != 0) {
      err << "blkbench " << cmd->name << ": no store at '" << db->second
          << "' (blkbench run and blkbench sim --db FILE write one)\n";
      return 1;
    }
    ServerOptions server;
    server.listen = "";
    server.in_process_only = true;
    server.db_path = db->second;
    // quick_check reads the whole file, on every command here; a damaged page still fails
    // the command that reads it. The controller and `run`/`sim --db` check at open.
    server.skip_db_check = true;
    // The file may be a live controller's: a reader must never expire the leases of runs
    // that controller's agents are running, however long the command takes.
    server.controller.lease_ttl_ms = int64_t{365} * 24 * 3600 * 1000;
    auto started = ControllerServer::Start(server, clock);
    if (!started.ok()) {
      err << "blkbench " << cmd->name << ": " << started.status().message() << "\n";
      return 1;
    }
    local = std::move(*started);
    Client c(local->InProcessChannel(), RedactedStoreName(db->second), err);
    return cmd->run(a, &c, out, err);
  }

  std::string address = a.controller;
  if (address.empty() && getenv("BLKBENCH_CONTROLLER")) address = getenv("BLKBENCH_CONTROLLER");
  if (address.empty()) address = kDefaultController;
  if (!channel) {
    auto transport = CliTransport(a, address);
    if (!transport.ok()) {
      err << "blkbench: " << transport.status().message() << "\n";
      return kExitUnreachable;
    }
    if (!transport->warning.empty()) err << "blkbench: " << transport->warning << "\n";
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    channel = grpc::CreateCustomChannel(address, transport->credentials, args);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(3))) {
      err << "blkbench: " << UnreachableMessage(address, "") << "\n";
      return kExitUnreachable;
    }
  }
  Client c(channel, address, err);
  return cmd->run(a, &c, out, err);
}

}  // namespace blkbench
