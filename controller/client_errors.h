// What the controller's gRPC statuses tell a client beyond their code, so the CLI can
// say which part is down.
#ifndef BLKBENCH_CONTROLLER_CLIENT_ERRORS_H_
#define BLKBENCH_CONTROLLER_CLIENT_ERRORS_H_

namespace blkbench {

// Starts the message of every UNAVAILABLE the controller itself answers: its store (SQLite
// busy past busy_timeout, PostgreSQL down) failed, the controller is up and retries. gRPC
// answers UNAVAILABLE without it when there is no connection to the controller at all.
// The code stays UNAVAILABLE because the condition is transient and a retry is right.
inline constexpr char kStoreUnavailablePrefix[] = "store unavailable: ";

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_CLIENT_ERRORS_H_
