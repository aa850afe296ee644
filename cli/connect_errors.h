// The CLI's messages for a call that did not get an answer from the controller: nothing
// listening, a Unix socket the user may not use, or a controller whose store is down.
#ifndef BLKBENCH_CLI_CONNECT_ERRORS_H_
#define BLKBENCH_CLI_CONNECT_ERRORS_H_

#include <string>

#include "grpcpp/grpcpp.h"

namespace blkbench {

// Exit code when the controller answered but its store is unavailable (cli.h lists the
// others; 3 is "controller unreachable").
inline constexpr int kExitStoreUnavailable = 4;

// Why `address` (host:port, unix:PATH or unix:///PATH) could not be reached, as one or two
// lines for stderr: for a Unix socket, whether it exists and whether this user may
// connect (write permission on the socket, search on its directories: EACCES otherwise);
// then `detail` (gRPC's, may be empty) and the hint to start the controller or set
// --controller.
std::string UnreachableMessage(const std::string& address, const std::string& detail);

// True if `s` is the controller's answer that its store failed (client_errors.h).
bool IsStoreUnavailable(const grpc::Status& s);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_CONNECT_ERRORS_H_
