// Chaos tests: the real daemons as processes, the real fault injected — SIGSTOP of the
// controller or the agent for longer than the lease TTL, a TCP proxy that stalls or
// resets the agent's connection, the database on a small tmpfs that fills up and is
// freed, two agents with one id — and then the promises of docs/reliability.md checked:
//   - the experiment ends DONE (every fault here is shorter than the retry budget);
//   - each run has one result, from its final attempt, with samples 1..n complete;
//   - no device ever had two writers (the agents' run_started/run_stopped log events,
//     on CLOCK_MONOTONIC, never overlap per device);
//   - a run whose lease expired had stopped writing before the controller gave its
//     lease away (agent run_stopped before controller lease_lost).
// Timings (TTL 3 s, runs of 4 s — longer than the fencing budget —, heartbeats 200 ms) come from
// the daemons' flags; fault durations are the only waits on the clock, and they are the fault, not
// synchronisation.
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log/log.h"
#include "common/testing/loop_device.h"
#include "common/testing/tcp_proxy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sqlite3.h"
#include "tests/daemon_cluster.h"

namespace blkbench {
namespace {

using testing::ChildProcess;
using testing::DaemonCluster;
using ::testing::HasSubstr;
using testing::LoopDevice;
using testing::TcpProxy;

// The daemons' timings: short by default. BLKBENCH_CHAOS_PRODUCTION=1 runs the same
// scenarios at the production values (30 s TTL, 5 s heartbeats, 1 s samples, 40 s
// runs; the controller stop is then 60 s) — `ctest -L soak` does so for
// ControllerStoppedLongerThanTheTtl.
struct Timings {
  int64_t ttl_ms, heartbeat_ms, sample_ms;
  const char* runtime;
  int min_samples;  // of a finished run (half of runtime / sample interval)
};
const Timings& T() {
  static const Timings t = getenv("BLKBENCH_CHAOS_PRODUCTION") != nullptr
                               ? Timings{30'000, 5'000, 1'000, "40s", 20}
                               : Timings{3'000, 200, 100, "4s", 20};
  return t;
}
// Runs longer than the fencing budget, so a fault mid-run meets a writing agent.
std::string Matrix() {
  return absl::StrCat(R"(name: chaos
repeats: 2
job: {rw: randread, direct: 1, ioengine: io_uring, size: 16m, iodepth: 4, runtime: )",
                      T().runtime, R"(,
      time_based: 1}
target: {device_class: loop}
)");
}

// One run attempt's writes, from the agent's log.
struct WriteSpan {
  std::string agent, device;
  uint64_t run = 0;
  uint32_t attempt = 0;
  int64_t start_ms = 0, stop_ms = -1;  // CLOCK_MONOTONIC; stop -1 = never logged
};

class ChaosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::DaemonsBuilt()) GTEST_SKIP() << "daemons not built in " << testing::BuildDir();
    loop_ = LoopDevice::Create(64);
    if (!loop_) GTEST_SKIP() << "loop devices unavailable";
  }

  std::vector<std::string> ControllerFlags(const std::string& db = "") const {
    std::vector<std::string> f{absl::StrCat("--heartbeat_ms=", T().heartbeat_ms),
                               absl::StrCat("--lease_ttl_ms=", T().ttl_ms),
                               absl::StrCat("--sample_interval_ms=", T().sample_ms),
                               "--max_attempts=3", "--store_retry_ms=200"};
    if (!db.empty()) f.push_back("--db=" + db);
    f.insert(f.end(), extra_flags_.begin(), extra_flags_.end());
    return f;
  }
  std::string AgentConfig(const std::string& controller, const std::string& id = "chaos-agent",
                          const std::string& state = "agent-state") const {
    return absl::StrCat(
        "controller: ", controller, "\nagent_id: ", id, "\nstate_dir: ", cluster_.dir().File(state),
        "\nsim_devices: []\ndevices:\n  - {path: ", loop_->path(), ", class: loop}\n");
  }
  // Controller on TCP behind a proxy, agent dialling the proxy.
  void StartBehindProxy() {
    const int port = testing::FreeTcpPort();
    controller_port_ = port;
    controller_ = cluster_.StartController(ControllerFlags(), port);
    auto proxy = TcpProxy::Start(port);
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = std::move(*proxy);
    agent_ = cluster_.StartAgent("agent", AgentConfig(absl::StrCat("127.0.0.1:", proxy_->port())));
  }
  void StartOnSocket() {
    controller_ = cluster_.StartController(ControllerFlags());
    agent_ = cluster_.StartAgent("agent", AgentConfig("unix:" + cluster_.socket()));
  }
  void RestartController() {
    controller_->Kill(SIGKILL);
    controller_ = cluster_.StartController(ControllerFlags(), controller_port_);
  }
  // Submits Matrix() and waits until its first run has streamed a few samples.
  uint64_t SubmitAndWaitMidRun() {
    const uint64_t id = cluster_.Submit(Matrix());
    cluster_.WatchUntil(id, [](const v1::Experiment& e) { return e.runs(0).samples() >= 3; });
    return id;
  }
  static void Hold(absl::Duration fault) { absl::SleepFor(fault); }  // the fault itself

