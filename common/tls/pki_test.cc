// The lab PKI: files and modes, identities read back, no overwrites, bad names refused,
// and certificates that verify against the CA (OpenSSL's own chain check).
#include "common/tls/pki.h"

#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "common/testing/loop_device.h"
#include "common/tls/credentials.h"
#include "common/tls/revocation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::tls {
namespace {

using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CertRequest Req(Kind kind, const std::string& name, Role role = Role::kNone,
                std::vector<std::string> dns = {}) {
  CertRequest r;
  r.kind = kind;
  r.name = name;
  r.role = role;
  r.dns_names = std::move(dns);
  return r;
}

int Mode(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 0777) : -1;
}

// OpenSSL's verification of `leaf` against `ca` (both PEM).
bool VerifiesAgainst(const std::string& leaf, const std::string& ca) {
  BIO* lb = BIO_new_mem_buf(leaf.data(), static_cast<int>(leaf.size()));
  BIO* cb = BIO_new_mem_buf(ca.data(), static_cast<int>(ca.size()));
  X509* l = PEM_read_bio_X509(lb, nullptr, nullptr, nullptr);
  X509* c = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, c);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, l, nullptr);
  const bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(l);
  X509_free(c);
  BIO_free(lb);
  BIO_free(cb);
  return ok;
}

TEST(PkiTest, CaAndCertificatesForEveryPartyWithTheirIdentities) {
  testing::TempDir tmp("pki_test");
  const std::string dir = tmp.File("pki");
  ASSERT_TRUE(CreateCa(dir).ok());
  EXPECT_EQ(Mode(dir + "/ca.key"), 0600);
  EXPECT_EQ(Mode(dir), 0700);
  ASSERT_EQ(*CreateCert(
                dir, Req(Kind::kController, "controller", Role::kNone, {"bench.lab", "10.0.0.5"})),
            "controller");
  ASSERT_EQ(*CreateCert(dir, Req(Kind::kAgent, "host-1")), "agent-host-1");
  ASSERT_EQ(*CreateCert(dir, Req(Kind::kCli, "alice", Role::kSubmit)), "cli-alice");
  const std::string ca = Slurp(dir + "/ca.pem");
  for (const char* stem : {"controller", "agent-host-1", "cli-alice"}) {
    EXPECT_EQ(Mode(dir + "/" + stem + ".key"), 0600) << stem;
    EXPECT_TRUE(VerifiesAgainst(Slurp(dir + "/" + stem + ".pem"), ca)) << stem;
  }
  auto agent = IdentityFromCertPem(Slurp(dir + "/agent-host-1.pem"));
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_EQ(agent->kind, Kind::kAgent);
  EXPECT_EQ(agent->name, "host-1");
  EXPECT_FALSE(agent->Allows(Role::kRead));  // an agent is not a CLI user
  auto alice = IdentityFromCertPem(Slurp(dir + "/cli-alice.pem"));
  ASSERT_TRUE(alice.ok());
  EXPECT_EQ(alice->role, Role::kSubmit);
  EXPECT_TRUE(alice->Allows(Role::kRead));
  EXPECT_TRUE(alice->Allows(Role::kSubmit));
  EXPECT_FALSE(alice->Allows(Role::kAdmin));
  EXPECT_EQ(alice->Describe(), "cli alice (submit)");
  EXPECT_TRUE(ServerCredentialsFromDir(dir).ok());
  EXPECT_TRUE(ChannelCredentialsFromDir(dir, "cli-alice").ok());

  // Another CA's certificate does not verify against this one.
  const std::string other = tmp.File("other");
  ASSERT_TRUE(CreateCa(other).ok());
  ASSERT_TRUE(CreateCert(other, Req(Kind::kAgent, "host-1")).ok());
  EXPECT_FALSE(VerifiesAgainst(Slurp(other + "/agent-host-1.pem"), ca));
}

TEST(PkiTest, NothingIsOverwrittenAndBadRequestsChangeNothing) {
  testing::TempDir tmp("pki_test");
  const std::string dir = tmp.File("pki");
  auto no_ca = CreateCert(dir, Req(Kind::kAgent, "a"));
  EXPECT_TRUE(absl::IsFailedPrecondition(no_ca.status()));
  EXPECT_THAT(std::string(no_ca.status().message()), HasSubstr("tls ca create"));
  ASSERT_TRUE(CreateCa(dir).ok());
  const std::string ca = Slurp(dir + "/ca.pem");
  EXPECT_TRUE(absl::IsAlreadyExists(CreateCa(dir)));
  EXPECT_EQ(Slurp(dir + "/ca.pem"), ca);
  ASSERT_TRUE(CreateCert(dir, Req(Kind::kAgent, "a")).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(CreateCert(dir, Req(Kind::kAgent, "a")).status()));
  for (const char* bad : {"", "../x", ".hidden", "a b",
                          "a\xe2\x80\xae"
                          "b"}) {
    auto r = CreateCert(dir, Req(Kind::kAgent, bad));
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << bad;
  }
  EXPECT_TRUE(
      absl::IsInvalidArgument(CreateCert(dir, Req(Kind::kCli, "bob")).status()));  // no role
  EXPECT_TRUE(absl::IsInvalidArgument(ParseRole("root").status()));
  auto missing = ServerCredentialsFromDir(dir);  // no controller certificate yet
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("controller.pem"));
}

// A serial matches however it is written: openssl's colons, lower case, a leading zero
// byte (a random serial's first byte is below 0x10 one time in 16), "serial=" pasted.
TEST(RevocationTest, SerialsMatchInEverySpellingAndBadLinesAreErrors) {
  testing::TempDir tmp("pki_test");
  const std::string dir = tmp.File("pki");
  ASSERT_TRUE(CreateCa(dir).ok());
  ASSERT_TRUE(CreateCert(dir, Req(Kind::kAgent, "a")).ok());
  const std::string pem = Slurp(dir + "/agent-a.pem");
  auto serial = CertSerialHex(pem);
  ASSERT_TRUE(serial.ok());
  EXPECT_NE((*serial)[0], '0');
  EXPECT_EQ(*NormalizeSerial("serial=0a:0B"), "A0B");
  EXPECT_EQ(*NormalizeSerial("000"), "0");
  EXPECT_FALSE(NormalizeSerial("xyz").ok());
  std::string colons = "00";
  for (size_t k = 0; k < serial->size(); ++k) {
    if (k > 0 && k % 2 == 0) colons += ":";
    colons += absl::AsciiStrToLower(serial->substr(k, 1));
  }
  const std::string list = dir + "/revoked.txt";
  std::ofstream(list) << "# lost laptop\n" << colons << "  # agent a\n";
  auto revoked = RevocationList::Load(list);
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  absl::Status refused = (*revoked)->Check(pem);
  EXPECT_TRUE(absl::IsPermissionDenied(refused)) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr(*serial));
  std::ofstream(dir + "/bad.txt") << "ABCD\nnot-a-serial\n";
  auto bad = RevocationList::Load(dir + "/bad.txt");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("bad.txt:2:"));
}

}  // namespace
}  // namespace blkbench::tls
