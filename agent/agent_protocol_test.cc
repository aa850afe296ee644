// Tests for the agent's side of AgentService.Connect against a scripted fake controller on
// a real socket: registration, lease-confirmed starts, self-fencing, superseding and
// repeated assignments, resends on the same stream, and rejected leases.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/run_executor.h"
#include "common/build_info.h"
#include "common/clock.h"
#include "common/testing/loop_device.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using testing::TempDir;
using Messages = std::vector<v1::AgentMessage>;
using Pred = std::function<bool(const v1::AgentMessage&)>;

constexpr absl::Duration kWait = absl::Seconds(20);  // for what must happen (ASan is slow)
// How long something that must not happen is given to show up anyway: several
// heartbeat ticks (kTickMs) of the agent's timers.
constexpr absl::Duration kQuiet = absl::Milliseconds(600);
constexpr uint32_t kTickMs = 100;       // heartbeat interval when the test needs ticks
constexpr uint32_t kNoTicks = 600'000;  // heartbeat interval when it needs none
constexpr uint64_t kRun = 7;
constexpr char kDevice[] = "sim:test";

// --- What the agent sent ---------------------------------------------------------------

Pred AnyHeartbeat() {
  return [](const v1::AgentMessage& m) { return m.has_heartbeat(); };
}
Pred HeartbeatListing(uint64_t run, uint32_t attempt) {
  return [=](const v1::AgentMessage& m) {
    if (!m.has_heartbeat()) return false;
    return std::any_of(
        m.heartbeat().active_runs().begin(), m.heartbeat().active_runs().end(),
        [&](const v1::ActiveRun& ar) { return ar.run_id() == run && ar.attempt() == attempt; });
  };
}
Pred SampleOf(uint64_t run, uint32_t attempt) {
  return [=](const v1::AgentMessage& m) {
    return m.has_sample() && m.sample().run_id() == run && m.sample().attempt() == attempt;
  };
}
Pred SampleSeq(uint64_t run, uint64_t seq) {
  return [=](const v1::AgentMessage& m) {
    return m.has_sample() && m.sample().run_id() == run && m.sample().sample().seq() == seq;
  };
}
Pred FinishedOf(uint64_t run, uint32_t attempt) {
  return [=](const v1::AgentMessage& m) {
    return m.has_finished() && m.finished().run_id() == run && m.finished().attempt() == attempt;
  };
}
Pred OfRun(uint64_t run) {
  return [=](const v1::AgentMessage& m) {
    return (m.has_sample() && m.sample().run_id() == run) ||
           (m.has_finished() && m.finished().run_id() == run);
  };
}
size_t Count(const Messages& all, const Pred& pred) {
  return static_cast<size_t>(std::count_if(all.begin(), all.end(), pred));
}

// --- What the controller sends ---------------------------------------------------------

v1::ControllerMessage Assign(uint64_t run, uint32_t attempt, const std::string& lease) {
  v1::ControllerMessage m;
  v1::RunAssignment* a = m.mutable_assign();
  a->set_run_id(run);
  a->set_attempt(attempt);
  a->set_lease_id(lease);
  a->set_device_path(kDevice);
  a->set_sample_interval_ms(5);
  a->mutable_cell()->mutable_job()->set_rw(v1::READ);  // the agent re-checks the cell
  return m;
}
v1::ControllerMessage Renewed(uint64_t seq, std::vector<std::pair<uint64_t, uint32_t>> runs) {
  v1::ControllerMessage m;
  m.mutable_renewed()->set_seq(seq);
  for (const auto& [run, attempt] : runs) {
    v1::ActiveRun* ar = m.mutable_renewed()->add_runs();
    ar->set_run_id(run);
    ar->set_attempt(attempt);
  }
  return m;
}
v1::ControllerMessage Ack(uint64_t run, uint32_t attempt, uint64_t sample_seq,
                          uint32_t retry_after_ms = 0, const std::string& error = "") {
  v1::ControllerMessage m;
  m.mutable_ack()->set_run_id(run);
  m.mutable_ack()->set_attempt(attempt);
  m.mutable_ack()->set_sample_seq(sample_seq);
  m.mutable_ack()->set_retry_after_ms(retry_after_ms);
  m.mutable_ack()->set_error(error);
  return m;
}

