// Revocation of lab certificates by serial: a deny list the controller consults for
// every TLS call (gRPC and HTTPS), in place of a CRL. The list is <tls_dir>/revoked.txt,
// one serial per line in hex as `openssl x509 -noout -serial` prints it (case and ':'
// separators ignored), '#' starts a comment. `blkbench tls cert revoke` appends to it.
// The file is re-read whenever its modification time, size or inode changes, so a
// revocation takes effect on the next call without a restart.
#ifndef BLKBENCH_COMMON_TLS_REVOCATION_H_
#define BLKBENCH_COMMON_TLS_REVOCATION_H_

#include <sys/types.h>

#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/security/auth_metadata_processor.h"

namespace blkbench::tls {

// The file name of the deny list inside a PKI directory.
inline constexpr char kRevokedFile[] = "revoked.txt";

// The serial of a PEM certificate in upper-case hex without separators or leading zeros
// (NormalizeSerial's form). InvalidArgument for something that is not a certificate.
absl::StatusOr<std::string> CertSerialHex(const std::string& pem);

// "AB:cd:01" or "abcd01" → "ABCD01"; InvalidArgument naming `text` for anything else.
absl::StatusOr<std::string> NormalizeSerial(const std::string& text);

// Thread-safe.
class RevocationList {
 public:
  // Reads `path` now. A missing file is an empty list; a line that is not a serial is
  // InvalidArgument naming the file and line (a typo must not silently revoke nothing).
  static absl::StatusOr<std::shared_ptr<RevocationList>> Load(const std::string& path);

  // OK unless the certificate `pem` is on the list (re-read first if the file changed);
  // PermissionDenied naming the serial, the certificate's subject and the file when it
  // is. If a changed file no longer parses, the last list that did stays in force and the
  // error is logged once per change.
  absl::Status Check(const std::string& pem);

  // Whether the (normalised) serial is listed, as last read.
  bool Contains(const std::string& serial) const;

  const std::string& path() const { return path_; }

 private:
  explicit RevocationList(std::string path) : path_(std::move(path)) {}
  // Re-reads the file if its stat changed. Returns the parse error of a changed file.
  absl::Status Refresh() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  mutable absl::Mutex mu_;
  std::set<std::string> serials_ ABSL_GUARDED_BY(mu_);
  // What the file looked like when last read (all zero: missing).
  ino_t ino_ ABSL_GUARDED_BY(mu_) = 0;
  off_t size_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t mtime_ns_ ABSL_GUARDED_BY(mu_) = 0;
};

// Appends `serial` (any form NormalizeSerial takes) to the list at `path` with a comment,
// creating the file 0644. OK and no change if it is already listed.
absl::Status AppendRevoked(const std::string& path, const std::string& serial,
                           const std::string& comment);

// Refuses, with UNAUTHENTICATED, every call whose client certificate is revoked. Installed
// on the controller's TLS server credentials, so it runs once per call before any handler.
class RevocationProcessor final : public grpc::AuthMetadataProcessor {
 public:
  explicit RevocationProcessor(std::shared_ptr<RevocationList> list) : list_(std::move(list)) {}
  bool IsBlocking() const override { return false; }  // a stat(2), no I/O wait
  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

 private:
  const std::shared_ptr<RevocationList> list_;
};

}  // namespace blkbench::tls

#endif  // BLKBENCH_COMMON_TLS_REVOCATION_H_
