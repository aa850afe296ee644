// The certificate deny list; see revocation.h.
#include "common/tls/revocation.h"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/log/log.h"
#include "common/tls/pki.h"
#include "grpc/grpc_security_constants.h"

namespace blkbench::tls {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using Cert = std::unique_ptr<X509, X509Free>;

absl::StatusOr<Cert> ParsePem(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  Cert cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  if (!cert) return absl::InvalidArgumentError("not a PEM certificate");
  return cert;
}

std::string SubjectOf(X509* cert) {
  char buf[512];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof(buf));
  return buf;
}

// In NormalizeSerial's form (no leading zeros), so a serial whose first byte is below
// 0x10 compares equal however it was written.
std::string SerialOf(X509* cert) {
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get_serialNumber(cert), nullptr);
  char* hex = bn == nullptr ? nullptr : BN_bn2hex(bn);
  std::string out = hex == nullptr ? "" : hex;
  OPENSSL_free(hex);
  BN_free(bn);
  absl::StatusOr<std::string> normal = NormalizeSerial(out);
  return normal.ok() ? *normal : out;
}

// The serials in `text` (the file `path`), or InvalidArgument naming path:line.
absl::StatusOr<std::set<std::string>> ParseList(const std::string& path, const std::string& text) {
  std::set<std::string> out;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    absl::StatusOr<std::string> serial = NormalizeSerial(std::string(line));
    if (!serial.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_no, ": ", serial.status().message()));
    }
    out.insert(*serial);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> CertSerialHex(const std::string& pem) {
  absl::StatusOr<Cert> cert = ParsePem(pem);
  if (!cert.ok()) return cert.status();
  return SerialOf(cert->get());
}

absl::StatusOr<std::string> NormalizeSerial(const std::string& text) {
  std::string out;
  absl::string_view s = text;
  absl::ConsumePrefix(&s, "serial=");  // `openssl x509 -serial` output pasted whole
  for (char c : s) {
    if (c == ':') continue;
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", text,
          "\" is not a certificate serial (expected hex digits, e.g. 3A:0F:9C or 3A0F9C)"));
    }
    out.push_back(absl::ascii_toupper(static_cast<unsigned char>(c)));
  }
  if (out.empty()) return absl::InvalidArgumentError("an empty certificate serial");
  // openssl prints an even number of digits; BN_bn2hex drops nothing but a leading zero
  // byte never appears in either. Strip leading zeros so both spellings compare equal.
  const size_t first = out.find_first_not_of('0');
  return first == std::string::npos ? std::string("0") : out.substr(first);
}

absl::StatusOr<std::shared_ptr<RevocationList>> RevocationList::Load(const std::string& path) {
  std::shared_ptr<RevocationList> list(new RevocationList(path));
  absl::MutexLock lock(&list->mu_);
  if (absl::Status s = list->Refresh(); !s.ok()) return s;
  return list;
}

absl::Status RevocationList::Refresh() {
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) {
    if (errno != ENOENT) return absl::ErrnoToStatus(errno, absl::StrCat("stat ", path_));
    serials_.clear();
    ino_ = 0;
    size_ = 0;
    mtime_ns_ = 0;
    return absl::OkStatus();
  }
  const int64_t mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  if (st.st_ino == ino_ && st.st_size == size_ && mtime_ns == mtime_ns_) return absl::OkStatus();
  ino_ = st.st_ino;
  size_ = st.st_size;
  mtime_ns_ = mtime_ns;
  std::ifstream in(path_);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return absl::UnavailableError(absl::StrCat("cannot read ", path_));
  absl::StatusOr<std::set<std::string>> serials = ParseList(path_, text.str());
  if (!serials.ok()) return serials.status();
  serials_ = std::move(*serials);
  return absl::OkStatus();
}

absl::Status RevocationList::Check(const std::string& pem) {
  absl::StatusOr<Cert> cert = ParsePem(pem);
  if (!cert.ok()) return absl::PermissionDeniedError("TLS: unreadable client certificate");
  const std::string serial = SerialOf(cert->get());
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Refresh(); !s.ok()) {
    LogEvent(LogLevel::kError, "tls", "revocation_list_unreadable")
        .Field("file", path_)
        .Field("error", s.message())
        .Field("kept_serials", static_cast<uint64_t>(serials_.size()));
  }
  if (serials_.count(serial) == 0) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("TLS: the client certificate ",
                                                  SubjectOf(cert->get()), " (serial ", serial,
                                                  ") is revoked (listed in ", path_, ")"));
}

bool RevocationList::Contains(const std::string& serial) const {
  absl::MutexLock lock(&mu_);
  return serials_.count(serial) != 0;
}

absl::Status AppendRevoked(const std::string& path, const std::string& serial,
                           const std::string& comment) {
  absl::StatusOr<std::string> normal = NormalizeSerial(serial);
  if (!normal.ok()) return normal.status();
  absl::StatusOr<std::shared_ptr<RevocationList>> list = RevocationList::Load(path);
  if (!list.ok()) return list.status();
  if ((*list)->Contains(*normal)) return absl::OkStatus();
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  const std::string line = absl::StrCat(*normal, comment.empty() ? "" : "  # ", comment, "\n");
  const ssize_t n = write(fd, line.data(), line.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(line.size())) {
    return absl::ErrnoToStatus(err, absl::StrCat("append to ", path));
  }
  return absl::OkStatus();
}

grpc::Status RevocationProcessor::Process(const InputMetadata&, grpc::AuthContext* context,
                                          OutputMetadata*, OutputMetadata*) {
  const auto pem = context->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
  if (pem.empty()) return grpc::Status::OK;  // CallerIdentity refuses a missing certificate
  absl::Status s = list_->Check(std::string(pem[0].data(), pem[0].size()));
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, std::string(s.message()));
}

}  // namespace blkbench::tls