// The controller's end of the stream. It answers Register with Registered itself and,
// with auto_renew, every heartbeat with a Renewed naming all its runs (as the real
// controller does for leases it holds); everything else is the test's script. Every
// message received is logged, in stream order, for the test to wait on.
class FakeController final : public v1::AgentService::Service {
 public:
  struct Options {
    uint32_t heartbeat_ms = kNoTicks;
    uint32_t lease_ttl_ms = 30'000;
    bool auto_renew = true;
  };
  explicit FakeController(Options options) : options_(options) {}

  grpc::Status Connect(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream) override {
    {
      absl::MutexLock lock(&write_mu_);
      stream_ = stream;
      ctx_ = ctx;
      ++connects_;
    }
    v1::AgentMessage msg;
    while (stream->Read(&msg)) {
      // Answered before the message is logged, so the test's own messages come after.
      if (msg.has_register_()) {
        v1::ControllerMessage reply;
        reply.mutable_registered()->set_heartbeat_interval_ms(options_.heartbeat_ms);
        reply.mutable_registered()->set_lease_ttl_ms(options_.lease_ttl_ms);
        Send(reply);
      } else if (msg.has_heartbeat() && options_.auto_renew) {
        std::vector<std::pair<uint64_t, uint32_t>> runs;
        for (const v1::ActiveRun& ar : msg.heartbeat().active_runs()) {
          runs.emplace_back(ar.run_id(), ar.attempt());
        }
        Send(Renewed(msg.heartbeat().seq(), runs));
      }
      absl::MutexLock lock(&mu_);
      log_.push_back(msg);
    }
    absl::MutexLock lock(&write_mu_);
    if (stream_ == stream) {  // not yet replaced by the agent's next stream
      stream_ = nullptr;
      ctx_ = nullptr;
    }
    return grpc::Status::OK;
  }

  // Writes `msg` on the current stream; false if there is none or it broke.
  bool Send(const v1::ControllerMessage& msg) {
    absl::MutexLock lock(&write_mu_);
    return stream_ != nullptr && stream_->Write(msg);
  }
  // Ends the current stream from the controller's side.
  void Hangup() {
    absl::MutexLock lock(&write_mu_);
    if (ctx_ != nullptr) ctx_->TryCancel();
  }
  int Connects() {
    absl::MutexLock lock(&write_mu_);
    return connects_;
  }

  // The next message not yet taken that satisfies `want` (the ones skipped are taken
  // too); nullopt if none arrives within `timeout`.
  std::optional<v1::AgentMessage> Next(const Pred& want, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    absl::MutexLock lock(&mu_);
    auto more = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cursor_ < log_.size(); };
    while (mu_.AwaitWithDeadline(absl::Condition(&more), deadline)) {
      const v1::AgentMessage& m = log_[cursor_++];
      if (want(m)) return m;
    }
    return std::nullopt;
  }
  // Waits until everything received so far satisfies `done`; false after `timeout`.
  bool WaitUntil(const std::function<bool(const Messages&)>& done, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done(log_); };
    return mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  }
  Messages Received() {
    absl::MutexLock lock(&mu_);
    return log_;
  }

 private:
  const Options options_;
  absl::Mutex write_mu_;
  grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream_
      ABSL_GUARDED_BY(write_mu_) = nullptr;
  grpc::ServerContext* ctx_ ABSL_GUARDED_BY(write_mu_) = nullptr;
  int connects_ ABSL_GUARDED_BY(write_mu_) = 0;
  absl::Mutex mu_;
  Messages log_ ABSL_GUARDED_BY(mu_);
  size_t cursor_ ABSL_GUARDED_BY(mu_) = 0;
};

// What the runs did on the (pretend) device.
struct RunnerLog {
  std::atomic<int> started{0};
  std::atomic<int> writing{0};      // runners inside Run() right now
  std::atomic<int> max_writing{0};  // the most there ever were at once
};

