// `blkbench tls` and the CLI's TLS credentials; see tls_cmd.h.
#include "controller/cli/tls_cmd.h"

#include <dirent.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/tls/credentials.h"
#include "common/tls/pki.h"

namespace blkbench {
namespace {

std::string Flag(const Args& a, const std::string& name) {
  auto it = a.flags.find(name);
  return it == a.flags.end() ? "" : it->second;
}

// What `tls cert create` was asked for, or InvalidArgument.
absl::StatusOr<tls::CertRequest> CertRequestOf(const Args& a) {
  tls::CertRequest req;
  const int kinds = static_cast<int>(a.flags.count("server")) +
                    static_cast<int>(a.flags.count("agent")) +
                    static_cast<int>(a.flags.count("cli"));
  if (kinds != 1) {
    return absl::InvalidArgumentError(
        "blkbench tls cert create: give exactly one of --server, --agent ID, --cli NAME");
  }
  if (a.flags.count("server")) {
    req.kind = tls::Kind::kController;
    req.name = "controller";
    const std::string dns = Flag(a, "dns");
    if (!dns.empty()) req.dns_names = absl::StrSplit(dns, ',', absl::SkipEmpty());
  } else if (a.flags.count("agent")) {
    req.kind = tls::Kind::kAgent;
    req.name = Flag(a, "agent");
  } else {
    req.kind = tls::Kind::kCli;
    req.name = Flag(a, "cli");
    if (!a.flags.count("role")) {
      return absl::InvalidArgumentError(
          "blkbench tls cert create --cli NAME: --role read|submit|admin is required");
    }
    auto role = tls::ParseRole(Flag(a, "role"));
    if (!role.ok()) return role.status();
    req.role = *role;
  }
  if (a.flags.count("role") && req.kind != tls::Kind::kCli) {
    return absl::InvalidArgumentError("blkbench tls cert create: --role is for --cli only");
  }
  if (absl::Status s = tls::CheckName("name", req.name); !s.ok()) return s;
  return req;
}

}  // namespace

int CheckTlsArgs(const Args& a, std::ostream& err) {
  const std::string what = absl::StrCat(a.positional[1], " ", a.positional[2]);
  if (what != "ca create" && what != "cert create") {
    err << "blkbench tls: expected 'ca create' or 'cert create', got '" << what << "'\n";
    return 2;
  }
  if (Flag(a, "dir").empty()) {
    err << "blkbench tls " << what << ": --dir DIR is required\n";
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
  const std::string dir = Flag(a, "dir");
  if (a.positional[1] == "ca") {
    if (absl::Status s = tls::CreateCa(dir); !s.ok()) {
      err << "blkbench tls ca create: " << s.message() << "\n";
      return 1;
    }
    out << "wrote " << dir << "/ca.pem and " << dir
        << "/ca.key (keep ca.key offline: it signs every certificate)\n";
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

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> CliCredentials(const Args& a) {
  std::string dir = Flag(a, "tls_dir");
  if (dir.empty() && getenv("BLKBENCH_TLS_DIR") != nullptr) dir = getenv("BLKBENCH_TLS_DIR");
  if (dir.empty()) return std::shared_ptr<grpc::ChannelCredentials>();
  std::string name = Flag(a, "tls_cert");
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
  return tls::ChannelCredentialsFromDir(dir, tls::CertStem(tls::Kind::kCli, name));
}

}  // namespace blkbench