  std::vector<WriteSpan> Writes(const std::string& log) const {
    std::map<std::pair<uint64_t, uint32_t>, WriteSpan> spans;
    for (const std::string& l : cluster_.LogEvents(log, "run_started")) {
      WriteSpan w{LogField(l, "agent"), LogField(l, "device"), std::stoull(LogField(l, "run")),
                  static_cast<uint32_t>(std::stoul(LogField(l, "attempt"))),
                  std::stoll(LogField(l, "mono_ms"))};
      spans[{w.run, w.attempt}] = w;
    }
    for (const std::string& l : cluster_.LogEvents(log, "run_stopped")) {
      auto key = std::make_pair(std::stoull(LogField(l, "run")),
                                static_cast<uint32_t>(std::stoul(LogField(l, "attempt"))));
      spans[key].stop_ms = std::stoll(LogField(l, "mono_ms"));
    }
    std::vector<WriteSpan> out;
    out.reserve(spans.size());
    for (auto& [k, w] : spans) out.push_back(w);
    return out;
  }

  // The invariants every scenario ends with; returns the final attempt of each run.
  std::map<uint64_t, uint32_t> CheckInvariants(uint64_t id, const std::vector<std::string>& logs) {
    v1::Experiment e = cluster_.WatchUntil(id, DaemonCluster::Ended);
    EXPECT_EQ(e.state(), v1::EXPERIMENT_DONE) << e.error();
    std::map<uint64_t, uint32_t> attempts;
    v1::GetResultsResponse res = cluster_.Results(id);
    EXPECT_EQ(res.rows_size(), e.runs_size());
    for (const v1::ResultRow& row : res.rows()) {
      attempts[row.run().id()] = row.run().attempt();
      EXPECT_EQ(row.run().state(), v1::RUN_DONE) << row.run().error();
      EXPECT_GT(row.run().result().iops(), 0) << "run " << row.run().id();
      // Each sample stored once, none missing.
      EXPECT_GE(row.samples_size(), T().min_samples) << "run " << row.run().id();
      for (int i = 0; i < row.samples_size(); ++i) {
        EXPECT_EQ(row.samples(i).seq(), static_cast<uint64_t>(i + 1)) << "run " << row.run().id();
      }
    }
    std::map<std::pair<std::string, std::string>, std::vector<WriteSpan>> by_device;
    for (const std::string& log : logs) {
      for (const WriteSpan& w : Writes(log)) by_device[{w.agent, w.device}].push_back(w);
    }
    for (auto& [dev, spans] : by_device) {
      std::sort(spans.begin(), spans.end(),
                [](const WriteSpan& a, const WriteSpan& b) { return a.start_ms < b.start_ms; });
      for (size_t i = 0; i < spans.size(); ++i) {
        EXPECT_GE(spans[i].stop_ms, spans[i].start_ms)
            << "run " << spans[i].run << " attempt " << spans[i].attempt << " never stopped";
        if (i > 0) {
          EXPECT_GE(spans[i].start_ms, spans[i - 1].stop_ms)
              << dev.second << ": run " << spans[i].run << "/" << spans[i].attempt
              << " started while run " << spans[i - 1].run << "/" << spans[i - 1].attempt
              << " was writing";
        }
      }
    }
    return attempts;
  }