// How a TickingRunner behaves.
struct RunnerScript {
  uint64_t samples = 0;  // the first this many samples are emitted; 0 = no limit
  // How long it goes on writing after it saw cancel (a real executor drains its queue and
  // restores the device before it returns).
  std::chrono::milliseconds linger{0};
};

// Emits a sample per ctx.sample_interval until canceled, then returns Cancelled: the
// test decides when a run ends.
class TickingRunner final : public Runner {
 public:
  TickingRunner(RunnerLog& log, RunnerScript script) : log_(log), script_(script) {}
  absl::StatusOr<v1::RunResult> Run(const RunContext& ctx) override {
    ++log_.started;
    const int now = ++log_.writing;
    int most = log_.max_writing.load();
    while (now > most && !log_.max_writing.compare_exchange_weak(most, now)) {
    }
    for (uint64_t seq = 1; !ctx.cancel->load(); std::this_thread::sleep_for(ctx.sample_interval)) {
      if (script_.samples != 0 && seq > script_.samples) continue;
      v1::Sample s;
      s.set_seq(seq);
      s.set_interval_ns(ctx.sample_interval.count());
      s.set_offset_ns(seq * ctx.sample_interval.count());
      ctx.on_sample(s);
      ++seq;
    }
    std::this_thread::sleep_for(script_.linger);
    --log_.writing;
    return absl::CancelledError("canceled by the agent");
  }

 private:
  RunnerLog& log_;
  const RunnerScript script_;
};

class AgentProtocolTest : public ::testing::Test {
 protected:
  // Starts the fake controller and an agent connected to it whose runs are TickingRunners.
  void Start(FakeController::Options options, RunnerScript script = {}) {
    fake_ = std::make_unique<FakeController>(options);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(fake_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);

    config_.agent_id = "agent-under-test";
    config_.state_dir = state_.path();
    config_.sim_devices = {kDevice};
    config_.metrics_listen = "";
    auto journal = QueueSettingsJournal::Open(state_.path());
    ASSERT_TRUE(journal.ok()) << journal.status();
    journal_ = std::move(*journal);
    executor_ = std::make_unique<RunExecutor>(
        config_, *journal_, [this, script](const std::string& device) -> std::unique_ptr<Runner> {
          if (device != kDevice) return nullptr;
          return std::make_unique<TickingRunner>(runners_, script);
        });
    agent_ = std::make_unique<Agent>(config_, *executor_, clock_,
                                     TcpChannelFactory(absl::StrCat("127.0.0.1:", port)));
    agent_thread_ = std::thread([this] { agent_->Run(); });
  }

  // Waits for the agent's Register and the heartbeat it sends once registered.
  void Handshake() {
    std::optional<v1::AgentMessage> reg =
        fake_->Next([](const v1::AgentMessage& m) { return m.has_register_(); }, kWait);
    ASSERT_TRUE(reg);
    EXPECT_EQ(reg->register_().version(), BuildVersion());  // the binary's, not a literal
    ASSERT_TRUE(fake_->Next(AnyHeartbeat(), kWait));
  }

  // Stops the agent and joins every run thread (idempotent).
  void StopAgent() {
    if (agent_ == nullptr) return;
    agent_->Stop();
    if (agent_thread_.joinable()) agent_thread_.join();
  }

  void TearDown() override {
    StopAgent();
    if (server_ != nullptr) {
      server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    }
  }

  TempDir state_{"agent_protocol_state"};
  FakeClock clock_;  // moves only when a test says: no fencing or resend timer fires unasked
  RunnerLog runners_;
  std::unique_ptr<FakeController> fake_;
  std::unique_ptr<grpc::Server> server_;
  AgentConfig config_;
  std::unique_ptr<QueueSettingsJournal> journal_;
  std::unique_ptr<RunExecutor> executor_;
  std::unique_ptr<Agent> agent_;
  std::thread agent_thread_;
};

