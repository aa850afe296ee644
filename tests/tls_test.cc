// Mutual TLS end to end, with a lab PKI made in the test (common/tls/pki.h): a
// controller serving TCP with client certificates required, a real agent with its own
// certificate running a sim run, and every refusal — no certificate, another CA's,
// an agent certificate used for another id, roles for CLI users, the CLI itself over
// TLS, and no plaintext TCP (loopback included) without --insecure.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "blkbench/v1/agent.grpc.pb.h"
#include "blkbench/v1/controller.grpc.pb.h"
#include "common/http/http_get.h"
#include "common/testing/command.h"
#include "common/testing/lab_pki.h"
#include "common/tls/credentials.h"
#include "common/tls/pki.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_cluster.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using tls::Kind;
using tls::Role;

constexpr char kMatrix[] = R"(name: tls
job: {rw: randread, bs: 4k, iodepth: 4, ioengine: io_uring, runtime: 1s, time_based: 1}
target: {device_class: sim:null_blk}
)";

class TlsTest : public testing::ClusterTest {
 protected:
  TlsTest() : ClusterTest("tls_test") {}

  void SetUp() override {
    pki_ = dir_.File("pki");
    using testing::Cert;
    ASSERT_TRUE(
        testing::MakeLabPki(
            pki_, {Cert(Kind::kController, "controller"), Cert(Kind::kAgent, "lab-1"),
                   Cert(Kind::kAgent, "lab-2"), Cert(Kind::kCli, "reader", Role::kRead),
                   Cert(Kind::kCli, "alice", Role::kSubmit), Cert(Kind::kCli, "bob", Role::kSubmit),
                   Cert(Kind::kCli, "root", Role::kAdmin)})
            .ok());
    ServerOptions opts = ServerDefaults();
    opts.tls_dir = pki_;
    ASSERT_NO_FATAL_FAILURE(StartController(opts));
  }

  std::shared_ptr<grpc::Channel> Channel(const std::string& stem, const std::string& pki = "") {
    auto creds = tls::ChannelCredentialsFromDir(pki.empty() ? pki_ : pki, stem);
    EXPECT_TRUE(creds.ok()) << creds.status();
    return grpc::CreateChannel(ControllerAddress(), *creds);
  }
  std::unique_ptr<v1::ControllerService::Stub> Cli(const std::string& user) {
    return v1::ControllerService::NewStub(Channel("cli-" + user));
  }
  static grpc::Status Submit(v1::ControllerService::Stub& stub, v1::Experiment* out) {
    grpc::ClientContext ctx;
    v1::SubmitExperimentRequest req;
    req.set_file_name("tls.yaml");
    req.set_matrix_text(kMatrix);
    return stub.SubmitExperiment(&ctx, req, out);
  }
  static grpc::Status Cancel(v1::ControllerService::Stub& stub, uint64_t id) {
    grpc::ClientContext ctx;
    v1::CancelExperimentRequest req;
    req.set_id(id);
    v1::Experiment e;
    return stub.CancelExperiment(&ctx, req, &e);
  }
  // Opens AgentService.Connect on `channel`, registers as `agent_id`, and returns the
  // stream's final status (the controller ends it on a refusal).
  static grpc::Status RegisterAs(const std::shared_ptr<grpc::Channel>& channel,
                                 const std::string& agent_id) {
    auto stub = v1::AgentService::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    auto stream = stub->Connect(&ctx);
    v1::AgentMessage reg;
    reg.mutable_register_()->set_agent_id(agent_id);
    reg.mutable_register_()->set_instance_id("test");
    stream->Write(reg);
    v1::ControllerMessage msg;
    if (stream->Read(&msg) && msg.has_registered()) {
      ctx.TryCancel();  // accepted
      stream->Finish();
      return grpc::Status::OK;
    }
    return stream->Finish();
  }

  std::string pki_;
};