  // Every lease the controller gave away on expiry (or on the agent's own fencing
  // report) had stopped writing on the agent before (self-fencing with a margin);
  // returns how many were given away so.
  int CheckFencedBeforeExpiry(const std::string& agent_log) {
    int expired = 0;
    std::vector<WriteSpan> writes = Writes(agent_log);
    for (const std::string& l : cluster_.LogEvents("controller.log", "lease_lost")) {
      // Expired at the controller, or reported fenced by the agent first (after a
      // controller stall either can be processed first): either way the lease is given
      // away now and the agent must have stopped already.
      const std::string reason = LogField(l, "reason");
      if (reason.find("lease expired") == std::string::npos &&
          reason.find("fenced itself") == std::string::npos) {
        continue;
      }
      ++expired;
      const uint64_t run = std::stoull(LogField(l, "run"));
      const uint32_t attempt = static_cast<uint32_t>(std::stoul(LogField(l, "attempt")));
      const int64_t lost_ms = std::stoll(LogField(l, "mono_ms"));
      for (const WriteSpan& w : writes) {
        if (w.run != run || w.attempt != attempt) continue;
        EXPECT_GE(w.stop_ms, 0);
        EXPECT_LT(w.stop_ms, lost_ms)
            << "run " << run << "/" << attempt << " was still writing when its lease expired";
        printf("run %lu attempt %u: writes stopped %ld ms before its lease expired (TTL %ld ms)\n",
               static_cast<unsigned long>(run), attempt, static_cast<long>(lost_ms - w.stop_ms),
               static_cast<long>(T().ttl_ms));
        RecordProperty("fence_margin_ms", static_cast<int>(lost_ms - w.stop_ms));
      }
    }
    return expired;
  }

  DaemonCluster cluster_{"chaos_test"};
  std::unique_ptr<LoopDevice> loop_;
  std::unique_ptr<TcpProxy> proxy_;
  std::unique_ptr<ChildProcess> controller_, agent_;
  int controller_port_ = 0;
  std::vector<std::string> extra_flags_;  // appended to ControllerFlags()
};

// Done-when of issue 10: a controller stopped for longer than the TTL. The agent
// fences itself, the run is re-executed once when the controller resumes, and the
// experiment completes DONE.
TEST_F(ChaosTest, ControllerStoppedLongerThanTheTtl) {
  StartOnSocket();
  const uint64_t id = SubmitAndWaitMidRun();
  controller_->Signal(SIGSTOP);
  Hold(absl::Milliseconds(2 * T().ttl_ms));
  controller_->Signal(SIGCONT);
  std::map<uint64_t, uint32_t> attempts = CheckInvariants(id, {"agent.log"});
  EXPECT_EQ(attempts.begin()->second, 2u) << "the interrupted run runs again, once";
  EXPECT_EQ(std::prev(attempts.end())->second, 1u);
  EXPECT_FALSE(cluster_.LogEvents("agent.log", "run_fenced").empty());
  EXPECT_EQ(CheckFencedBeforeExpiry("agent.log"), 1);
}

// The agent stopped (SIGSTOP) for longer than the TTL: its lease expires, the run is
// re-issued to it when it resumes; its late attempt never overlaps the new one.
TEST_F(ChaosTest, AgentStoppedLongerThanTheTtl) {
  StartOnSocket();
  const uint64_t id = SubmitAndWaitMidRun();
  agent_->Signal(SIGSTOP);
  Hold(absl::Milliseconds(2 * T().ttl_ms));
  agent_->Signal(SIGCONT);
  std::map<uint64_t, uint32_t> attempts = CheckInvariants(id, {"agent.log"});
  EXPECT_EQ(attempts.begin()->second, 2u);
}

// A partition shorter than the fencing budget (TTL - TTL/3) costs nothing.
TEST_F(ChaosTest, PartitionShorterThanTheFencingBudget) {
  StartBehindProxy();
  const uint64_t id = SubmitAndWaitMidRun();
  proxy_->Stall();
  Hold(absl::Milliseconds(T().ttl_ms / 3));
  proxy_->Resume();
  for (const auto& [run, attempt] : CheckInvariants(id, {"agent.log"})) {
    EXPECT_EQ(attempt, 1u) << "run " << run;
  }
  EXPECT_TRUE(cluster_.LogEvents("agent.log", "run_fenced").empty());
}

