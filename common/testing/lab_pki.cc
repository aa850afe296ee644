// A lab PKI for tests (lab_pki.h).
#include "common/testing/lab_pki.h"

#include "absl/strings/str_cat.h"

namespace blkbench::testing {

tls::CertRequest Cert(tls::Kind kind, const std::string& name, tls::Role role) {
  tls::CertRequest r;
  r.kind = kind;
  r.name = name;
  r.role = role;
  return r;
}

absl::Status MakeLabPki(const std::string& dir, const std::vector<tls::CertRequest>& certs) {
  if (absl::Status s = tls::CreateCa(dir); !s.ok()) return s;
  for (const tls::CertRequest& r : certs) {
    if (auto made = tls::CreateCert(dir, r); !made.ok()) {
      return absl::Status(made.status().code(),
                          absl::StrCat("certificate ", r.name, ": ", made.status().message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace blkbench::testing
