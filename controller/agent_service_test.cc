// AgentServiceImpl's write side and lifetime, over real gRPC on loopback with a real
// SQLite store: Sends racing the agent's departure, a Send after the stream's reactor is
// gone, and the write-queue bound against an agent that stops reading. Every wait is on
// state (a reply, a status, the controller's change counter) with a bound.
#include "controller/agent_service.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "controller/store/sqlite_store.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

class AgentStreamTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (server_) server_->Shutdown();
    service_.reset();
    controller_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Start(const ServiceLimits& limits) {
    dir_ = std::filesystem::temp_directory_path() /
           ("agent_service_test." + std::to_string(getpid()) + "." +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto store = SqliteStore::Open((dir_ / "db.sqlite").string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    controller_ = std::make_unique<Controller>(*store_, clock_, ControllerOptions());
    ASSERT_TRUE(controller_->Start().ok());
    service_ = std::make_unique<AgentServiceImpl>(*controller_, clock_, limits, nullptr);
    service_->SetLinkHookForTest([this](const std::string& id, std::shared_ptr<AgentLink> link) {
      absl::MutexLock lock(&mu_);
      links_[id] = std::move(link);
    });
    grpc::ServerBuilder builder;
    builder.SetMaxSendMessageSize(64 << 20);
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_ != nullptr && port_ != 0);
  }

  // A channel of its own; BDP probing off, so an agent that stops reading grants the
  // controller no more than HTTP/2's initial 64 KiB window.
  std::unique_ptr<v1::AgentService::Stub> Stub(int index) {
    grpc::ChannelArguments args;
    args.SetInt("blkbench.test.connection", index);
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    args.SetMaxReceiveMessageSize(64 << 20);
    return v1::AgentService::NewStub(grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials(), args));
  }

  using ClientStream = grpc::ClientReaderWriter<v1::AgentMessage, v1::ControllerMessage>;
  // Registers `id` on a new stream and reads its Registered reply.
  static std::unique_ptr<ClientStream> Register(v1::AgentService::Stub& stub,
                                                grpc::ClientContext& ctx, const std::string& id) {
    auto stream = stub.Connect(&ctx);
    v1::AgentMessage reg;
    reg.mutable_register_()->set_agent_id(id);
    EXPECT_TRUE(stream->Write(reg));
    v1::ControllerMessage reply;
    EXPECT_TRUE(stream->Read(&reply));
    EXPECT_TRUE(reply.has_registered());
    return stream;
  }

  // The link the service handed the controller for `id` (known before Registered is sent).
  std::shared_ptr<AgentLink> LinkOf(const std::string& id) {
    absl::MutexLock lock(&mu_);
    auto it = links_.find(id);
    return it == links_.end() ? nullptr : it->second;
  }

  // Waits (on the controller's change counter, bounded) until `id` is listed as not
  // connected.
  bool WaitDisconnected(const std::string& id) {
    uint64_t seen = 0;
    const absl::Time give_up = absl::Now() + absl::Seconds(60);
    while (absl::Now() < give_up) {
      auto agents = controller_->ListAgents();
      if (agents.ok()) {
        for (const v1::AgentInfo& a : *agents) {
          if (a.agent_id() == id && !a.connected()) return true;
        }
      }
      seen = controller_->WaitForChange(seen, absl::Milliseconds(200));
    }
    return false;
  }

  static v1::ControllerMessage Renewed(uint64_t seq) {
    v1::ControllerMessage m;
    m.mutable_renewed()->set_seq(seq);
    return m;
  }

  SystemClock clock_;
  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Controller> controller_;
  std::unique_ptr<AgentServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<AgentLink>> links_ ABSL_GUARDED_BY(mu_);
};

