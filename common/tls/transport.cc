// The client transport rule; see transport.h.
#include "common/tls/transport.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/tls/credentials.h"

namespace blkbench::tls {

bool IsLoopbackAddress(const std::string& host_port) {
  const size_t colon = host_port.rfind(':');
  std::string host = colon == std::string::npos ? host_port : host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

bool IsUnixSocketAddress(const std::string& address) {
  return absl::StartsWith(address, "unix:") || absl::StartsWith(address, "unix-abstract:");
}

absl::StatusOr<ClientTransport> ClientTransportFor(const std::string& address,
                                                   const std::string& tls_dir,
                                                   const std::string& cert_stem, bool insecure,
                                                   absl::string_view insecure_flag) {
  ClientTransport t;
  if (IsUnixSocketAddress(address)) {
    t.credentials = grpc::InsecureChannelCredentials();
    t.description = "Unix socket";
    return t;
  }
  if (!tls_dir.empty()) {
    auto creds = ChannelCredentialsFromDir(tls_dir, cert_stem);
    if (!creds.ok()) return creds.status();
    t.credentials = *creds;
    t.description = "mutual TLS";
    return t;
  }
  // dns:/// and ipv4: targets are still TCP: only the host part matters.
  std::string host_port = address;
  for (const char* scheme : {"dns:///", "dns:", "ipv4:", "ipv6:"}) {
    if (absl::StartsWith(host_port, scheme)) {
      host_port = host_port.substr(std::string(scheme).size());
      break;
    }
  }
  if (IsLoopbackAddress(host_port)) {
    t.credentials = grpc::InsecureChannelCredentials();
    t.description = "plain text (loopback)";
    t.warning = absl::StrCat(
        "dialling the controller at ", address,
        " in plain text: any local user who holds that port can pose as the controller; "
        "prefer its Unix socket (",
        kDefaultControllerAddress, ")");
    return t;
  }
  if (!insecure) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to dial the controller at ", address,
        " without TLS: whoever answers there would be trusted and could read or forge "
        "everything sent. Give a lab PKI directory (tls_dir, docs/security.md), dial a Unix "
        "socket, or allow plain text with ",
        insecure_flag));
  }
  t.credentials = grpc::InsecureChannelCredentials();
  t.description = "plain text (--insecure)";
  t.warning = absl::StrCat("WARNING: ", insecure_flag, ": dialling the controller at ", address,
                           " without TLS or authentication; anyone on the path can read, "
                           "forge or answer in its place");
  return t;
}

}  // namespace blkbench::tls
