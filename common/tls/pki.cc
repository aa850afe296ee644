// Lab PKI with OpenSSL 3; see pki.h.
#include "common/tls/pki.h"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace blkbench::tls {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;
using Bio = std::unique_ptr<BIO, Free>;

absl::Status OpenSslError(absl::string_view what) {
  char buf[256];
  ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
  return absl::InternalError(absl::StrCat(what, ": ", buf));
}

const char* KindUnit(Kind kind) {
  switch (kind) {
    case Kind::kController:
      return "blkbench-controller";
    case Kind::kAgent:
      return "blkbench-agent";
    case Kind::kCli:
      return "blkbench-cli";
  }
  return "";
}

// Writes `data` to a new file `path` with `mode`; AlreadyExists if it is there.
absl::Status WriteNew(const std::string& path, const std::string& data, mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST) return absl::AlreadyExistsError(absl::StrCat(path, " already exists"));
    return absl::ErrnoToStatus(errno, absl::StrCat("creating ", path));
  }
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      const int err = errno;
      close(fd);
      return absl::ErrnoToStatus(err, absl::StrCat("writing ", path));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) return absl::ErrnoToStatus(errno, "closing " + path);
  return absl::OkStatus();
}

absl::StatusOr<std::string> Pem(const std::function<int(BIO*)>& write) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return OpenSslError("encoding PEM");
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

absl::StatusOr<Key> NewKey() {
  Key key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslError("generating an EC P-256 key");
  return key;
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return OpenSslError(absl::StrCat("extension ", OBJ_nid2sn(nid)));
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (ok != 1) return OpenSslError("adding an extension");
  return absl::OkStatus();
}

// A certificate for `key` with subject CN=cn, OU=unit, O=blkbench, valid `days` from
// now, a 128-bit random serial; issuer = itself (ca null) or `ca`.
absl::StatusOr<Cert> NewCert(EVP_PKEY* key, const std::string& cn, const std::string& unit,
                             int days, X509* ca) {
  Cert cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1) return OpenSslError("X509_new");
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1) return OpenSslError("random serial");
  serial[0] &= 0x7f;  // positive
  std::unique_ptr<BIGNUM, Free> bn(BN_bin2bn(serial, sizeof(serial), nullptr));
  if (!bn || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return OpenSslError("serial");
  }
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300);  // tolerate small clock skew
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(days) * 86400);
  X509_NAME* name = X509_get_subject_name(cert.get());
  auto add = [name](const char* field, const std::string& v) {
    return X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                      reinterpret_cast<const unsigned char*>(v.c_str()), -1, -1,
                                      0) == 1;
  };
  if (!add("O", "blkbench") || !add("OU", unit) || !add("CN", cn)) return OpenSslError("subject");
  if (X509_set_issuer_name(cert.get(), ca ? X509_get_subject_name(ca) : name) != 1 ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return OpenSslError("issuer/public key");
  }
  return cert;
}

}  // namespace

absl::StatusOr<std::string> ReadPemFile(const std::string& path, absl::string_view what) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("TLS: cannot read ", what, " ", path, ": ", strerror(errno)));
  }
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  fclose(f);
  return out;
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kNone:
      return "";
    case Role::kRead:
      return "read";
    case Role::kSubmit:
      return "submit";
    case Role::kAdmin:
      return "admin";
  }
  return "";
}

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  if (name == "read") return Role::kRead;
  if (name == "submit") return Role::kSubmit;
  if (name == "admin") return Role::kAdmin;
  return absl::InvalidArgumentError(
      absl::StrCat("role: expected read, submit or admin, got \"", name, "\""));
}

absl::Status CheckName(absl::string_view what, absl::string_view name) {
  bool ok = !name.empty() && name.size() <= 64 && name[0] != '.';
  for (char c : name) {
    ok = ok &&
         (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": expected 1 to 64 of A-Z a-z 0-9 . _ - (not starting with '.'), got \"",
                   absl::CEscape(name), "\""));
}

std::string CertStem(Kind kind, const std::string& name) {
  switch (kind) {
    case Kind::kController:
      return "controller";
    case Kind::kAgent:
      return "agent-" + name;
    case Kind::kCli:
      return "cli-" + name;
  }
  return name;
}

