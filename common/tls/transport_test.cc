// Tests for ClientTransportFor: the agent's and the CLI's one rule for plain text.
#include "common/tls/transport.h"

#include "common/testing/lab_pki.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::tls {
namespace {

using ::testing::HasSubstr;

constexpr char kFlag[] = "--insecure";

TEST(ClientTransportTest, PlainTextBeyondThisHostIsRefusedWithoutInsecure) {
  for (const std::string address : {"10.20.30.40:7450", "controller.lab.example:7450",
                                    "dns:///controller.lab.example:7450", "[2001:db8::1]:7450"}) {
    auto refused = ClientTransportFor(address, "", "", /*insecure=*/false, kFlag);
    ASSERT_FALSE(refused.ok()) << address;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--insecure"));
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr(address));
  }
}

TEST(ClientTransportTest, InsecureAllowsPlainTextAndSaysSo) {
  auto allowed =
      ClientTransportFor("10.20.30.40:7450", "", "", /*insecure=*/true, "`insecure: true`");
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_NE(allowed->credentials, nullptr);
  EXPECT_EQ(allowed->description, "plain text (--insecure)");
  EXPECT_THAT(allowed->warning, HasSubstr("WARNING: `insecure: true`"));
  EXPECT_THAT(allowed->warning, HasSubstr("10.20.30.40:7450"));
}

TEST(ClientTransportTest, UnixSocketsNeedNoTlsAndNoWarning) {
  for (const std::string address :
       {"unix:/run/blkbench/controller.sock", "unix:///tmp/c.sock", "unix-abstract:blkbench"}) {
    auto t = ClientTransportFor(address, "/nonexistent/pki", "agent-a1", false, kFlag);
    ASSERT_TRUE(t.ok()) << address << ": " << t.status();
    EXPECT_EQ(t->description, "Unix socket");
    EXPECT_EQ(t->warning, "");
  }
}

TEST(ClientTransportTest, LoopbackIsPlainTextWithAWarning) {
  auto t = ClientTransportFor("127.0.0.1:7450", "", "", false, kFlag);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->description, "plain text (loopback)");
  EXPECT_THAT(t->warning, HasSubstr("pose as the controller"));
}

TEST(ClientTransportTest, TlsDirGivesMutualTlsOrNamesTheMissingFile) {
  testing::TempDir dir("transport_test");
  auto missing = ClientTransportFor("10.20.30.40:7450", dir.path(), "agent-a1", false, kFlag);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("ca.pem"));
  ASSERT_TRUE(testing::MakeLabPki(dir.path(), {testing::Cert(Kind::kAgent, "a1")}).ok());
  auto t = ClientTransportFor("10.20.30.40:7450", dir.path(), "agent-a1", false, kFlag);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->description, "mutual TLS");
  EXPECT_EQ(t->warning, "");
}

TEST(ClientTransportTest, LoopbackAddresses) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:7450"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:7450"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:1"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.1:7450"));
  EXPECT_FALSE(IsLoopbackAddress(":7450"));
  EXPECT_TRUE(IsUnixSocketAddress("unix:/x"));
  EXPECT_FALSE(IsUnixSocketAddress("127.0.0.1:7450"));
}

}  // namespace
}  // namespace blkbench::tls
