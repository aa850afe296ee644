// `blkbench tls`: the lab PKI for mutual TLS (common/tls/pki.h) from the command line —
//   blkbench tls ca create   --dir D
//   blkbench tls cert create --dir D --server [--dns host,...]
//   blkbench tls cert create --dir D --agent ID
//   blkbench tls cert create --dir D --cli NAME --role read|submit|admin
// and the client credentials the CLI dials with (--tls_dir / $BLKBENCH_TLS_DIR).
#ifndef BLKBENCH_CLI_TLS_CMD_H_
#define BLKBENCH_CLI_TLS_CMD_H_

#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "cli/cli_common.h"
#include "common/tls/transport.h"
#include "grpcpp/security/credentials.h"

namespace blkbench {

// Checks the arguments without writing anything; 0 or 2 (after printing why).
int CheckTlsArgs(const Args& a, std::ostream& err);
int CmdTls(const Args& a, Client*, std::ostream& out, std::ostream& err);

// How the CLI dials `address` (tls::ClientTransportFor): with --tls_dir or
// $BLKBENCH_TLS_DIR, the CA and the client certificate --tls_cert NAME (cli-NAME.pem),
// or the only cli-*.pem in the directory; without, plain text only to a Unix socket,
// loopback, or with --insecure. Errors say what is missing, or name --insecure.
absl::StatusOr<tls::ClientTransport> CliTransport(const Args& a, const std::string& address);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_TLS_CMD_H_