TEST_F(AgentProtocolTest, RegisterCarriesIdsAndAReconnectTheSameInstanceId) {
  ASSERT_NO_FATAL_FAILURE(Start({}));
  auto is_register = [](const v1::AgentMessage& m) { return m.has_register_(); };
  auto first = fake_->Next(is_register, kWait);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->register_().agent_id(), "agent-under-test");
  const std::string instance = first->register_().instance_id();
  EXPECT_FALSE(instance.empty());

  fake_->Hangup();
  auto second = fake_->Next(is_register, kWait);
  ASSERT_TRUE(second) << "no reconnect after the controller closed the stream";
  EXPECT_EQ(second->register_().agent_id(), "agent-under-test");
  EXPECT_EQ(second->register_().instance_id(), instance);
  EXPECT_EQ(agent_->Sessions(), 2u);
  EXPECT_EQ(fake_->Connects(), 2);
}

// Registration records each allowlisted device's identity: a device missing then is not
// offered, and one replaced before a reconnect is not offered again.
TEST_F(AgentProtocolTest, RegisterOffersAllowlistedDevicesOnlyWhileTheyAreWhatWasRecorded) {
  TempDir files("agent_protocol_files");
  const std::string file = files.File("scratch.img");
  std::ofstream(file) << std::string(1 << 20, '\0');
  config_.devices = {{file, "file"}, {files.File("missing.img"), "file"}};
  ASSERT_NO_FATAL_FAILURE(Start({}));
  auto is_register = [](const v1::AgentMessage& m) { return m.has_register_(); };
  auto paths = [](const v1::Register& reg) {
    std::vector<std::string> out;
    for (const v1::DeviceFacts& d : reg.devices()) out.push_back(d.path());
    return out;
  };
  auto first = fake_->Next(is_register, kWait);
  ASSERT_TRUE(first);
  EXPECT_EQ(paths(first->register_()), (std::vector<std::string>{file, kDevice}));

  std::ofstream(file + ".new") << std::string(1 << 20, 'x');
  ASSERT_EQ(rename((file + ".new").c_str(), file.c_str()), 0);
  fake_->Hangup();
  auto second = fake_->Next(is_register, kWait);
  ASSERT_TRUE(second) << "no reconnect after the controller closed the stream";
  EXPECT_EQ(paths(second->register_()), (std::vector<std::string>{kDevice}));
}

TEST_F(AgentProtocolTest, AssignmentStartsOnlyOnceItsLeaseIsConfirmed) {
  ASSERT_NO_FATAL_FAILURE(Start({.heartbeat_ms = kTickMs, .auto_renew = false}));
  ASSERT_NO_FATAL_FAILURE(Handshake());
  ASSERT_TRUE(fake_->Send(Assign(kRun, 1, "L1")));
  auto hb = fake_->Next(HeartbeatListing(kRun, 1), kWait);
  ASSERT_TRUE(hb) << "no heartbeat asking for the new run's lease";
  ASSERT_EQ(hb->heartbeat().active_runs_size(), 1);
  EXPECT_EQ(hb->heartbeat().active_runs(0).lease_id(), "L1");

  EXPECT_FALSE(fake_->Next(OfRun(kRun), kQuiet)) << "the run started without a confirmed lease";
  EXPECT_EQ(runners_.started.load(), 0);

  // A renewal of another attempt of the run confirms nothing.
  ASSERT_TRUE(fake_->Send(Renewed(hb->heartbeat().seq(), {{kRun, 2}})));
  EXPECT_FALSE(fake_->Next(OfRun(kRun), kQuiet)) << "started on another attempt's renewal";
  EXPECT_EQ(runners_.started.load(), 0);

  hb = fake_->Next(HeartbeatListing(kRun, 1), kWait);
  ASSERT_TRUE(hb);
  ASSERT_TRUE(fake_->Send(Renewed(hb->heartbeat().seq(), {{kRun, 1}})));
  auto sample = fake_->Next(SampleOf(kRun, 1), kWait);
  ASSERT_TRUE(sample) << "no sample after the lease was confirmed";
  EXPECT_EQ(sample->sample().sample().seq(), 1u);
  EXPECT_EQ(sample->sample().lease_id(), "L1");
}