// Four threads send (up to 20,000 each) while the agent half-closes and drains: every
// message a Send took reaches the agent before the stream ends, a Send after the end is
// false, and after the server is shut down (every reactor deleted) the link still
// answers, with false.
TEST_F(AgentStreamTest, SendsRacingTheAgentsDepartureEndFalseAndOutliveTheStream) {
  ServiceLimits limits;
  // Above what the senders can queue (4 x 20,000): the stream ends by the agent leaving,
  // never by the queue bound.
  limits.agent_write_queue = 100'000;
  ASSERT_NO_FATAL_FAILURE(Start(limits));
  auto stub = Stub(0);
  grpc::ClientContext ctx;
  auto stream = Register(*stub, ctx, "leaving");
  std::shared_ptr<AgentLink> link = LinkOf("leaving");
  ASSERT_NE(link, nullptr);
  constexpr uint64_t kPerSender = 20'000;
  std::vector<std::thread> senders;
  senders.reserve(4);
  std::vector<uint64_t> sent(4, 0);
  for (int t = 0; t < 4; ++t) {
    senders.emplace_back([&, t] {
      while (sent[t] < kPerSender && link->Send(Renewed(sent[t] + 1))) ++sent[t];
    });
  }
  v1::ControllerMessage got;
  uint64_t read = 0;
  while (read < 10 && stream->Read(&got)) ++read;  // senders are running
  EXPECT_EQ(read, 10u);
  stream->WritesDone();
  while (stream->Read(&got)) ++read;
  const grpc::Status st = stream->Finish();
  for (std::thread& t : senders) t.join();
  uint64_t total = 0;
  for (uint64_t n : sent) total += n;
  // Everything a Send took reached the agent before the stream ended.
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(read, total);
  EXPECT_EQ(service_->write_overflows(), 0u);
  EXPECT_FALSE(link->Send(Renewed(1)));
  ASSERT_TRUE(WaitDisconnected("leaving"));
  server_->Shutdown();  // waits for every reactor's OnDone
  EXPECT_FALSE(link->Send(Renewed(2)));
  EXPECT_NE(link->Peer(), "");
  EXPECT_EQ(service_->stream_slots().in_use(), 0);
}

// An agent that stops reading: a 256 KiB message cannot pass its 64 KiB window, so it
// stays in flight; agent_write_queue more wait behind it; the next Send ends the
// stream (false, and false from then on), the agent sees the stream cancelled and the
// controller sees it disconnect.
TEST_F(AgentStreamTest, AStreamWhoseAgentStopsReadingIsEndedAtTheQueueBound) {
  ServiceLimits limits;
  limits.agent_write_queue = 4;
  ASSERT_NO_FATAL_FAILURE(Start(limits));
  auto stub = Stub(1);
  grpc::ClientContext ctx;
  auto stream = Register(*stub, ctx, "deaf");
  std::shared_ptr<AgentLink> link = LinkOf("deaf");
  ASSERT_NE(link, nullptr);
  v1::ControllerMessage big;
  big.mutable_cancel()->set_reason(std::string(256 << 10, 'x'));
  // One in flight and four waiting are taken, the sixth is refused. Registered may still
  // be in flight (the agent read it before gRPC reported the write done); then it holds
  // the first place and four are taken.
  int taken = 0;
  while (taken < 100 && link->Send(big)) ++taken;
  EXPECT_GE(taken, limits.agent_write_queue);
  EXPECT_LE(taken, limits.agent_write_queue + 1);
  EXPECT_FALSE(link->Send(big));
  EXPECT_FALSE(link->Send(Renewed(1)));
  ASSERT_TRUE(WaitDisconnected("deaf"));
  EXPECT_EQ(service_->write_overflows(), 1u);
  // The agent reads what got through and then the end.
  v1::ControllerMessage got;
  while (stream->Read(&got)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // A healthy agent on the same service is not affected.
  grpc::ClientContext ok_ctx;
  auto ok_stream = Register(*stub, ok_ctx, "reader");
  std::shared_ptr<AgentLink> ok_link = LinkOf("reader");
  ASSERT_NE(ok_link, nullptr);
  for (uint64_t seq = 1; seq <= 100; ++seq) {
    ASSERT_TRUE(ok_link->Send(Renewed(seq)));
    ASSERT_TRUE(ok_stream->Read(&got));
    EXPECT_EQ(got.renewed().seq(), seq);
  }
  ok_stream->WritesDone();
  EXPECT_FALSE(ok_stream->Read(&got));
  EXPECT_TRUE(ok_stream->Finish().ok());
}

}  // namespace
}  // namespace blkbench
