// A lab PKI for tests: one CA and the certificates a test names, made with the same
// code as `blkbench tls` (common/tls/pki.h), so tests exercise the real files.
#ifndef BLKBENCH_COMMON_TESTING_LAB_PKI_H_
#define BLKBENCH_COMMON_TESTING_LAB_PKI_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/tls/pki.h"

namespace blkbench::testing {

// A certificate request: `role` is for CLI users only.
tls::CertRequest Cert(tls::Kind kind, const std::string& name, tls::Role role = tls::Role::kNone);

// Creates a CA in `dir` (which must not hold one) and then each of `certs` under it.
// The error names the certificate that could not be made.
absl::Status MakeLabPki(const std::string& dir, const std::vector<tls::CertRequest>& certs);

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_LAB_PKI_H_