TEST_F(AgentProtocolTest, FencesItselfAtTtlMinusMarginAfterTheLastConfirmedRenewal) {
  constexpr int64_t kTtlMs = 3000;
  ASSERT_NO_FATAL_FAILURE(
      Start({.heartbeat_ms = kTickMs, .lease_ttl_ms = kTtlMs, .auto_renew = false}));
  ASSERT_NO_FATAL_FAILURE(Handshake());
  ASSERT_TRUE(fake_->Send(Assign(kRun, 1, "L1")));
  auto hb = fake_->Next(HeartbeatListing(kRun, 1), kWait);
  ASSERT_TRUE(hb);
  // The one renewal: of a heartbeat sent at the clock's current time. None follows.
  ASSERT_TRUE(fake_->Send(Renewed(hb->heartbeat().seq(), {{kRun, 1}})));
  ASSERT_TRUE(fake_->Next(SampleOf(kRun, 1), kWait));

  const int64_t budget = kTtlMs - kTtlMs / Agent::kFenceMarginDivisor;  // 2000 ms
  clock_.AdvanceMs(budget - 1);
  EXPECT_FALSE(fake_->Next(FinishedOf(kRun, 1), kQuiet)) << "fenced before TTL - TTL/3";
  EXPECT_EQ(runners_.writing.load(), 1);

  clock_.AdvanceMs(1);
  auto fin = fake_->Next(FinishedOf(kRun, 1), kWait);
  ASSERT_TRUE(fin) << "still writing " << budget << " ms after the last confirmed renewal";
  EXPECT_EQ(fin->finished().outcome(), v1::RUN_OUTCOME_FENCED) << fin->finished().error();
  EXPECT_EQ(fin->finished().lease_id(), "L1");
  EXPECT_GE(fin->finished().last_sample_seq(), 1u);
  EXPECT_EQ(runners_.writing.load(), 0);
}

TEST_F(AgentProtocolTest, NewerAttemptSupersedesTheRunningOneWithOneWriterAtATime) {
  ASSERT_NO_FATAL_FAILURE(Start({}, {.linger = std::chrono::milliseconds(200)}));
  ASSERT_NO_FATAL_FAILURE(Handshake());
  ASSERT_TRUE(fake_->Send(Assign(kRun, 1, "L1")));
  ASSERT_TRUE(fake_->Next(HeartbeatListing(kRun, 1), kWait));
  ASSERT_TRUE(fake_->WaitUntil(
      [](const Messages& all) { return Count(all, SampleOf(kRun, 1)) >= 3; }, kWait));

  ASSERT_TRUE(fake_->Send(Assign(kRun, 2, "L2")));
  // No heartbeat ticks: the next heartbeat is the one asking for attempt 2's lease.
  auto hb = fake_->Next(AnyHeartbeat(), kWait);
  ASSERT_TRUE(hb);
  ASSERT_EQ(hb->heartbeat().active_runs_size(), 1) << hb->DebugString();
  EXPECT_EQ(hb->heartbeat().active_runs(0).attempt(), 2u);
  EXPECT_EQ(hb->heartbeat().active_runs(0).lease_id(), "L2");

  ASSERT_TRUE(fake_->WaitUntil(
      [](const Messages& all) {
        return Count(all, SampleOf(kRun, 2)) >= 5 && Count(all, FinishedOf(kRun, 1)) >= 1;
      },
      kWait))
      << "attempt 2 did not run, or attempt 1 did not finish";
  const Messages all = fake_->Received();
  auto first2 = std::find_if(all.begin(), all.end(), SampleOf(kRun, 2));
  EXPECT_EQ(std::count_if(first2, all.end(), SampleOf(kRun, 1)), 0)
      << "attempt 1 sent samples after attempt 2 started";
  auto fin1 = std::find_if(all.begin(), all.end(), FinishedOf(kRun, 1));
  EXPECT_EQ(fin1->finished().outcome(), v1::RUN_OUTCOME_CANCELED);
  EXPECT_EQ(first2->sample().sample().seq(), 1u);
  EXPECT_EQ(first2->sample().lease_id(), "L2");

  StopAgent();
  EXPECT_EQ(runners_.started.load(), 2);
  EXPECT_EQ(runners_.max_writing.load(), 1) << "two attempts wrote to the device at once";
}

