// The `blkbench` command line: the command table (validate, submit, list, show, watch,
// results, cancel, agents, gate, history, gate-proof, sim, completion, man, help) and
// RunCli, the whole program, callable in-process by tests.
#ifndef BLKBENCH_CLI_CLI_H_
#define BLKBENCH_CLI_CLI_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "common/tls/transport.h"
#include "grpcpp/grpcpp.h"

namespace blkbench {

// The local controller's Unix socket (its default --socket).
constexpr const char* kDefaultController = tls::kDefaultControllerAddress;
inline constexpr int kExitUnreachable = 3;

// Exit codes: 0 ok, 1 the command failed (bad input, experiment failed), 2 usage,
// 3 controller unreachable, 4 controller up but its store unavailable
// (kExitStoreUnavailable); `gate` has its own (gate_cmd.h).
// `channel` may be given by tests; otherwise --controller / $BLKBENCH_CONTROLLER /
// kDefaultController is dialled.
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
           std::shared_ptr<grpc::Channel> channel = nullptr);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_CLI_H_
