// Roles on the controller's Unix socket from peer credentials: a real server on a real
// socket, and the real `blkbench` CLI run as another user (`nobody`) in a child process.
#include "controller/local_socket.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "blkbench/v1/controller.grpc.pb.h"
#include "common/clock.h"
#include "common/testing/loop_device.h"
#include "controller/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

constexpr char kMatrix[] = R"(name: peercred-check
job: {rw: randread, bs: 4k, iodepth: 4, ioengine: io_uring, runtime: 1s, time_based: 1}
target: {device_class: sim:null_blk}
)";

TEST(IsLocalAdminTest, RootTheServersUserAndTheGroupAreAdmin) {
  EXPECT_TRUE(IsLocalAdmin(0, 0, 1000, std::nullopt));
  EXPECT_TRUE(IsLocalAdmin(1000, 1000, 1000, std::nullopt));  // the controller's own user
  EXPECT_FALSE(IsLocalAdmin(kNobody, kNogroup, 0, std::nullopt));
  EXPECT_TRUE(IsLocalAdmin(kNobody, kNogroup, 0, kNogroup));  // primary group
  EXPECT_FALSE(IsLocalAdmin(kNobody, kNogroup, 0, 4242));     // another group
}

struct Outcome {
  int exit_code = -1;
  std::string output;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Starts argv as `nobody` (no supplementary groups) with stdout and stderr in `log`.
pid_t SpawnAsNobody(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec: the parent runs gRPC threads.
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(126);
    if (setgroups(0, nullptr) != 0 || setgid(kNogroup) != 0 || setuid(kNobody) != 0) _exit(125);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// Runs argv as `nobody` to the end.
Outcome RunAsNobody(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = SpawnAsNobody(argv, log);
  Outcome o;
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    o.exit_code = WEXITSTATUS(status);
  }
  o.output = ReadFile(log);
  return o;
}

class LocalSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (to run a client as nobody)";
    const char* build = getenv("BLKBENCH_BUILD_DIR");
    cli_ = std::string(build ? build : ".") + "/cli/blkbench";
    if (access(cli_.c_str(), X_OK) != 0) GTEST_SKIP() << "CLI not built";
    // nobody must reach the socket and read the matrix; the role is the server's call.
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
    std::ofstream(dir_.File("m.yaml")) << kMatrix;
    ServerOptions opts;
    opts.unix_socket = dir_.File("c.sock");
    opts.db_path = dir_.File("db.sqlite");
    auto server = ControllerServer::Start(opts, clock_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = v1::ControllerService::NewStub(
        grpc::CreateChannel("unix:" + opts.unix_socket, grpc::InsecureChannelCredentials()));
  }

  std::vector<std::string> Cli(std::vector<std::string> args) const {
    args.insert(args.begin(), {cli_, "--controller", "unix:" + dir_.File("c.sock")});
    return args;
  }

  testing::TempDir dir_{"local_socket_test"};
  SystemClock clock_;
  std::string cli_;
  std::unique_ptr<ControllerServer> server_;
  std::unique_ptr<v1::ControllerService::Stub> stub_;
};