// Done-when of issue 10: a partition longer than the TTL. The agent stopped writing
// before the controller re-leased the device; the run completes on its next attempt.
TEST_F(ChaosTest, PartitionLongerThanTheTtl) {
  StartBehindProxy();
  const uint64_t id = SubmitAndWaitMidRun();
  proxy_->Stall();
  Hold(absl::Milliseconds(2 * T().ttl_ms));
  proxy_->Resume();
  std::map<uint64_t, uint32_t> attempts = CheckInvariants(id, {"agent.log"});
  EXPECT_EQ(attempts.begin()->second, 2u);
  EXPECT_EQ(CheckFencedBeforeExpiry("agent.log"), 1);
}

// Connections reset and refused for a moment: the agent reconnects within the TTL and
// keeps its lease; nothing runs twice.
TEST_F(ChaosTest, ConnectionResetAndRefusedBriefly) {
  StartBehindProxy();
  const uint64_t id = SubmitAndWaitMidRun();
  proxy_->SetRefuse(true);
  proxy_->ResetAll();
  Hold(absl::Milliseconds(T().ttl_ms / 4));
  proxy_->SetRefuse(false);
  for (const auto& [run, attempt] : CheckInvariants(id, {"agent.log"})) {
    EXPECT_EQ(attempt, 1u) << "run " << run;
  }
  EXPECT_GE(proxy_->connections(), 2u);
}