// Attempt 2 supersedes the running attempt 1 and is itself superseded by attempt 3
// before its lease is confirmed: attempt 3 must still wait for attempt 1 to leave the
// device (Launch chains runs per device, not per superseded attempt).
TEST_F(AgentProtocolTest, SupersedingAnUnconfirmedAttemptStillWaitsForTheRunningOne) {
  ASSERT_NO_FATAL_FAILURE(Start({.auto_renew = false}, {.linger = std::chrono::milliseconds(500)}));
  ASSERT_NO_FATAL_FAILURE(Handshake());
  ASSERT_TRUE(fake_->Send(Assign(kRun, 1, "L1")));
  auto hb = fake_->Next(HeartbeatListing(kRun, 1), kWait);
  ASSERT_TRUE(hb);
  ASSERT_TRUE(fake_->Send(Renewed(hb->heartbeat().seq(), {{kRun, 1}})));
  ASSERT_TRUE(fake_->Next(SampleOf(kRun, 1), kWait));

  ASSERT_TRUE(fake_->Send(Assign(kRun, 2, "L2")));  // never confirmed
  ASSERT_TRUE(fake_->Next(HeartbeatListing(kRun, 2), kWait));
  ASSERT_TRUE(fake_->Send(Assign(kRun, 3, "L3")));
  hb = fake_->Next(HeartbeatListing(kRun, 3), kWait);
  ASSERT_TRUE(hb);
  ASSERT_TRUE(fake_->Send(Renewed(hb->heartbeat().seq(), {{kRun, 3}})));
  ASSERT_TRUE(fake_->Next(SampleOf(kRun, 3), kWait));

  StopAgent();
  EXPECT_EQ(runners_.started.load(), 2);
  EXPECT_EQ(runners_.max_writing.load(), 1) << "attempt 3 wrote while attempt 1 still did";
}

TEST_F(AgentProtocolTest, RepeatedAssignmentIsReconfirmedNotStartedAgain) {
  ASSERT_NO_FATAL_FAILURE(Start({}));
  ASSERT_NO_FATAL_FAILURE(Handshake());
  ASSERT_TRUE(fake_->Send(Assign(kRun, 1, "L1")));
  ASSERT_TRUE(fake_->Next(HeartbeatListing(kRun, 1), kWait));
  ASSERT_TRUE(fake_->Next(SampleOf(kRun, 1), kWait));

  ASSERT_TRUE(fake_->Send(Assign(kRun, 1, "L1")));
  auto hb = fake_->Next(AnyHeartbeat(), kWait);
  ASSERT_TRUE(hb) << "a repeated assignment is confirmed by a heartbeat";
  EXPECT_TRUE(HeartbeatListing(kRun, 1)(*hb));
  // The fake renewed that heartbeat at once; the heartbeat for one more repeat shows the
  // agent has handled the renewal (it reads the stream in order).
  ASSERT_TRUE(fake_->Send(Assign(kRun, 1, "L1")));
  ASSERT_TRUE(fake_->Next(AnyHeartbeat(), kWait));
  const size_t before = Count(fake_->Received(), SampleOf(kRun, 1));
  ASSERT_TRUE(fake_->WaitUntil(
      [&](const Messages& all) { return Count(all, SampleOf(kRun, 1)) >= before + 20; }, kWait));
  StopAgent();

  EXPECT_EQ(runners_.started.load(), 1);
  EXPECT_EQ(agent_->Sessions(), 1u);
  uint64_t want = 1;
  for (const v1::AgentMessage& m : fake_->Received()) {
    if (!SampleOf(kRun, 1)(m)) continue;
    ASSERT_EQ(m.sample().sample().seq(), want) << "a second writer, or a sample out of order";
    ++want;
  }
}

