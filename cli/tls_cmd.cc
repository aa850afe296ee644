// `blkbench tls` and the CLI's TLS credentials; see tls_cmd.h.
#include "cli/tls_cmd.h"

#include <dirent.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/command_registry.h"
#include "common/tls/credentials.h"
#include "common/tls/pki.h"

namespace blkbench {
namespace {

// What `tls cert create` was asked for, or InvalidArgument.
absl::StatusOr<tls::CertRequest> CertRequestOf(const Args& a) {
  tls::CertRequest req;
  const int kinds = static_cast<int>(a.flags.count("server") + a.flags.count("controller") > 0) +
                    static_cast<int>(a.flags.count("agent")) +
                    static_cast<int>(a.flags.count("cli"));
  if (kinds != 1) {
    return absl::InvalidArgumentError(
        "blkbench tls cert create: give exactly one of --controller HOSTS, --agent ID, --cli NAME");
  }
  for (const char* names : {"controller", "dns"}) {
    for (absl::string_view n : absl::StrSplit(a.Get(names), ',', absl::SkipEmpty())) {
      req.dns_names.emplace_back(n);
    }
  }
  if (a.flags.count("server") || a.flags.count("controller")) {
    req.kind = tls::Kind::kController;
    req.name = "controller";
  } else if (a.flags.count("agent")) {
    req.kind = tls::Kind::kAgent;
    req.name = a.Get("agent");
  } else {
    req.kind = tls::Kind::kCli;
    req.name = a.Get("cli");
    if (!a.flags.count("role")) {
      return absl::InvalidArgumentError(
          "blkbench tls cert create --cli NAME: --role read|submit|admin is required");
    }
    auto role = tls::ParseRole(a.Get("role"));
    if (!role.ok()) return role.status();
    req.role = *role;
  }
  if (!req.dns_names.empty() && req.kind == tls::Kind::kCli) {
    return absl::InvalidArgumentError(
        "blkbench tls cert create: --dns is for --controller and --agent");
  }
  if (a.flags.count("role") && req.kind != tls::Kind::kCli) {
    return absl::InvalidArgumentError("blkbench tls cert create: --role is for --cli only");
  }
  if (absl::Status s = tls::CheckName("name", req.name); !s.ok()) return s;
  return req;
}

// `tls cert revoke`: the serial of --cert or --serial appended to <dir>/revoked.txt.
int Revoke(const Args& a, std::ostream& out, std::ostream& err) {
  const std::string dir = a.Get("dir");
  std::string serial = a.Get("serial");
  std::string comment = "revoked by blkbench tls cert revoke";
  if (a.flags.count("cert")) {
    auto pem = tls::ReadPemFile(a.Get("cert"), "the certificate to revoke");
    if (!pem.ok()) {
      err << "blkbench tls cert revoke: " << pem.status().message() << "\n";
      return 1;
    }
    auto hex = tls::CertSerialHex(*pem);
    auto who = tls::IdentityFromCertPem(*pem);
    if (!hex.ok()) {
      err << "blkbench tls cert revoke: " << a.Get("cert") << ": " << hex.status().message()
          << "\n";
      return 1;
    }
    serial = *hex;
    if (who.ok()) comment = who->Describe();
  }
  const std::string path = absl::StrCat(dir, "/", tls::kRevokedFile);
  if (absl::Status s = tls::AppendRevoked(path, serial, comment); !s.ok()) {
    err << "blkbench tls cert revoke: " << s.message() << "\n";
    return 1;
  }
  out << "revoked serial " << *tls::NormalizeSerial(serial) << " (" << comment << ") in " << path
      << "; copy it to the controller's --tls_dir: it takes effect on the next call\n";
  return 0;
}

}  // namespace

int CheckTlsArgs(const Args& a, std::ostream& err) {
  const std::string what = absl::StrCat(a.positional[1], " ", a.positional[2]);
  if (what != "ca create" && what != "cert create" && what != "cert revoke" &&
      what != "token create") {
    err << "blkbench tls: expected 'ca create', 'cert create', 'cert revoke' or 'token create', "
           "got '"
        << what << "'\n";
    return 2;
  }
  if (a.Get("dir").empty()) {
    err << "blkbench tls " << what << ": --dir DIR is required\n";
    return 2;
  }
  if (what == "cert revoke" && a.flags.count("cert") + a.flags.count("serial") != 1) {
    err << "blkbench tls cert revoke: give exactly one of --cert FILE.pem, --serial HEX\n";
    return 2;
  }
  if (what == "cert create") {
    if (auto req = CertRequestOf(a); !req.ok()) {
      err << req.status().message() << "\n";
      return 2;
    }
  }
  return 0;
}

int CmdTls(const Args& a, Client*, std::ostream& out, std::ostream& err) {
  const std::string dir = a.Get("dir");
  if (a.positional[1] == "ca") {
    if (absl::Status s = tls::CreateCa(dir); !s.ok()) {
      err << "blkbench tls ca create: " << s.message() << "\n";
      return 1;
    }
    out << "wrote " << dir << "/ca.pem and " << dir
        << "/ca.key (keep ca.key offline: it signs every certificate)\n";
    return 0;
  }
  if (a.positional[2] == "revoke") return Revoke(a, out, err);
  if (a.positional[1] == "token") {
    auto path = tls::CreateToken(dir);
    if (!path.ok()) {
      err << "blkbench tls token create: " << path.status().message() << "\n";
      return 1;
    }
    out << "wrote " << *path
        << " (mode 0640): give it to the controller (--metrics_token_file), agents "
           "(metrics_token_file) and Prometheus (authorization.credentials_file)\n";
    return 0;
  }
  auto req = CertRequestOf(a);
  auto stem = tls::CreateCert(dir, *req);
  if (!stem.ok()) {
    err << "blkbench tls cert create: " << stem.status().message() << "\n";
    return 1;
  }
  out << "wrote " << dir << "/" << *stem << ".pem and " << dir << "/" << *stem << ".key\n";
  return 0;
}

absl::StatusOr<tls::ClientTransport> CliTransport(const Args& a, const std::string& address) {
  const bool insecure = a.flags.count("insecure") > 0;
  std::string dir = a.Get("tls_dir");
  if (dir.empty() && getenv("BLKBENCH_TLS_DIR") != nullptr) dir = getenv("BLKBENCH_TLS_DIR");
  if (dir.empty() || tls::IsUnixSocketAddress(address)) {
    return tls::ClientTransportFor(address, "", "", insecure, "--insecure");
  }
  std::string name = a.Get("tls_cert");
  if (name.empty()) {
    std::vector<std::string> found;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        const std::string f = e->d_name;
        if (absl::StartsWith(f, "cli-") && absl::EndsWith(f, ".pem")) {
          found.push_back(f.substr(4, f.size() - 8));
        }
      }
      closedir(d);
    }
    if (found.size() != 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          "TLS: ", found.empty() ? "no" : "more than one", " client certificate (cli-NAME.pem) in ",
          dir,
          found.empty() ? ": make one with `blkbench tls cert create --cli NAME --role ROLE`"
                        : "; choose one with --tls_cert NAME"));
    }
    name = found[0];
  }
  return tls::ClientTransportFor(address, dir, tls::CertStem(tls::Kind::kCli, name), insecure,
                                 "--insecure");
}

