// Limits on what a client can make the controller do (docs/security.md "Limits"), each
// against a real gRPC server on loopback: caps on agent and watch streams, the thread
// cap, unary deadlines, the agent message rate, idle and handshake timeouts, and
// INVALID_ARGUMENT for malformed protobuf. Timings come from small configured values
// and a FakeClock; every wait is on state (a reply, a status, a counter) with a bound.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

#include "absl/synchronization/notification.h"
#include "blkbench/v1/agent.grpc.pb.h"
#include "blkbench/v1/controller.grpc.pb.h"
#include "controller/store/store_wrapper.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/limits_test_util.h"
#include "tests/test_cluster.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using testing::RawAgent;

constexpr char kSimMatrix[] = R"(name: limits
repeats: 3
job: {rw: randread, bs: 4k, iodepth: 4, ioengine: io_uring, runtime: 300ms, time_based: 1}
target: {device_class: sim:null_blk}
)";

class LimitsTest : public testing::ClusterTest {
 protected:
  LimitsTest() : ClusterTest("limits_test") {}
  void SetUp() override {}  // each test starts the controller it needs
  // The server's ticker reads the clock it was started on: stop it while that clock
  // (fake_, a member of this class, not of the base) still exists.
  void TearDown() override { server_.reset(); }

  // Starts server_ with `limits` on `clock` (the fixture's SystemClock by default); a
  // clock passed here must outlive the test body (use fake_).
  void Start(const ServiceLimits& limits, Clock* clock = nullptr,
             std::function<std::unique_ptr<Store>(std::unique_ptr<Store>)> wrap = nullptr) {
    ServerOptions opts = ServerDefaults();
    opts.limits = limits;
    opts.wrap_store = std::move(wrap);
    auto server = ControllerServer::Start(opts, clock != nullptr ? *clock : clock_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  std::unique_ptr<v1::ControllerService::Stub> Cli() {
    return v1::ControllerService::NewStub(
        grpc::CreateChannel(ControllerAddress(), grpc::InsecureChannelCredentials()));
  }
  // A watch of experiment `id` on `ctx`, and whether it was admitted: its first event
  // arrived, so its handler now holds a thread (a refused one ends with no event).
  struct Watch {
    std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader;
    bool admitted = false;
  };
  static Watch OpenWatch(v1::ControllerService::Stub& cli, grpc::ClientContext& ctx, uint64_t id) {
    v1::WatchExperimentRequest req;
    req.set_id(id);
    Watch w;
    w.reader = cli.WatchExperiment(&ctx, req);
    v1::WatchEvent ev;
    w.admitted = w.reader->Read(&ev);
    return w;
  }
  FakeClock fake_;  // moves only when a test says
};

TEST_F(LimitsTest, StreamsBeyondTheCapsAreRefusedUntilOneCloses) {
  ServiceLimits limits;
  limits.max_agent_streams = 3;
  limits.max_watch_streams = 1;
  ASSERT_NO_FATAL_FAILURE(Start(limits));
  std::vector<std::unique_ptr<RawAgent>> agents;
  agents.reserve(5);
  // A RawAgent opens its stream when made, and the slot goes to whichever stream reaches
  // the controller first: make the refused two only once the first three are admitted.
  for (int i = 0; i < 3; ++i) {
    agents.push_back(std::make_unique<RawAgent>(ControllerAddress(), i));
    const grpc::Status admitted = agents[i]->Register(absl::StrCat("a", i));
    ASSERT_TRUE(admitted.ok()) << i << ": " << admitted.error_message();
  }
  for (int i = 3; i < 5; ++i) {
    agents.push_back(std::make_unique<RawAgent>(ControllerAddress(), i));
    const grpc::Status refused = agents[i]->Register(absl::StrCat("a", i));
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << i;
    EXPECT_EQ(refused.error_message(),
              "controller serves at most 3 agent streams (--max_agent_streams); try again later");
  }
  EXPECT_EQ(server_->agent_service().stream_slots().refused(), 2u);
  // The handler returns (and frees its slot) before the client sees the status.
  EXPECT_TRUE(agents[0]->Close().ok());
  RawAgent again(ControllerAddress(), 5);
  EXPECT_TRUE(again.Register("a0").ok());
  EXPECT_EQ(server_->agent_service().stream_slots().in_use(), 3);

  // Watches have their own cap.
  auto exp = server_->controller().Submit("w.yaml", kSimMatrix);
  ASSERT_TRUE(exp.ok()) << exp.status();
  auto cli = Cli();
  grpc::ClientContext first_ctx, second_ctx;
  Watch first = OpenWatch(*cli, first_ctx, exp->id());
  ASSERT_TRUE(first.admitted);
  Watch second = OpenWatch(*cli, second_ctx, exp->id());
  EXPECT_FALSE(second.admitted);
  const grpc::Status watch = second.reader->Finish();
  EXPECT_EQ(watch.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(watch.error_message(), HasSubstr("at most 1 watch streams (--max_watch_streams)"));
  first_ctx.TryCancel();
  first.reader->Finish();
}

// Watches at their cap hold cap threads (agent streams hold none: they are on the
// callback API); the sync server answers a call it has no thread for with a bare
// RESOURCE_EXHAUSTED (which the request-checks interceptor words). With unary_threads = 0
// the watches starve unary calls; with 1 they cannot. Agents are connected throughout and
// change nothing.
TEST_F(LimitsTest, TheUnaryThreadReserveKeepsStreamsFromStarvingUnaryCalls) {
  for (const int reserve : {0, 1}) {
    SCOPED_TRACE(absl::StrCat("unary_threads = ", reserve));
    ServiceLimits limits;
    limits.max_agent_streams = 2;
    limits.max_watch_streams = 2;
    limits.unary_threads = reserve;
    server_.reset();
    ASSERT_NO_FATAL_FAILURE(Start(limits));
    RawAgent a(ControllerAddress(), 0), b(ControllerAddress(), 1);
    ASSERT_TRUE(a.Register("a").ok());
    ASSERT_TRUE(b.Register("b").ok());
    auto exp = server_->controller().Submit("w.yaml", kSimMatrix);
    ASSERT_TRUE(exp.ok());
    auto cli = Cli();
    grpc::ClientContext watch_ctx[2];
    Watch watches[2] = {OpenWatch(*cli, watch_ctx[0], exp->id()),
                        OpenWatch(*cli, watch_ctx[1], exp->id())};
    ASSERT_TRUE(watches[0].admitted);
    ASSERT_TRUE(watches[1].admitted);  // two handlers now hold their threads
    grpc::ClientContext ctx;
    v1::ListAgentsResponse agents;
    const grpc::Status st = cli->ListAgents(&ctx, v1::ListAgentsRequest(), &agents);
    if (reserve == 0) {
      EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      EXPECT_THAT(st.error_message(),
                  HasSubstr("Server Threadpool Exhausted: controller has no thread free for "
                            "/blkbench.v1.ControllerService/ListAgents (at "
                            "most 3 threads"));
    } else {
      EXPECT_TRUE(st.ok()) << st.error_message();
      EXPECT_EQ(agents.agents_size(), 2);
    }
    for (int i = 0; i < 2; ++i) {
      watch_ctx[i].TryCancel();
      watches[i].reader->Finish();
    }
  }
}

// 200 idle agents against a cap of 50, then 200 against a cap out of reach. What may
// grow: the sync server's threads (named "grpcpp_sync_ser", serving ControllerService
// only) at most to the ResourceQuota's MaxServerThreads, and gRPC core's own pools,
// whose sizes depend on the core count, not on calls (limits_test_util.h
// CoreThreadAllowance). Agent streams themselves add none (callback API, a fixed
// --agent_workers pool started with the server). Thread names come from
// /proc/self/task/*/comm.
TEST_F(LimitsTest, ThreadsStayBoundedWithManyIdleStreams) {
  for (const int cap : {50, 1'000}) {
    SCOPED_TRACE(absl::StrCat("max_agent_streams = ", cap));
    ServiceLimits limits;
    limits.max_agent_streams = cap;
    limits.max_watch_streams = 1;
    limits.unary_threads = 4;
    server_.reset();
    ASSERT_NO_FATAL_FAILURE(Start(limits));
    const int max_threads = MaxServerThreads(limits);  // 6
    {
      RawAgent warm(ControllerAddress(), 1000);  // the client's and server's first threads
      ASSERT_TRUE(warm.Register("warm").ok());
      ASSERT_TRUE(warm.Close().ok());
    }
    const testing::ThreadCensus before = testing::CountThreads();
    std::vector<std::unique_ptr<RawAgent>> agents;
    int admitted = 0, refused = 0;
    for (int i = 0; i < 200; ++i) {
      agents.push_back(std::make_unique<RawAgent>(ControllerAddress(), cap + i));
      const grpc::Status st = agents.back()->Register(absl::StrCat("idle-", i));
      if (st.ok()) {
        ++admitted;
      } else {
        EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
        ++refused;
      }
    }
    EXPECT_EQ(admitted, std::min(cap, 200));
    EXPECT_EQ(refused, 200 - std::min(cap, 200));
    const testing::ThreadCensus after = testing::CountThreads();
    const int allowance = testing::CoreThreadAllowance();
    std::cerr << "threads: " << before.total << " -> " << after.total << " with " << admitted
              << " streams (sync server " << before.sync_server << " -> " << after.sync_server
              << ", max " << max_threads << "; core allowance " << allowance << ")\n";
    EXPECT_LE(after.sync_server, max_threads);
    // A thread per stream would be +admitted; the core's pools are at most `allowance`
    // (15 on 2 cores), far below the 200 streams of the second round.
    EXPECT_LE(after.total - before.total, allowance)
        << "before: " << before << "\nafter: " << after;
    agents.clear();
  }
}

// Blocks ListSamples and ListExperiments, once armed, until released; tells when entered.
class BlockingStore final : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  void Arm() { armed_ = true; }
  absl::Notification entered, release;

  absl::StatusOr<std::vector<v1::Sample>> ListSamples(uint64_t run_id) override {
    Block();
    return StoreWrapper::ListSamples(run_id);
  }
  absl::StatusOr<std::vector<v1::Experiment>> ListExperiments(uint32_t limit) override {
    Block();
    return StoreWrapper::ListExperiments(limit);
  }

 private:
  void Block() {
    if (!armed_.exchange(false)) return;
    entered.Notify();
    release.WaitForNotification();
  }
  std::atomic<bool> armed_{false};
};

class DeadlineTest : public LimitsTest {
 protected:
  void Start(int64_t unary_deadline_ms) {
    ServiceLimits limits;
    limits.unary_deadline_ms = unary_deadline_ms;
    LimitsTest::Start(limits, &fake_, [this](std::unique_ptr<Store> s) {
      auto blocking = std::make_unique<BlockingStore>(std::move(s));
      store_ = blocking.get();
      return blocking;
    });
  }
  // Runs `call` on a thread; once it is inside the store, moves the clock `advance_ms`
  // on and lets it continue; returns its status.
  grpc::Status WhileBlocked(int64_t advance_ms, const std::function<grpc::Status()>& call) {
    store_->Arm();
    grpc::Status status;
    std::thread caller([&] { status = call(); });
    // Bounded by the work: one call reaching the store on an idle server.
    EXPECT_TRUE(store_->entered.WaitForNotificationWithTimeout(absl::Seconds(60)));
    fake_.AdvanceMs(advance_ms);
    store_->release.Notify();
    caller.join();
    return status;
  }
  BlockingStore* store_ = nullptr;
};

TEST_F(DeadlineTest, ALongReadStopsAtTheServersDeadline) {
  ASSERT_NO_FATAL_FAILURE(Start(/*unary_deadline_ms=*/200));
  auto exp = server_->controller().Submit("m.yaml", kSimMatrix);
  ASSERT_TRUE(exp.ok()) << exp.status();
  auto cli = Cli();
  const grpc::Status st = WhileBlocked(201, [&] {
    grpc::ClientContext ctx;  // no deadline of its own
    v1::GetResultsRequest req;
    req.set_experiment_id(exp->id());
    req.set_with_samples(true);
    v1::GetResultsResponse resp;
    return cli->GetResults(&ctx, req, &resp);
  });
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();
  EXPECT_THAT(st.error_message(),
              HasSubstr("deadline of 200 ms (the controller's --unary_deadline_ms) passed 1 ms "
                        "ago, before reading the samples of run"));
  // Within the deadline the same call answers.
  grpc::ClientContext ctx;
  v1::GetResultsRequest req;
  req.set_experiment_id(exp->id());
  v1::GetResultsResponse resp;
  EXPECT_TRUE(cli->GetResults(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.rows_size(), 3);
}

TEST_F(DeadlineTest, TheCallersShorterDeadlineIsTheServers) {
  ASSERT_NO_FATAL_FAILURE(Start(/*unary_deadline_ms=*/3'600'000));
  auto cli = Cli();
  // The client allows 60 s of real time; the server's clock passes 61 s while the call
  // is in the store, so only the server's own check can end it, and it does.
  const grpc::Status st = WhileBlocked(61'000, [&] {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::ListExperimentsResponse resp;
    return cli->ListExperiments(&ctx, v1::ListExperimentsRequest(), &resp);
  });
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();
  EXPECT_THAT(st.error_message(), HasSubstr("(the caller's) passed"));
  EXPECT_THAT(st.error_message(), HasSubstr("before sending the experiments"));
}

TEST_F(LimitsTest, AnAgentOutrunningItsMessageRateIsCutOff) {
  // fake_ never moves here: the bucket never refills.
  ServiceLimits limits;
  limits.agent_messages_per_s = 10;
  limits.agent_message_burst = 5;
  ASSERT_NO_FATAL_FAILURE(Start(limits, &fake_));
  RawAgent agent(ControllerAddress(), 0);
  ASSERT_TRUE(agent.Register("fast").ok());  // message 1
  for (uint64_t seq = 1; seq <= 10; ++seq) {
    v1::AgentMessage hb;
    hb.mutable_heartbeat()->set_seq(seq);
    if (!agent.Send(hb)) break;  // the controller ended the stream
  }
  const grpc::Status st = agent.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(st.error_message(),
              HasSubstr("sent more than 10 messages/s (burst 5; --agent_msg_rate, "
                        "--agent_msg_burst)"));
  EXPECT_EQ(server_->agent_service().rate_limited(), 1u);
  EXPECT_EQ(agent.heartbeats_renewed(), 4u);  // messages 2 to 5 were served
}

TEST_F(LimitsTest, ABusyAgentUnderTheDefaultsIsNeverCutOff) {
  ASSERT_NO_FATAL_FAILURE(Start(ServiceLimits()));
  testing::TempDir state("limits_agent");
  testing::AgentProcess a("busy", state.path(), {}, server_->port());
  ASSERT_TRUE(a.agent().WaitConnected(true, absl::Seconds(20)));
  auto exp = server_->controller().Submit("sim.yaml", kSimMatrix);
  ASSERT_TRUE(exp.ok()) << exp.status();
  v1::Experiment done = WaitForEndWithProgress(exp->id(), absl::Minutes(1));
  EXPECT_EQ(done.state(), v1::EXPERIMENT_DONE) << done.error();
  EXPECT_EQ(server_->agent_service().rate_limited(), 0u);
  EXPECT_EQ(a.agent().Sessions(), 1u);  // one stream throughout
}

// The resend path after store errors under a cap it outruns: while the store refuses
// them, 20 samples and a result wait unacked and the agent resends them together (21
// messages, more than the burst of 15, read at once since refusals are quick), so its
// stream is cut and it reconnects and resends again. Once the store works the run still
// ends DONE on its first attempt with every sample stored once, in order.
TEST_F(LimitsTest, AResendBeyondTheBurstIsCutOffAndCompletesAfterReconnecting) {
  ServerOptions opts = ServerDefaults();
  opts.controller.store_retry_ms = 100;
  // Above the agent's normal traffic here (samples every 100 ms, heartbeats every
  // 200 ms: 15/s), below a resend of everything at once.
  opts.limits.agent_messages_per_s = 30;
  opts.limits.agent_message_burst = 15;
  FaultyStore* faulty = nullptr;
  opts.wrap_store = [&faulty](std::unique_ptr<Store> inner) {
    auto f = std::make_unique<FaultyStore>(std::move(inner));
    faulty = f.get();
    return f;
  };
  ASSERT_NO_FATAL_FAILURE(StartController(opts));
  faulty->SetFailing(true, FaultyStore::Scope::kAgentReports);
  testing::TempDir state("limits_resend");
  testing::AgentProcess agent("resender", state.path(), {}, server_->port());
  ASSERT_TRUE(agent.agent().WaitConnected(true, absl::Seconds(20)));
  auto exp = controller().Submit("resend.yaml", R"(name: resend
job: {rw: randread, bs: 4k, iodepth: 4, ioengine: io_uring, runtime: 2s, time_based: 1}
target: {device_class: sim:null_blk}
)");
  ASSERT_TRUE(exp.ok()) << exp.status();
  // Until a resend was cut off (waits on the change signal, at least every 200 ms).
  uint64_t seen = 0;
  const absl::Time give_up = absl::Now() + absl::Minutes(2);
  while (server_->agent_service().rate_limited() == 0 && absl::Now() < give_up) {
    seen = controller().WaitForChange(seen, absl::Milliseconds(200));
  }
  ASSERT_GE(server_->agent_service().rate_limited(), 1u);
  EXPECT_GE(faulty->failures(), 21);
  faulty->SetFailing(false);
  // Each cut-off doubles the agent's backoff up to 10 s; the ASan build takes ~1 min.
  v1::Experiment done = WaitForEndWithProgress(exp->id(), absl::Minutes(5));
  ASSERT_EQ(done.state(), v1::EXPERIMENT_DONE) << done.error();
  EXPECT_EQ(done.runs(0).attempt(), 1u);
  auto samples = faulty->ListSamples(done.runs(0).id());
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), 20u);
  for (size_t i = 0; i < samples->size(); ++i) EXPECT_EQ((*samples)[i].seq(), i + 1);
}

TEST_F(LimitsTest, ARefusedAgentBacksOffAndConnectsOnceASlotFrees) {
  ServiceLimits limits;
  limits.max_agent_streams = 1;
  ASSERT_NO_FATAL_FAILURE(Start(limits));
  RawAgent holder(ControllerAddress(), 0);
  ASSERT_TRUE(holder.Register("holder").ok());
  testing::TempDir state("limits_refused");
  testing::AgentProcess a("late", state.path(), {}, server_->port());
  const StreamSlots& slots = server_->agent_service().stream_slots();
  // Two refusals: it retried after the first instead of giving up. The agent's backoff
  // is at most 10 s (agent.cc), so 2 refusals take well under 60 s.
  ASSERT_TRUE(slots.WaitForRefused(2, absl::Seconds(60)));
  EXPECT_FALSE(a.agent().Connected());
  ASSERT_TRUE(holder.Close().ok());
  EXPECT_TRUE(a.agent().WaitConnected(true, absl::Seconds(60)));
}

// Garbage that no protobuf parser accepts: field 1 with wire type 7.
constexpr char kGarbage[] = "\x0f\xff\xff\xff";

TEST_F(LimitsTest, MalformedProtobufIsInvalidArgumentNamingMethodAndType) {
  ASSERT_NO_FATAL_FAILURE(Start(ServiceLimits()));
  auto channel = grpc::CreateChannel(ControllerAddress(), grpc::InsecureChannelCredentials());
  const grpc::Status submit = testing::RawCall(
      channel, "/blkbench.v1.ControllerService/SubmitExperiment", {kGarbage}, true);
  EXPECT_EQ(submit.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(submit.error_message(),
            "the request to /blkbench.v1.ControllerService/SubmitExperiment is not a valid "
            "blkbench.v1.SubmitExperimentRequest (malformed protobuf)");
  const grpc::Status watch =
      testing::RawCall(channel, "/blkbench.v1.ControllerService/WatchExperiment", {kGarbage}, true);
  EXPECT_EQ(watch.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(watch.error_message(), HasSubstr("blkbench.v1.WatchExperimentRequest"));
  EXPECT_TRUE(server_->controller().ListExperiments(0)->empty());

  // The stream, without half-closing: the controller tells garbage from the end.
  const grpc::Status first =
      testing::RawCall(channel, "/blkbench.v1.AgentService/Connect", {kGarbage}, false);
  EXPECT_EQ(first.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(first.error_message(),
            "message 1 on /blkbench.v1.AgentService/Connect is not a valid "
            "blkbench.v1.AgentMessage (malformed protobuf)");
  v1::AgentMessage reg;
  reg.mutable_register_()->set_agent_id("garbled");
  const grpc::Status second = testing::RawCall(channel, "/blkbench.v1.AgentService/Connect",
                                               {reg.SerializeAsString(), kGarbage}, false);
  EXPECT_EQ(second.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(second.error_message(), HasSubstr("message 2 on /blkbench.v1.AgentService/Connect"));
  // A well-formed empty request is still fine.
  const grpc::Status empty =
      testing::RawCall(channel, "/blkbench.v1.ControllerService/ListAgents", {""}, true);
  EXPECT_TRUE(empty.ok()) << empty.error_message();
}

TEST_F(LimitsTest, AConnectionThatNeverSpeaksHttp2IsDroppedAtTheHandshakeTimeout) {
  ServiceLimits limits;
  limits.handshake_timeout_ms = 300;
  ASSERT_NO_FATAL_FAILURE(Start(limits));
  const auto start = std::chrono::steady_clock::now();
  const int fd = testing::ConnectTcp(server_->port());
  ASSERT_GE(fd, 0);
  // Bounded by the timeout: EOF within 100 times it.
  const int64_t closed_after_ms = testing::MsUntilClosed(fd, 100 * limits.handshake_timeout_ms);
  ::close(fd);
  ASSERT_GE(closed_after_ms, 0) << "still open after " << 100 * limits.handshake_timeout_ms
                                << " ms";
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  EXPECT_GE(elapsed, limits.handshake_timeout_ms - 5);  // closed by the timeout, not at once
}

TEST_F(LimitsTest, AnIdleConnectionIsClosedButAnAgentsStreamStays) {
  ServiceLimits limits;
  limits.max_connection_idle_ms = 300;
  ASSERT_NO_FATAL_FAILURE(Start(limits));
  RawAgent agent(ControllerAddress(), 0);
  ASSERT_TRUE(agent.Register("steady").ok());
  grpc::ChannelArguments args;
  args.SetInt("blkbench.test.connection", 99);
  auto idle =
      grpc::CreateCustomChannel(ControllerAddress(), grpc::InsecureChannelCredentials(), args);
  {
    grpc::ClientContext ctx;
    v1::ListAgentsResponse resp;
    ASSERT_TRUE(v1::ControllerService::NewStub(idle)
                    ->ListAgents(&ctx, v1::ListAgentsRequest(), &resp)
                    .ok());
  }
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(idle->GetState(false), GRPC_CHANNEL_READY);
  // The server's GOAWAY after max_connection_idle_ms turns the channel IDLE; bounded at
  // 100 times the limit.
  ASSERT_TRUE(idle->WaitForStateChange(
      GRPC_CHANNEL_READY, std::chrono::system_clock::now() + std::chrono::milliseconds(100 * 300)));
  EXPECT_GE(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count(),
            300 - 5);
  // The agent's connection, idle as long but holding its stream, still serves it.
  v1::AgentMessage hb;
  hb.mutable_heartbeat()->set_seq(1);
  ASSERT_TRUE(agent.Send(hb));
  EXPECT_TRUE(agent.WaitForRenewed(1));
}

}  // namespace
}  // namespace blkbench
