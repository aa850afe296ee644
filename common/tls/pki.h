// The lab PKI: one CA and the certificates blkbench's parties use for mutual TLS — the
// controller, each agent, each CLI user with a role — written to one directory, after
// Nomad's and Consul's `tls ca create` / `tls cert create`.
//
// Identity lives in the subject: CN is the name, OU the kind (and a CLI user's role):
//   controller  CN=<name>  OU=blkbench-controller   SAN DNS/IP: localhost, 127.0.0.1, extra
//   agent       CN=<id>    OU=blkbench-agent        SAN as the controller's if given names
//   CLI user    CN=<name>  OU=blkbench-cli-<read|submit|admin>
// Keys are ECDSA P-256, certificates X.509 v3 signed with SHA-256, serials 128 random
// bits; private keys are written 0600, never overwritten.
#ifndef BLKBENCH_COMMON_TLS_PKI_H_
#define BLKBENCH_COMMON_TLS_PKI_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blkbench::tls {

enum class Kind { kController, kAgent, kCli };
enum class Role { kNone, kRead, kSubmit, kAdmin };

// "read" / "submit" / "admin" (kNone: "").
const char* RoleName(Role role);
// InvalidArgument naming the accepted values.
absl::StatusOr<Role> ParseRole(absl::string_view name);

// A name usable as a CN and a file name: 1-64 of [A-Za-z0-9._-], not starting with '.'.
absl::Status CheckName(absl::string_view what, absl::string_view name);

// Writes <dir>/ca.pem and <dir>/ca.key (0600), creating `dir` (0700) if needed.
// AlreadyExists if ca.key is there (a CA is never replaced by accident).
absl::Status CreateCa(const std::string& dir, int days = 3650);

struct CertRequest {
  Kind kind = Kind::kAgent;
  std::string name;         // agent id, CLI user or controller name
  Role role = Role::kNone;  // CLI users only (required there)
  // Extra DNS names / IP addresses the certificate serves (with localhost and 127.0.0.1):
  // always for the controller; an agent with names may also serve HTTPS /metrics.
  std::vector<std::string> dns_names;
  int days = 825;
};

// The whole of a (small) file: a PEM certificate or key. FailedPrecondition naming
// `what` and the path when it cannot be read.
absl::StatusOr<std::string> ReadPemFile(const std::string& path, absl::string_view what);

// The file stem of a certificate: "controller", "agent-<id>", "cli-<name>".
std::string CertStem(Kind kind, const std::string& name);

// Signs a new key pair's certificate with <dir>/ca.key and writes <stem>.pem and
// <stem>.key (0600). Returns the stem. InvalidArgument for a bad name or role,
// FailedPrecondition without a CA in `dir`, AlreadyExists if the key exists.
absl::StatusOr<std::string> CreateCert(const std::string& dir, const CertRequest& req);

// Writes <dir>/metrics.token (0640): 32 random bytes in hex, the bearer token of the
// daemons' HTTPS endpoints. Returns its path. AlreadyExists if there is one.
absl::StatusOr<std::string> CreateToken(const std::string& dir);

}  // namespace blkbench::tls

#endif  // BLKBENCH_COMMON_TLS_PKI_H_