CommandSpec TlsCommand() {
  return {
      .name = "tls",
      .args = {"ca|cert|token", "create|revoke"},
      .summary =
          "make the lab PKI for mutual TLS: a CA, then controller, agent and CLI certificates",
      .description =
          "blkbench tls ca create --dir D writes ca.pem and ca.key; blkbench tls cert create "
          "--dir D with --controller HOST[,HOST...] (controller.pem: localhost and 127.0.0.1 "
          "always; --server [--dns H,...] is the same), --agent ID [--dns H,...] (agent-ID.pem; "
          "names make it serve HTTPS /metrics too), or --cli NAME --role read|submit|admin "
          "(cli-NAME.pem). Keys are ECDSA P-256, written 0600, never overwritten. blkbench tls "
          "cert revoke --dir D --cert FILE.pem or --serial HEX adds the serial to "
          "D/revoked.txt, which the controller re-reads on change and refuses on every call. "
          "blkbench tls token create --dir D writes D/metrics.token (0640), the bearer token of "
          "HTTPS metrics endpoints. See docs/security.md.",
      .flags = {{"dir", "DIR", "the PKI directory"},
                {"controller", "HOSTS",
                 "the controller's certificate for these names/IPs (comma-separated)"},
                {"server", "", "the controller's certificate (names from --dns)"},
                {"dns", "NAMES",
                 "extra DNS names or IPs of the controller or agent (comma-separated)"},
                {"agent", "ID", "an agent's certificate (its agent_id)"},
                {"cli", "NAME", "a CLI user's certificate"},
                {"role", "ROLE", "the CLI user's role", {"read", "submit", "admin"}},
                {"cert", "FILE", "revoke: the certificate to revoke"},
                {"serial", "HEX", "revoke: the serial to revoke (openssl x509 -noout -serial)"}},
      .check = CheckTlsArgs,
      .run = CmdTls};
}

}  // namespace blkbench