// Done-when of issue 10: the database's filesystem fills up mid-run and is freed. No
// acknowledged sample is lost, the run completes with every sample, and the agent never
// had to reconnect.
TEST_F(ChaosTest, DatabaseDiskFillsAndIsFreedMidRun) {
  const std::string fs = cluster_.dir().File("dbfs");
  mkdir(fs.c_str(), 0700);
  if (mount("tmpfs", fs.c_str(), "tmpfs", 0, "size=8m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs (needs root)";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{fs};
  controller_ = cluster_.StartController(ControllerFlags(fs + "/db.sqlite"));
  agent_ = cluster_.StartAgent("agent", AgentConfig("unix:" + cluster_.socket()));
  const uint64_t id = SubmitAndWaitMidRun();
  {
    std::ofstream filler(fs + "/filler", std::ios::binary);
    const std::string block(64 << 10, 'x');
    while (filler.write(block.data(), block.size()) && filler.flush()) {
    }
  }
  // Full: wait (polling the log, bounded) until the controller has refused a write.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (cluster_.LogEvents("controller.log", "sample_store_failed").empty() &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_FALSE(cluster_.LogEvents("controller.log", "sample_store_failed").empty());
  Hold(absl::Milliseconds(500));  // stays full for a while
  unlink((fs + "/filler").c_str());
  for (const auto& [run, attempt] : CheckInvariants(id, {"agent.log"})) {
    EXPECT_EQ(attempt, 1u) << "run " << run;
  }
  EXPECT_TRUE(cluster_.LogEvents("agent.log", "controller_stream_ended").empty())
      << "recovered on the same stream";
  controller_->Terminate(absl::Seconds(20));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((fs + "/db.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  sqlite3_stmt* check = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &check, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(check), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(check, 0)), "ok");
  sqlite3_finalize(check);
  sqlite3_close(db);
}

// Two agents configured with the same id (a cloned VM): the second is refused with a
// clear error while the first is connected, `agents` shows the refusal, and the second
// takes over once the first is gone.
TEST_F(ChaosTest, TwoAgentsWithTheSameId) {
  StartOnSocket();
  auto poll = [](const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (!done() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
    return done();
  };
  ASSERT_TRUE(poll([&] {
    auto agents = cluster_.Agents();
    return agents.size() == 1 && agents[0].connected();
  }));
  auto clone = cluster_.StartAgent(
      "clone", absl::StrCat("controller: unix:", cluster_.socket(),
                            "\nagent_id: chaos-agent\nstate_dir: ", cluster_.dir().File("clone"),
                            "\nsim_devices: [sim:ssd]\ndevices: []\n"));
  ASSERT_TRUE(
      poll([&] { return !cluster_.LogEvents("clone.log", "controller_stream_ended").empty(); }));
  const std::string refused = cluster_.LogEvents("clone.log", "controller_stream_ended")[0];
  EXPECT_THAT(LogField(refused, "error"), HasSubstr("already connected"));
  EXPECT_FALSE(cluster_.LogEvents("controller.log", "duplicate_agent_refused").empty());
  std::vector<v1::AgentInfo> agents = cluster_.Agents();
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_GE(agents[0].refused_duplicates(), 1u);
  EXPECT_EQ(agents[0].devices(0).path(), loop_->path());  // the first one's devices

  agent_->Terminate(absl::Seconds(20));
  EXPECT_TRUE(poll([&] {
    auto now = cluster_.Agents();
    return now.size() == 1 && now[0].connected() && now[0].devices_size() == 1 &&
           now[0].devices(0).path() == "sim:ssd";
  })) << "the clone takes the id once the first agent is gone";
}

// The soak: random faults (seeded, so a failure replays) for BLKBENCH_SOAK_MINUTES over
// many runs, the same invariants after every experiment. Skipped unless that variable
// is set: ctest runs it as ChaosSoak with label `soak`, outside scripts/test.sh's run
// (`ctest -L soak`; docs/reliability.md has the last result).
TEST_F(ChaosTest, SoakRandomFaults) {
  const char* minutes = getenv("BLKBENCH_SOAK_MINUTES");
  if (minutes == nullptr) GTEST_SKIP() << "set BLKBENCH_SOAK_MINUTES to soak";
  const char* seed_env = getenv("BLKBENCH_SOAK_SEED");
  const uint64_t seed = seed_env ? std::stoull(seed_env) : 1;
  std::mt19937_64 rng(seed);
  extra_flags_ = {"--max_attempts=20"};  // every fault may cost an attempt
  StartBehindProxy();
  const absl::Time end = absl::Now() + absl::Minutes(std::stod(minutes));
  std::map<std::string, int> injected;
  int experiments = 0, runs = 0, reexecuted = 0;
  while (absl::Now() < end) {
    const uint64_t id = cluster_.Submit(Matrix());
    // Two to four faults per experiment, each at a random point and of random length
    // (up to twice the TTL).
    const int faults = 2 + static_cast<int>(rng() % 3);
    for (int f = 0; f < faults; ++f) {
      cluster_.WatchUntil(id, [](const v1::Experiment& e) {
        return DaemonCluster::Ended(e) ||
               std::any_of(e.runs().begin(), e.runs().end(),
                           [](const v1::Run& r) { return r.samples() >= 2; });
      });
      Hold(absl::Milliseconds(static_cast<int64_t>(rng() % 1500)));
      const absl::Duration d =
          absl::Milliseconds(200 + static_cast<int64_t>(rng() % (2 * T().ttl_ms)));
      switch (rng() % 5) {
        case 0:
          ++injected["controller SIGSTOP"];
          controller_->Signal(SIGSTOP);
          Hold(d);
          controller_->Signal(SIGCONT);
          break;
        case 1:
          // Shorter than the TTL: a pause past it breaks the bounded-pause assumption
          // self-fencing rests on (docs/architecture.md), tested on its own above.
          ++injected["agent SIGSTOP"];
          agent_->Signal(SIGSTOP);
          Hold(absl::Milliseconds(200 + static_cast<int64_t>(rng() % (T().ttl_ms / 2))));
          agent_->Signal(SIGCONT);
          break;
        case 2:
          ++injected["partition"];
          proxy_->Stall();
          Hold(d);
          proxy_->Resume();
          break;
        case 3:
          ++injected["connection reset"];
          proxy_->ResetAll();
          break;
        default:
          ++injected["controller SIGKILL + restart"];
          RestartController();
          break;
      }
    }
    for (const auto& [run, attempt] : CheckInvariants(id, {"agent.log"})) {
      ++runs;
      if (attempt > 1) ++reexecuted;
    }
    ++experiments;
    if (HasFailure()) break;
  }
  const int given_away = CheckFencedBeforeExpiry("agent.log");
  printf("soak (seed %lu, %s min): %d experiments, %d runs, %d re-executed; faults:",
         static_cast<unsigned long>(seed), minutes, experiments, runs, reexecuted);
  for (const auto& [what, n] : injected) printf(" %s %d;", what.c_str(), n);
  printf(" leases given away, each after the agent had stopped: %d\n", given_away);
}

}  // namespace
}  // namespace blkbench