TEST_F(AgentProtocolTest, ResendsUnackedSamplesOnTheSameStreamWhenAsked) {
  ASSERT_NO_FATAL_FAILURE(Start({.heartbeat_ms = kTickMs, .auto_renew = false}, {.samples = 3}));
  ASSERT_NO_FATAL_FAILURE(Handshake());
  ASSERT_TRUE(fake_->Send(Assign(kRun, 1, "L1")));
  auto hb = fake_->Next(HeartbeatListing(kRun, 1), kWait);
  ASSERT_TRUE(hb);
  ASSERT_TRUE(fake_->Send(Renewed(hb->heartbeat().seq(), {{kRun, 1}})));

  ASSERT_TRUE(fake_->Next(SampleSeq(kRun, 1), kWait));
  ASSERT_TRUE(fake_->Send(Ack(kRun, 1, 1)));
  ASSERT_TRUE(fake_->Next(SampleSeq(kRun, 2), kWait));
  // Sample 2 could not be stored: only 1 is, resend the rest in 200 ms.
  ASSERT_TRUE(fake_->Send(Ack(kRun, 1, 1, /*retry_after_ms=*/200)));
  // The agent reads the stream in order: its heartbeat for a second run shows it has
  // handled the ack before the clock moves. That run is never confirmed, so never runs.
  ASSERT_TRUE(fake_->Send(Assign(kRun + 1, 1, "L8")));
  ASSERT_TRUE(fake_->Next(HeartbeatListing(kRun + 1, 1), kWait));
  ASSERT_TRUE(fake_->WaitUntil(
      [](const Messages& all) { return Count(all, SampleSeq(kRun, 3)) == 1; }, kWait));

  auto resent = [](const Messages& all) { return Count(all, SampleSeq(kRun, 2)) >= 2; };
  clock_.AdvanceMs(199);
  EXPECT_FALSE(fake_->WaitUntil(resent, kQuiet)) << "resent before retry_after_ms";
  clock_.AdvanceMs(1);
  EXPECT_TRUE(fake_->WaitUntil(resent, kWait)) << "sample 2 was not resent";
  EXPECT_TRUE(fake_->WaitUntil(
      [](const Messages& all) { return Count(all, SampleSeq(kRun, 3)) >= 2; }, kWait));

  EXPECT_EQ(Count(fake_->Received(), SampleSeq(kRun, 1)), 1u) << "an acknowledged sample resent";
  EXPECT_EQ(agent_->Sessions(), 1u);
  EXPECT_EQ(fake_->Connects(), 1);
  EXPECT_EQ(runners_.started.load(), 1);
}

TEST_F(AgentProtocolTest, AckWithErrorStopsTheRun) {
  ASSERT_NO_FATAL_FAILURE(Start({.heartbeat_ms = kTickMs}));
  ASSERT_NO_FATAL_FAILURE(Handshake());
  ASSERT_TRUE(fake_->Send(Assign(kRun, 1, "L1")));
  ASSERT_TRUE(fake_->Next(SampleOf(kRun, 1), kWait));

  ASSERT_TRUE(fake_->Send(Ack(kRun, 1, 0, 0, "stale lease: run is no longer assigned")));
  auto fin = fake_->Next(FinishedOf(kRun, 1), kWait);
  ASSERT_TRUE(fin) << "the run kept going after its lease was rejected";
  EXPECT_EQ(fin->finished().outcome(), v1::RUN_OUTCOME_CANCELED) << fin->finished().error();
  EXPECT_EQ(runners_.writing.load(), 0);

  // The result is rejected too: the agent forgets the run.
  ASSERT_TRUE(fake_->Send(Ack(kRun, 1, 0, 0, "stale lease: result rejected")));
  EXPECT_TRUE(fake_->Next(
      [](const v1::AgentMessage& m) {
        return m.has_heartbeat() && m.heartbeat().active_runs_size() == 0;
      },
      kWait));
  EXPECT_EQ(agent_->ActiveRuns(), 0u);
  EXPECT_EQ(runners_.started.load(), 1);
}

}  // namespace
}  // namespace blkbench