TEST_F(TlsTest, AnAgentWithItsCertificateRegistersAndRuns) {
  AgentConfig config;
  config.agent_id = "lab-1";
  config.sim_devices = {"sim:null_blk"};
  config.state_dir = dir_.File("agent-state");
  config.controller = ControllerAddress();
  config.tls_dir = pki_;
  testing::AgentProcess agent(config);
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE(agent.agent().WaitConnected(true, absl::Seconds(30)));
  v1::Experiment exp;
  ASSERT_TRUE(Submit(*Cli("alice"), &exp).ok());
  v1::Experiment done = WaitForEndWithProgress(exp.id(), absl::Minutes(2));
  EXPECT_EQ(done.state(), v1::EXPERIMENT_DONE) << done.error();
  EXPECT_EQ(done.submitted_by(), "alice");
  EXPECT_EQ(done.runs(0).agent_id(), "lab-1");
}

// Revocation by serial (<tls_dir>/revoked.txt, `blkbench tls cert revoke`), taking effect
// on the next call of a running controller, for agents and CLI users alike.
TEST_F(TlsTest, RevokedCertificatesAreRefusedOnTheNextCall) {
  auto alice = Cli("alice");
  v1::Experiment exp;
  ASSERT_TRUE(Submit(*alice, &exp).ok());
  ASSERT_TRUE(RegisterAs(Channel("agent-lab-2"), "lab-2").ok());
  auto alice_pem = tls::ReadPemFile(pki_ + "/cli-alice.pem", "alice's certificate");
  ASSERT_TRUE(alice_pem.ok());
  auto alice_serial = tls::CertSerialHex(*alice_pem);
  ASSERT_TRUE(alice_serial.ok());
  ASSERT_TRUE(tls::AppendRevoked(pki_ + "/revoked.txt", *alice_serial, "cli alice").ok());
  auto agent_pem = tls::ReadPemFile(pki_ + "/agent-lab-2.pem", "agent certificate");
  ASSERT_TRUE(agent_pem.ok());
  auto agent_serial = tls::CertSerialHex(*agent_pem);
  ASSERT_TRUE(agent_serial.ok());
  ASSERT_TRUE(tls::AppendRevoked(pki_ + "/revoked.txt", *agent_serial, "agent lab-2").ok());

  v1::Experiment again;
  grpc::Status refused = Submit(*alice, &again);  // the same channel, already connected
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(refused.error_message(), HasSubstr("revoked"));
  grpc::Status agent = RegisterAs(Channel("agent-lab-2"), "lab-2");
  EXPECT_EQ(agent.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(agent.error_message(), HasSubstr(*agent_serial));
  // Others are unaffected; the experiment alice submitted before is still there.
  EXPECT_TRUE(Cancel(*Cli("root"), exp.id()).ok());
}

TEST_F(TlsTest, AgentsWithoutTheRightCertificateAreRefused) {
  // A certificate for lab-2 registering as lab-1.
  grpc::Status as_other = RegisterAs(Channel("agent-lab-2"), "lab-1");
  EXPECT_EQ(as_other.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(as_other.error_message(), HasSubstr("agent lab-2"));
  // A CLI user's certificate is not an agent's.
  EXPECT_EQ(RegisterAs(Channel("cli-root"), "lab-1").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Another CA's certificate: the handshake fails.
  const std::string other = dir_.File("other-pki");
  ASSERT_TRUE(testing::MakeLabPki(other, {testing::Cert(Kind::kAgent, "lab-1")}).ok());
  grpc::SslCredentialsOptions mixed;  // trusts our controller, presents the other CA's cert
  std::ifstream ca(pki_ + "/ca.pem"), cert(other + "/agent-lab-1.pem"),
      key(other + "/agent-lab-1.key");
  mixed.pem_root_certs.assign(std::istreambuf_iterator<char>(ca), {});
  mixed.pem_cert_chain.assign(std::istreambuf_iterator<char>(cert), {});
  mixed.pem_private_key.assign(std::istreambuf_iterator<char>(key), {});
  EXPECT_FALSE(
      RegisterAs(grpc::CreateChannel(ControllerAddress(), grpc::SslCredentials(mixed)), "lab-1")
          .ok());
  // No client certificate at all.
  grpc::SslCredentialsOptions anonymous;
  anonymous.pem_root_certs = mixed.pem_root_certs;
  EXPECT_FALSE(
      RegisterAs(grpc::CreateChannel(ControllerAddress(), grpc::SslCredentials(anonymous)), "lab-1")
          .ok());
  // Plaintext on the TLS port.
  EXPECT_FALSE(
      RegisterAs(grpc::CreateChannel(ControllerAddress(), grpc::InsecureChannelCredentials()),
                 "lab-1")
          .ok());
  // None of it registered anything.
  EXPECT_TRUE(controller().ListAgents()->empty());
  // The genuine certificate does.
  EXPECT_TRUE(RegisterAs(Channel("agent-lab-1"), "lab-1").ok());
}

TEST_F(TlsTest, RolesDecideWhoMaySubmitAndCancelWhat) {
  v1::Experiment exp;
  grpc::Status read_submit = Submit(*Cli("reader"), &exp);
  EXPECT_EQ(read_submit.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(read_submit.error_message(), HasSubstr("cli reader (read) may not submit"));
  {
    grpc::ClientContext ctx;
    v1::ListExperimentsResponse list;
    EXPECT_TRUE(Cli("reader")->ListExperiments(&ctx, v1::ListExperimentsRequest(), &list).ok());
  }
  // An agent's certificate is no CLI user's.
  {
    auto agent_stub = v1::ControllerService::NewStub(Channel("agent-lab-1"));
    grpc::ClientContext ctx;
    v1::ListExperimentsResponse list;
    EXPECT_EQ(agent_stub->ListExperiments(&ctx, v1::ListExperimentsRequest(), &list).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  v1::Experiment alices, bobs;
  ASSERT_TRUE(Submit(*Cli("alice"), &alices).ok());
  ASSERT_TRUE(Submit(*Cli("bob"), &bobs).ok());
  EXPECT_EQ(alices.submitted_by(), "alice");
  grpc::Status not_hers = Cancel(*Cli("alice"), bobs.id());
  EXPECT_EQ(not_hers.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(not_hers.error_message(), HasSubstr("of bob"));
  EXPECT_EQ(Cancel(*Cli("reader"), alices.id()).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Cancel(*Cli("alice"), alices.id()).ok());
  EXPECT_TRUE(Cancel(*Cli("root"), bobs.id()).ok());  // an admin cancels anyone's
  EXPECT_EQ(controller().GetExperiment(bobs.id(), false)->canceled_by(), "root");
  // Lease ids are for agents: a reader never sees them.
  {
    grpc::ClientContext ctx;
    v1::GetExperimentRequest req;
    req.set_id(alices.id());
    v1::Experiment seen;
    ASSERT_TRUE(Cli("reader")->GetExperiment(&ctx, req, &seen).ok());
    for (const v1::Run& r : seen.runs()) EXPECT_TRUE(r.lease_id().empty());
  }
}

TEST_F(TlsTest, TheCliDialsWithItsCertificate) {
  const char* build = getenv("BLKBENCH_BUILD_DIR");
  const std::string cli = std::string(build ? build : ".") + "/cli/blkbench";
  if (access(cli.c_str(), X_OK) != 0) GTEST_SKIP() << "CLI not built";
  std::ofstream(dir_.File("tls.yaml")) << kMatrix;
  testing::CommandResult submit =
      testing::Run({cli, "--controller", ControllerAddress(), "--tls_dir", pki_, "--tls_cert",
                    "alice", "submit", dir_.File("tls.yaml")});
  EXPECT_EQ(submit.exit_code, 0) << submit.output;
  testing::CommandResult plain = testing::Run({cli, "--controller", ControllerAddress(), "list"});
  EXPECT_NE(plain.exit_code, 0) << "plaintext to a TLS controller must fail";
  testing::CommandResult ambiguous =
      testing::Run({cli, "--controller", ControllerAddress(), "--tls_dir", pki_, "list"});
  EXPECT_NE(ambiguous.exit_code, 0);
  EXPECT_THAT(ambiguous.output, HasSubstr("--tls_cert"));
  // `tls cert revoke` puts bob's serial on the list the running controller reads.
  testing::CommandResult revoke =
      testing::Run({cli, "tls", "cert", "revoke", "--dir", pki_, "--cert", pki_ + "/cli-bob.pem"});
  EXPECT_EQ(revoke.exit_code, 0) << revoke.output;
  EXPECT_THAT(revoke.output, HasSubstr("cli bob (submit)"));
  testing::CommandResult bob = testing::Run(
      {cli, "--controller", ControllerAddress(), "--tls_dir", pki_, "--tls_cert", "bob", "list"});
  EXPECT_NE(bob.exit_code, 0);
  EXPECT_THAT(bob.output, HasSubstr("revoked"));
}

// docs/security.md's four commands make a PKI the controller and agents accept (the
// other tests use the same library calls); mistakes are refused with a reason.
TEST(TlsCliTest, TheFourCommandsOfTheDocsMakeALabPki) {
  const char* build = getenv("BLKBENCH_BUILD_DIR");
  const std::string cli = std::string(build ? build : ".") + "/cli/blkbench";
  if (access(cli.c_str(), X_OK) != 0) GTEST_SKIP() << "CLI not built";
  testing::TempDir dir("tls_test");
  const std::string pki = dir.File("lab-pki");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"ca", "create", "--dir", pki},
        {"cert", "create", "--dir", pki, "--controller", "controller.lab.example"},
        {"cert", "create", "--dir", pki, "--agent", "testbox-17", "--dns",
         "testbox-17.lab.example"},
        {"cert", "create", "--dir", pki, "--cli", "alice", "--role", "submit"},
        {"token", "create", "--dir", pki}}) {
    std::vector<std::string> argv = {cli, "tls"};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::CommandResult r = testing::Run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  EXPECT_TRUE(tls::ServerCredentialsFromDir(pki).ok());
  EXPECT_TRUE(tls::ChannelCredentialsFromDir(pki, "agent-testbox-17").ok());
  // The names the docs give are in the certificates, and the agent's may serve HTTPS.
  testing::CommandResult text =
      testing::Run({"openssl", "x509", "-noout", "-text", "-in", pki + "/controller.pem"});
  EXPECT_THAT(text.output, HasSubstr("DNS:controller.lab.example"));
  text = testing::Run({"openssl", "x509", "-noout", "-text", "-in", pki + "/agent-testbox-17.pem"});
  EXPECT_THAT(text.output, HasSubstr("DNS:testbox-17.lab.example"));
  EXPECT_THAT(text.output, HasSubstr("TLS Web Server Authentication"));
  struct stat token;
  ASSERT_EQ(stat((pki + "/metrics.token").c_str(), &token), 0);
  EXPECT_EQ(token.st_mode & 0777, 0640u);
  EXPECT_EQ(token.st_size, 65);  // 32 random bytes in hex and a newline
  testing::CommandResult no_role =
      testing::Run({cli, "tls", "cert", "create", "--dir", pki, "--cli", "bob"});
  EXPECT_EQ(no_role.exit_code, 2);
  EXPECT_THAT(no_role.output, HasSubstr("--role"));
  testing::CommandResult again =
      testing::Run({cli, "tls", "cert", "create", "--dir", pki, "--agent", "testbox-17"});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.output, HasSubstr("already exists"));
  testing::CommandResult bad_name =
      testing::Run({cli, "tls", "cert", "create", "--dir", pki, "--agent", "../etc"});
  EXPECT_EQ(bad_name.exit_code, 2);
}

TEST(ControllerListenTest, NoPlaintextTcpWithoutInsecure) {
  testing::TempDir dir("tls_test");
  SystemClock clock;
  ServerOptions opts;
  opts.db_path = dir.File("db.sqlite");
  // Loopback too: on it every local user would be admin.
  opts.listen = "127.0.0.1:0";
  auto loopback = ControllerServer::Start(opts, clock);
  ASSERT_FALSE(loopback.ok());
  EXPECT_THAT(std::string(loopback.status().message()), HasSubstr("every local user"));
  EXPECT_THAT(std::string(loopback.status().message()), HasSubstr("--insecure"));
  opts.listen = "0.0.0.0:0";
  auto refused = ControllerServer::Start(opts, clock);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--tls_dir"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--insecure"));
  opts.insecure = true;
  opts.metrics.listen = "127.0.0.1:0";
  auto insecure = ControllerServer::Start(opts, clock);
  ASSERT_TRUE(insecure.ok()) << insecure.status();
  // And it says so where an operator looks.
  auto metrics = HttpGet((*insecure)->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(metrics->body, HasSubstr("blkbench_controller_insecure 1"));
  EXPECT_THAT(metrics->body, HasSubstr("grpc=\"plaintext_insecure\""));
}

// Oversize requests get a clear status from the transport, oversize matrices and too
// many runs from the controller; nothing is stored.
TEST(ControllerLimitsTest, OversizeRequestsAndMatricesAreRefusedWithAClearStatus) {
  testing::TempDir dir("tls_test");
  SystemClock clock;
  ServerOptions opts;
  opts.listen = "127.0.0.1:0";
  opts.insecure = true;
  opts.db_path = dir.File("db.sqlite");
  auto server = ControllerServer::Start(opts, clock);
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = v1::ControllerService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", (*server)->port()), grpc::InsecureChannelCredentials()));
  auto submit = [&](const std::string& text) {
    grpc::ClientContext ctx;
    v1::SubmitExperimentRequest req;
    req.set_file_name("big.yaml");
    req.set_matrix_text(text);
    v1::Experiment e;
    return stub->SubmitExperiment(&ctx, req, &e);
  };
  grpc::Status huge = submit(std::string(9 << 20, '#'));
  EXPECT_EQ(huge.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << huge.error_message();
  grpc::Status big = submit(std::string(5 << 20, '#'));
  EXPECT_EQ(big.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(big.error_message(), HasSubstr("at most 4194304"));
  // 100 cells x 1000 repeats: a 200-byte file asking for 100 000 runs and more.
  std::string many = "name: many\nrepeats: 1000\njob: {rw: randread}\nmatrix:\n  iodepth: [";
  for (int i = 1; i <= 101; ++i) absl::StrAppend(&many, i == 1 ? "" : ", ", i);
  many += "]\ntarget: {device_class: sim:null_blk}\n";
  grpc::Status too_many = submit(many);
  EXPECT_EQ(too_many.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(too_many.error_message(), HasSubstr("101000 runs"));
  // The one-byte matrix that made yaml-cpp allocate until the OOM killer came: a
  // positioned error, and the controller still answers.
  grpc::Status comma = submit(",");
  EXPECT_EQ(comma.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(comma.error_message(), HasSubstr("big.yaml:1:1: YAML syntax error"));
  // A machine path is never opened by the controller: without the file the CLI attaches,
  // it is refused, whatever it names.
  grpc::Status shadow = submit(
      "name: s\njob: {rw: randread}\ntarget: {device_class: 'sim:ssd', machine: /etc/shadow}\n");
  EXPECT_EQ(shadow.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(shadow.error_message(),
              HasSubstr("machine profile file '/etc/shadow' was not sent with the matrix"));
  EXPECT_TRUE((*server)->controller().ListExperiments(0)->empty());
}

}  // namespace
}  // namespace blkbench
