// The controller tests' fixture: a Controller on a real SQLite store in a temporary
// directory, a fake clock, and fake agent links that record what is sent to them.
#ifndef BLKBENCH_CONTROLLER_CONTROLLER_TEST_UTIL_H_
#define BLKBENCH_CONTROLLER_CONTROLLER_TEST_UTIL_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "controller/controller.h"
#include "controller/store/pg_store.h"
#include "controller/store/sqlite_store.h"
#include "controller/store/testing/pg_server.h"
#include "gtest/gtest.h"

namespace blkbench {

inline constexpr char kMatrix[] = R"(name: t
repeats: 2
job: {rw: randread, bs: 4k, iodepth: 4, ioengine: io_uring, runtime: 1s, time_based: 1}
matrix:
  scheduler: [none, mq-deadline]
target: {device_class: ssd}
)";

// Records everything the controller sends to one agent.
class FakeLink final : public AgentLink {
 public:
  explicit FakeLink(std::string peer = "") : peer_(std::move(peer)) {}
  std::string Peer() const override { return peer_; }
  bool Send(const v1::ControllerMessage& msg) override {
    absl::MutexLock lock(&mu_);
    sent_.push_back(msg);
    return true;
  }
  std::vector<v1::ControllerMessage> Take() {
    absl::MutexLock lock(&mu_);
    return std::exchange(sent_, {});
  }
  static std::vector<v1::RunAssignment> Assignments(const std::vector<v1::ControllerMessage>& m) {
    std::vector<v1::RunAssignment> out;
    for (const auto& x : m) {
      if (x.has_assign()) out.push_back(x.assign());
    }
    return out;
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::ControllerMessage> sent_;
  const std::string peer_;
};

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("controller_test." + std::to_string(getpid()) + "." +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    if (OnPostgres()) {
      std::string skip;
      auto server = ::blkbench::testing::PgServerEnvironment::Get(&skip);
      ASSERT_TRUE(server.ok()) << server.status();
      if (*server == nullptr) GTEST_SKIP() << skip;
      pg_ = *server;
      auto db = pg_->CreateDatabase();
      ASSERT_TRUE(db.ok()) << db.status();
      pg_db_ = *db;
    }
    Reopen();
  }
  void TearDown() override {
    controller_.reset();
    store_.reset();
    if (pg_ != nullptr) {
      EXPECT_TRUE(pg_->DropDatabase(pg_db_).ok());
    }
    std::filesystem::remove_all(dir_);
  }
  // BLKBENCH_TEST_STORE=postgres: every controller test on PgStore, a fresh database of a
  // real server per test (ctest's controller_test_postgres); SQLite otherwise.
  static bool OnPostgres() {
    const char* store = std::getenv("BLKBENCH_TEST_STORE");
    return store != nullptr && std::string(store) == "postgres";
  }
  void Reopen() {
    controller_.reset();
    store_.reset();
    if (pg_ != nullptr) {
      auto s = PgStore::Open(pg_->Uri(pg_db_));
      ASSERT_TRUE(s.ok()) << s.status();
      store_ = std::move(*s);
    } else {
      auto s = SqliteStore::Open((dir_ / "db.sqlite").string());
      ASSERT_TRUE(s.ok()) << s.status();
      store_ = std::move(*s);
    }
    options_.lease_ttl_ms = 30'000;
    options_.max_attempts = 2;
    controller_ = std::make_unique<Controller>(*store_, clock_, options_);
    ASSERT_TRUE(controller_->Start().ok());
  }
  v1::Register Reg(const std::string& id, const std::vector<std::string>& paths,
                   const std::string& cls = "ssd", const std::string& kernel = "6.1.0-test") {
    v1::Register r;
    r.set_agent_id(id);
    r.mutable_host()->set_kernel_release(kernel);
    for (const auto& p : paths) {
      auto* d = r.add_devices();
      d->set_path(p);
      d->set_device_class(cls);
    }
    return r;
  }
  // Sample `seq` of assignment `a`, as its agent sends it.
  static v1::RunSample SampleOf(const v1::RunAssignment& a, uint64_t seq) {
    v1::RunSample rs;
    rs.set_run_id(a.run_id());
    rs.set_attempt(a.attempt());
    rs.set_lease_id(a.lease_id());
    rs.mutable_sample()->set_seq(seq);
    rs.mutable_sample()->set_interval_ns(1'000'000'000);
    return rs;
  }
  // Submits kMatrix and registers agent "a1" with one device on `link`; returns the
  // assignment it gets.
  v1::RunAssignment SubmitAndAssign(const std::shared_ptr<FakeLink>& link) {
    EXPECT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());
    EXPECT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
    std::vector<v1::RunAssignment> got = FakeLink::Assignments(link->Take());
    EXPECT_FALSE(got.empty());
    return got.empty() ? v1::RunAssignment() : got[0];
  }
  // A heartbeat with sequence number `seq` listing `runs`, as their agent sends it.
  static v1::Heartbeat HeartbeatOf(const std::vector<v1::RunAssignment>& runs, uint64_t seq) {
    v1::Heartbeat hb;
    hb.set_seq(seq);
    for (const v1::RunAssignment& a : runs) {
      v1::ActiveRun* ar = hb.add_active_runs();
      ar->set_run_id(a.run_id());
      ar->set_attempt(a.attempt());
      ar->set_lease_id(a.lease_id());
    }
    return hb;
  }
  v1::RunFinished Done(const v1::RunAssignment& a, double iops = 1000) {
    v1::RunFinished f;
    f.set_run_id(a.run_id());
    f.set_attempt(a.attempt());
    f.set_lease_id(a.lease_id());
    f.set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
    f.mutable_result()->set_iops(iops);
    return f;
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  ControllerOptions options_;
  std::unique_ptr<Store> store_;
  ::blkbench::testing::PgServer* pg_ = nullptr;  // BLKBENCH_TEST_STORE=postgres only
  std::string pg_db_;
  std::unique_ptr<Controller> controller_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_CONTROLLER_TEST_UTIL_H_