absl::Status CreateCa(const std::string& dir, int days) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::ErrnoToStatus(errno, absl::StrCat("creating ", dir));
  }
  if (access((dir + "/ca.key").c_str(), F_OK) == 0) {
    return absl::AlreadyExistsError(
        absl::StrCat(dir, "/ca.key already exists; a CA is never replaced (remove it first)"));
  }
  auto key = NewKey();
  if (!key.ok()) return key.status();
  auto cert = NewCert(key->get(), "blkbench lab CA", "blkbench-ca", days, nullptr);
  if (!cert.ok()) return cert.status();
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                            std::pair{NID_key_usage, "critical,keyCertSign,cRLSign"},
                            std::pair{NID_subject_key_identifier, "hash"}}) {
    if (absl::Status s = AddExtension(cert->get(), cert->get(), nid, value); !s.ok()) return s;
  }
  if (X509_sign(cert->get(), key->get(), EVP_sha256()) == 0) return OpenSslError("signing the CA");
  auto key_pem = Pem([&](BIO* b) {
    return PEM_write_bio_PrivateKey(b, key->get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  auto cert_pem = Pem([&](BIO* b) { return PEM_write_bio_X509(b, cert->get()); });
  if (!key_pem.ok()) return key_pem.status();
  if (!cert_pem.ok()) return cert_pem.status();
  if (absl::Status s = WriteNew(dir + "/ca.key", *key_pem, 0600); !s.ok()) return s;
  return WriteNew(dir + "/ca.pem", *cert_pem, 0644);
}

absl::StatusOr<std::string> CreateCert(const std::string& dir, const CertRequest& req) {
  if (absl::Status s = CheckName("name", req.name); !s.ok()) return s;
  if ((req.kind == Kind::kCli) != (req.role != Role::kNone)) {
    return absl::InvalidArgumentError("a role is required for CLI certificates, and only there");
  }
  auto ca_pem = ReadPemFile(dir + "/ca.pem", "the lab CA");
  auto ca_key_pem = ReadPemFile(dir + "/ca.key", "the CA key");
  if (!ca_pem.ok() || !ca_key_pem.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no CA in ", dir, " (ca.pem and ca.key): create one with `blkbench tls ca create --dir ",
        dir, "`"));
  }
  Bio ca_bio(BIO_new_mem_buf(ca_pem->data(), static_cast<int>(ca_pem->size())));
  Cert ca(PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr));
  Bio key_bio(BIO_new_mem_buf(ca_key_pem->data(), static_cast<int>(ca_key_pem->size())));
  Key ca_key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!ca || !ca_key) return OpenSslError(absl::StrCat("reading the CA in ", dir));

  const std::string stem = CertStem(req.kind, req.name);
  if (access((dir + "/" + stem + ".key").c_str(), F_OK) == 0) {
    return absl::AlreadyExistsError(absl::StrCat(dir, "/", stem, ".key already exists"));
  }
  std::string unit = KindUnit(req.kind);
  if (req.kind == Kind::kCli) absl::StrAppend(&unit, "-", RoleName(req.role));
  auto key = NewKey();
  if (!key.ok()) return key.status();
  auto cert = NewCert(key->get(), req.name, unit, req.days, ca.get());
  if (!cert.ok()) return cert.status();
  std::vector<std::pair<int, std::string>> exts = {
      {NID_basic_constraints, "critical,CA:FALSE"},
      {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
      {NID_subject_key_identifier, "hash"},
      {NID_authority_key_identifier, "keyid:always"}};
  // The controller always serves (gRPC and HTTPS); an agent serves HTTPS /metrics when
  // it has names to be verified by.
  if (req.kind == Kind::kController || (req.kind == Kind::kAgent && !req.dns_names.empty())) {
    std::vector<std::string> sans = {"DNS:localhost", "IP:127.0.0.1", "IP:::1"};
    for (const std::string& n : req.dns_names) {
      const bool ip = !n.empty() && (absl::ascii_isdigit(static_cast<unsigned char>(n[0])) ||
                                     n.find(':') != std::string::npos);
      sans.push_back(absl::StrCat(ip ? "IP:" : "DNS:", n));
    }
    exts.push_back({NID_subject_alt_name, absl::StrJoin(sans, ",")});
    exts.push_back({NID_ext_key_usage, "serverAuth,clientAuth"});
  } else {
    exts.push_back({NID_ext_key_usage, "clientAuth"});
  }
  for (const auto& [nid, value] : exts) {
    if (absl::Status s = AddExtension(cert->get(), ca.get(), nid, value); !s.ok()) return s;
  }
  if (X509_sign(cert->get(), ca_key.get(), EVP_sha256()) == 0) return OpenSslError("signing");
  auto key_pem = Pem([&](BIO* b) {
    return PEM_write_bio_PrivateKey(b, key->get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  auto cert_pem = Pem([&](BIO* b) { return PEM_write_bio_X509(b, cert->get()); });
  if (!key_pem.ok()) return key_pem.status();
  if (!cert_pem.ok()) return cert_pem.status();
  if (absl::Status s = WriteNew(dir + "/" + stem + ".key", *key_pem, 0600); !s.ok()) return s;
  if (absl::Status s = WriteNew(dir + "/" + stem + ".pem", *cert_pem, 0644); !s.ok()) return s;
  return stem;
}

absl::StatusOr<std::string> CreateToken(const std::string& dir) {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return OpenSslError("random token");
  std::string hex;
  for (unsigned char b : bytes) absl::StrAppend(&hex, absl::Hex(b, absl::kZeroPad2));
  const std::string path = dir + "/metrics.token";
  if (absl::Status s = WriteNew(path, hex + "\n", 0640); !s.ok()) return s;
  return path;
}

}  // namespace blkbench::tls