TEST_F(LocalSocketTest, AnotherLocalUserMayReadButNotSubmitOrCancel) {
  struct stat st;
  ASSERT_EQ(stat(dir_.File("c.sock").c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  // Root (this process) is admin: it submits.
  grpc::ClientContext submit_ctx;
  v1::SubmitExperimentRequest submit;
  submit.set_file_name("m.yaml");
  submit.set_matrix_text(kMatrix);
  v1::Experiment exp;
  grpc::Status submitted = stub_->SubmitExperiment(&submit_ctx, submit, &exp);
  ASSERT_TRUE(submitted.ok()) << submitted.error_message();
  const std::string id = std::to_string(exp.id());

  const Outcome list = RunAsNobody(Cli({"list"}), dir_.File("list.log"));
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_THAT(list.output, HasSubstr("peercred-check"));  // reading is allowed

  const Outcome cancel = RunAsNobody(Cli({"cancel", id}), dir_.File("cancel.log"));
  EXPECT_NE(cancel.exit_code, 0) << cancel.output;
  EXPECT_THAT(cancel.output, HasSubstr("local user (read) may not"));
  EXPECT_THAT(cancel.output, HasSubstr("blkbench group"));

  const Outcome other = RunAsNobody(Cli({"submit", dir_.File("m.yaml")}), dir_.File("sub.log"));
  EXPECT_NE(other.exit_code, 0) << other.output;
  EXPECT_THAT(other.output, HasSubstr("may not"));

  // Nothing changed: still one experiment, not canceled; root may cancel it.
  grpc::ClientContext get_ctx;
  v1::GetExperimentRequest get;
  get.set_id(exp.id());
  v1::Experiment now;
  ASSERT_TRUE(stub_->GetExperiment(&get_ctx, get, &now).ok());
  EXPECT_NE(now.state(), v1::EXPERIMENT_CANCELED);
  grpc::ClientContext list_ctx;
  v1::ListExperimentsRequest all;
  v1::ListExperimentsResponse listed;
  ASSERT_TRUE(stub_->ListExperiments(&list_ctx, all, &listed).ok());
  EXPECT_EQ(listed.experiments_size(), 1);
  grpc::ClientContext cancel_ctx;
  v1::CancelExperimentRequest cancel_req;
  cancel_req.set_id(exp.id());
  v1::Experiment canceled;
  grpc::Status root_cancel = stub_->CancelExperiment(&cancel_ctx, cancel_req, &canceled);
  EXPECT_TRUE(root_cancel.ok()) << root_cancel.error_message();
  EXPECT_EQ(canceled.state(), v1::EXPERIMENT_CANCELED);
}

TEST_F(LocalSocketTest, AnotherLocalUserCannotRegisterAnAgent) {
  const char* build = getenv("BLKBENCH_BUILD_DIR");
  const std::string agent = std::string(build ? build : ".") + "/agent/blkbench-agent";
  if (access(agent.c_str(), X_OK) != 0) GTEST_SKIP() << "agent not built";
  // A real agent run by nobody: it may connect, but not take runs as an agent.
  const std::string state = dir_.File("agent-state");
  ASSERT_EQ(mkdir(state.c_str(), 0700), 0);
  ASSERT_EQ(chown(state.c_str(), kNobody, kNogroup), 0);
  std::ofstream(dir_.File("agent.yaml"))
      << "controller: unix:" << dir_.File("c.sock") << "\nagent_id: impostor\nstate_dir: " << state
      << "\nmetrics_listen: \"\"\nsim_devices: [sim:null_blk]\n";
  const std::string log = dir_.File("agent.log");
  const pid_t pid = SpawnAsNobody({agent, "--config", dir_.File("agent.yaml")}, log);
  ASSERT_GT(pid, 0);
  std::string text;
  for (int i = 0; i < 100 && !absl::StrContains(text, "may not register agents"); ++i) {
    usleep(100'000);  // waiting for a child daemon's first session, not synchronising
    text = ReadFile(log);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_THAT(text, HasSubstr("local user (read) may not register agents")) << text;
  grpc::ClientContext ctx;
  v1::ListAgentsRequest req;
  v1::ListAgentsResponse agents;
  ASSERT_TRUE(stub_->ListAgents(&ctx, req, &agents).ok());
  EXPECT_EQ(agents.agents_size(), 0);
}

TEST_F(LocalSocketTest, AStaleSocketIsReplacedButALiveOneAndOtherFilesAreNot) {
  ServerOptions opts;
  opts.unix_socket = dir_.File("c.sock");  // the fixture's live server
  opts.db_path = dir_.File("db2.sqlite");
  auto second = ControllerServer::Start(opts, clock_);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("another server"));
  // A socket file nobody answers on (a controller that was SIGKILLed) is replaced.
  {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string stale = dir_.File("stale.sock");
    memcpy(addr.sun_path, stale.c_str(), stale.size());
    ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
    close(fd);
    opts.unix_socket = stale;
    auto replaced = ControllerServer::Start(opts, clock_);
    ASSERT_TRUE(replaced.ok()) << replaced.status();
  }
  std::ofstream(dir_.File("plain")) << "x";
  opts.unix_socket = dir_.File("plain");
  auto file = ControllerServer::Start(opts, clock_);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("not a socket"));
}

}  // namespace
}  // namespace blkbench
