// gRPC credentials from a lab PKI directory (common/tls/pki.h) and the identity of an
// authenticated peer. Servers require and verify client certificates
// (GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY); clients verify the
// controller against the lab CA.
#ifndef BLKBENCH_COMMON_TLS_CREDENTIALS_H_
#define BLKBENCH_COMMON_TLS_CREDENTIALS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/tls/pki.h"
#include "common/tls/revocation.h"
#include "grpcpp/security/auth_context.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace blkbench::tls {

// The transport security type of connections on the controller's Unix socket from users
// who are not admin there (controller/local_socket.h): their connections are handed to
// gRPC with local credentials, admins' with insecure ones, so a caller cannot choose.
inline constexpr char kLocalReadTransport[] = "local";
// What a local user who may only read is told.
inline constexpr char kLocalAdminHint[] =
    "on the controller's Unix socket root, the controller's own user and members of the "
    "blkbench group are admin, other local users read only; docs/security.md";

// Who is calling. `local` callers came without TLS: on the Unix socket their role is what
// their user is there (admin, or read for kLocalReadTransport); on a TCP listener
// started with --insecure, admin. Everyone else is what their certificate says.
struct Identity {
  Kind kind = Kind::kCli;
  std::string name;
  Role role = Role::kNone;
  bool local = false;

  // Whether this caller may do what needs `need` (read < submit < admin). Agents and
  // the controller hold no client role.
  bool Allows(Role need) const;
  // "agent a1", "cli alice (submit)", "local", "local user (read)".
  std::string Describe() const;
};

// The identity in a certificate (PEM): CN and OU as written by CreateCert.
// PermissionDenied if the subject is not one of ours.
absl::StatusOr<Identity> IdentityFromCertPem(const std::string& pem);

// The caller of an RPC: its verified client certificate over TLS, else local (read-only
// for kLocalReadTransport, else admin).
absl::StatusOr<Identity> CallerIdentity(const grpc::AuthContext& ctx);

// <dir>/ca.pem, <dir>/controller.pem and .key as server credentials that require and
// verify a client certificate from the lab CA and refuse every call whose certificate is
// on `revoked` (null: <dir>/revoked.txt, loaded here). Errors name the missing file or
// the bad line of the deny list.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFromDir(
    const std::string& dir, std::shared_ptr<RevocationList> revoked = nullptr);

// <dir>/ca.pem and <dir>/<stem>.pem and .key as client credentials (the controller is
// verified against ca.pem). Errors name the missing file.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFromDir(
    const std::string& dir, const std::string& stem);

}  // namespace blkbench::tls

#endif  // BLKBENCH_COMMON_TLS_CREDENTIALS_H_
