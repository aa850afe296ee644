// How a client reaches the controller: the one rule the agent and the CLI share for
// choosing mutual TLS, a local Unix socket, or plain text (RELIABILITY promise 8: plain
// text beyond this host is never silent and never the default).
#ifndef BLKBENCH_COMMON_TLS_TRANSPORT_H_
#define BLKBENCH_COMMON_TLS_TRANSPORT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/security/credentials.h"

namespace blkbench::tls {

// The zero-setup local controller: the controller's default --socket, and the address
// the agent and the CLI dial when none is given.
inline constexpr char kDefaultControllerSocket[] = "/run/blkbench/controller.sock";
inline constexpr char kDefaultControllerAddress[] = "unix:/run/blkbench/controller.sock";

// True for 127.x.y.z, localhost and [::1] (host:port).
bool IsLoopbackAddress(const std::string& host_port);
// True for gRPC's unix:PATH, unix://PATH and unix-abstract:NAME targets.
bool IsUnixSocketAddress(const std::string& address);

struct ClientTransport {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // "mutual TLS", "Unix socket", "plain text (loopback)" or "plain text (--insecure)".
  std::string description;
  // Non-empty when the caller must tell its operator (once per start): plain text over
  // TCP. The daemons log it; the CLI prints it to stderr.
  std::string warning;
};

// The credentials to dial `address` with:
//   - a Unix socket: no TLS (the controller decides the caller's role from its peer
//     credentials, SO_PEERCRED);
//   - `tls_dir` given: mutual TLS with <tls_dir>/ca.pem and <tls_dir>/<cert_stem>.pem/.key
//     (errors name the missing file);
//   - loopback TCP without TLS: plain text, with a warning (any local user who holds the
//     port can pose as the controller);
//   - any other address without TLS: InvalidArgument naming `insecure_flag` (e.g.
//     "--insecure"), decided before anything is dialled; with `insecure`, plain text and
//     a warning.
absl::StatusOr<ClientTransport> ClientTransportFor(const std::string& address,
                                                   const std::string& tls_dir,
                                                   const std::string& cert_stem, bool insecure,
                                                   absl::string_view insecure_flag);

}  // namespace blkbench::tls

#endif  // BLKBENCH_COMMON_TLS_TRANSPORT_H_
