// gRPC TLS credentials and peer identities; see credentials.h.
#include "common/tls/credentials.h"

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/server_credentials.h"

namespace blkbench::tls {
namespace {

std::string Field(X509_NAME* name, int nid) {
  char buf[256];
  const int n = X509_NAME_get_text_by_NID(name, nid, buf, sizeof(buf));
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

}  // namespace

bool Identity::Allows(Role need) const {
  if (!local && kind != Kind::kCli) return false;
  return static_cast<int>(role) >= static_cast<int>(need);
}

std::string Identity::Describe() const {
  if (local)
    return role == Role::kAdmin ? "local" : absl::StrCat("local user (", RoleName(role), ")");
  switch (kind) {
    case Kind::kAgent:
      return "agent " + name;
    case Kind::kController:
      return "controller " + name;
    case Kind::kCli:
      return absl::StrCat("cli ", name, " (", RoleName(role), ")");
  }
  return name;
}

absl::StatusOr<Identity> IdentityFromCertPem(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (cert == nullptr) return absl::PermissionDeniedError("TLS: unreadable client certificate");
  X509_NAME* subject = X509_get_subject_name(cert);
  Identity id;
  id.name = Field(subject, NID_commonName);
  const std::string unit = Field(subject, NID_organizationalUnitName);
  X509_free(cert);
  if (unit == "blkbench-agent") {
    id.kind = Kind::kAgent;
  } else if (unit == "blkbench-controller") {
    id.kind = Kind::kController;
  } else if (absl::StartsWith(unit, "blkbench-cli-")) {
    id.kind = Kind::kCli;
    auto role = ParseRole(unit.substr(sizeof("blkbench-cli-") - 1));
    if (!role.ok()) return absl::PermissionDeniedError("TLS: client certificate has no role");
    id.role = *role;
  } else {
    return absl::PermissionDeniedError(
        absl::StrCat("TLS: the client certificate (OU \"", unit, "\") is not a blkbench one"));
  }
  if (!CheckName("certificate CN", id.name).ok()) {
    return absl::PermissionDeniedError("TLS: the client certificate's CN is not a valid name");
  }
  return id;
}

absl::StatusOr<Identity> CallerIdentity(const grpc::AuthContext& ctx) {
  const auto type = ctx.FindPropertyValues(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME);
  if (type.empty() || type[0] != "ssl") {
    Identity local;
    local.local = true;
    local.role = !type.empty() && type[0] == kLocalReadTransport ? Role::kRead : Role::kAdmin;
    return local;
  }
  const auto pem = ctx.FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
  if (pem.empty()) return absl::UnauthenticatedError("TLS: no client certificate");
  return IdentityFromCertPem(std::string(pem[0].data(), pem[0].size()));
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFromDir(
    const std::string& dir, std::shared_ptr<RevocationList> revoked) {
  if (revoked == nullptr) {
    absl::StatusOr<std::shared_ptr<RevocationList>> loaded =
        RevocationList::Load(absl::StrCat(dir, "/", kRevokedFile));
    if (!loaded.ok()) return loaded.status();
    revoked = std::move(*loaded);
  }
  auto ca = ReadPemFile(dir + "/ca.pem", "the lab CA");
  auto cert = ReadPemFile(dir + "/controller.pem", "the controller certificate");
  auto key = ReadPemFile(dir + "/controller.key", "the controller key");
  for (const auto* s : {&ca, &cert, &key}) {
    if (!s->ok()) return s->status();
  }
  grpc::SslServerCredentialsOptions opts(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  opts.pem_root_certs = *ca;
  opts.pem_key_cert_pairs.push_back({*key, *cert});
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::SslServerCredentials(opts);
  creds->SetAuthMetadataProcessor(std::make_shared<RevocationProcessor>(std::move(revoked)));
  return creds;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFromDir(
    const std::string& dir, const std::string& stem) {
  auto ca = ReadPemFile(dir + "/ca.pem", "the lab CA");
  auto cert = ReadPemFile(dir + "/" + stem + ".pem", "the certificate");
  auto key = ReadPemFile(dir + "/" + stem + ".key", "the key");
  for (const auto* s : {&ca, &cert, &key}) {
    if (!s->ok()) return s->status();
  }
  grpc::SslCredentialsOptions opts;
  opts.pem_root_certs = *ca;
  opts.pem_private_key = *key;
  opts.pem_cert_chain = *cert;
  return grpc::SslCredentials(opts);
}

}  // namespace blkbench::tls
