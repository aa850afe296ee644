// controller_load: N fake agents over real gRPC against a real blkbench-controller (the
// binary, on loopback, its SQLite file in a temp dir on the real disk). Each agent
// registers one device, gets one run of a submitted experiment, streams samples with
// fio-style latency histograms (common/histogram.h) at --rate per second for --run_s,
// heartbeats like a real agent and sends a result. Reports ack latency (sample sent →
// ack covering it) p50/p99/max, acked samples/s, controller CPU and RSS (docs/performance.md,
// "Controller under load").
//
// The agents are gRPC callback reactors (one channel each, as in a lab: a connection per
// agent) driven by one timer thread, so the generator does not need a thread per agent.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "blkbench/v1/agent.grpc.pb.h"
#include "blkbench/v1/controller.grpc.pb.h"
#include "common/histogram.h"
#include "controller/store/testing/pg_server.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(int, agents, 100, "fake agents (one device, one run each)");
ABSL_FLAG(double, rate, 1.0, "samples per second per agent");
ABSL_FLAG(int, buckets, 64, "non-empty buckets in each sample's latency histogram");
ABSL_FLAG(int, run_s, 30, "run length in seconds (samples = rate x run_s)");
ABSL_FLAG(int, heartbeat_ms, 5000, "agent heartbeat interval");
ABSL_FLAG(std::string, controller_bin, "",
          "blkbench-controller binary (default: ../controller/blkbench-controller next to "
          "this binary)");
ABSL_FLAG(std::string, db_dir, "",
          "directory for the controller's SQLite file (default: a new dir under "
          "/var/tmp, which is on the real disk)");
ABSL_FLAG(std::string, store, "sqlite",
          "sqlite (a file in --db_dir) or postgresql (a real server initdb'd into --db_dir, "
          "on a Unix socket, as the store tests start it)");
ABSL_FLAG(std::string, controller_flags, "",
          "extra flags for the controller, space-separated (e.g. --commit_window_ms=5)");
ABSL_FLAG(int, timeout_s, 0, "give up after this long (default: run_s + 60)");
ABSL_FLAG(int, queued_runs, 0,
          "instead of agents: submit one experiment of this many runs (100 cells) that no "
          "agent matches, and report the submit time, the controller's CPU while they wait "
          "(--idle_s) and the latency of list and of showing another experiment");
ABSL_FLAG(int, idle_s, 10, "with --queued_runs: how long to measure the waiting controller");
ABSL_FLAG(bool, queued_match, false,
          "with --queued_runs: the big experiment targets the agents' device class, so the "
          "submit places --agents of its runs (submit + place), the rest wait");

namespace {

using blkbench::LatencyHistogram;
namespace v1 = blkbench::v1;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The controller's CPU time (utime + stime, seconds) and RSS / peak RSS (MB) from /proc.
struct ProcUsage {
  double cpu_s = 0;
  double rss_mb = 0;
  double hwm_mb = 0;
  long threads = 0;
};
ProcUsage ReadProc(pid_t pid) {
  ProcUsage u;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  // Fields after the ")" of comm: state is field 3; utime, stime are 14, 15.
  const size_t close = line.rfind(')');
  if (close != std::string::npos) {
    std::vector<std::string> f;
    std::string cur;
    for (char c : line.substr(close + 2)) {
      if (c == ' ') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (f.size() > 12) {
      const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
      u.cpu_s = (std::stod(f[11]) + std::stod(f[12])) / hz;
    }
  }
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    long v = 0;
    if (key == "VmRSS:" && status >> v) u.rss_mb = static_cast<double>(v) / 1024;
    if (key == "VmHWM:" && status >> v) u.hwm_mb = static_cast<double>(v) / 1024;
    if (key == "Threads:") status >> u.threads;
  }
  return u;
}

double SelfCpuS() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("controller_load: a free loopback port");
    std::exit(1);
  }
  close(fd);
  return ntohs(addr.sin_port);
}

// What every fake agent shares: the ack latency histogram and counters.
struct Totals {
  absl::Mutex mu;
  LatencyHistogram ack_lat ABSL_GUARDED_BY(mu);
  uint64_t acked ABSL_GUARDED_BY(mu) = 0;
  uint64_t retries ABSL_GUARDED_BY(mu) = 0;  // acks with retry_after_ms (store failed)
  uint64_t rejected ABSL_GUARDED_BY(mu) = 0;
  std::atomic<int> registered{0};
  std::atomic<int> assigned{0};
  std::atomic<int> finished{0};
  std::atomic<int> ended{0};  // streams that ended (error or done)
};

// A sample's latency histogram with exactly `buckets` non-empty buckets, as an agent's
// interval histogram of a few thousand I/Os looks (64 buckets span ~1.5 octaves).
v1::Histogram MakeHistogram(int buckets, uint64_t seq) {
  LatencyHistogram h;
  const uint32_t first = LatencyHistogram::BucketIndex(50'000);
  for (int i = 0; i < buckets; ++i) {
    h.AddN(LatencyHistogram::BucketValue(first + static_cast<uint32_t>(i)), 1 + (seq + i) % 97);
  }
  v1::Histogram out;
  h.ToProto(&out);
  return out;
}

class FakeAgent final : public grpc::ClientBidiReactor<v1::AgentMessage, v1::ControllerMessage> {
 public:
  FakeAgent(int index, const std::string& target, Totals& totals) : index_(index), totals_(totals) {
    grpc::ChannelArguments args;
    args.SetInt("blkbench.bench.connection", index);  // a connection per agent
    stub_ = v1::AgentService::NewStub(
        grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
  }

  void Start() {
    stub_->async()->Connect(&ctx_, this);
    v1::AgentMessage reg;
    v1::Register* r = reg.mutable_register_();
    r->set_agent_id(absl::StrCat("load-", index_));
    r->set_instance_id(absl::StrCat("load-", index_, "-", getpid()));
    r->set_connection(1);
    r->mutable_host()->set_kernel_release("6.1.0-load");
    r->mutable_host()->set_hostname(r->agent_id());
    v1::DeviceFacts* d = r->add_devices();
    d->set_path("/dev/nullb0");
    d->set_device_class("loadbench");
    d->set_is_block(true);
    d->set_size_bytes(1ull << 30);
    d->set_logical_block_size(512);
    d->set_physical_block_size(4096);
    Enqueue(std::move(reg));
    StartRead(&in_);
    StartCall();
  }

  // Called by the driver when the next message is due; returns the next due time, or
  // nullopt when this agent has nothing more to send.
  bool Due(Clock::time_point now, Clock::time_point* next) {
    absl::MutexLock lock(&mu_);
    if (!assigned_ || done_) return false;
    const int samples = static_cast<int>(absl::GetFlag(FLAGS_rate) * absl::GetFlag(FLAGS_run_s));
    const auto interval = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / absl::GetFlag(FLAGS_rate)));
    const auto hb_interval = std::chrono::milliseconds(absl::GetFlag(FLAGS_heartbeat_ms));
    if (now >= next_hb_) {
      v1::AgentMessage hb;
      hb.mutable_heartbeat()->set_seq(++hb_seq_);
      v1::ActiveRun* ar = hb.mutable_heartbeat()->add_active_runs();
      ar->set_run_id(assign_.run_id());
      ar->set_attempt(assign_.attempt());
      ar->set_lease_id(assign_.lease_id());
      ar->set_last_acked_seq(acked_through_);
      EnqueueLocked(std::move(hb));
      next_hb_ += hb_interval;
    }
    if (now >= next_sample_ && next_seq_ <= static_cast<uint64_t>(samples)) {
      const uint64_t seq = next_seq_++;
      v1::AgentMessage m;
      v1::RunSample* rs = m.mutable_sample();
      rs->set_run_id(assign_.run_id());
      rs->set_attempt(assign_.attempt());
      rs->set_lease_id(assign_.lease_id());
      v1::Sample* s = rs->mutable_sample();
      s->set_seq(seq);
      s->set_interval_ns(static_cast<uint64_t>(1e9 / absl::GetFlag(FLAGS_rate)));
      s->set_offset_ns(seq * s->interval_ns());
      s->mutable_io()->set_read_ios(4000 + seq);
      s->mutable_io()->set_read_bytes((4000 + seq) * 4096);
      *s->mutable_lat() = MakeHistogram(absl::GetFlag(FLAGS_buckets), seq);
      sent_at_.push_back(Clock::now());
      EnqueueLocked(std::move(m));
      next_sample_ += interval;
    }
    if (next_seq_ > static_cast<uint64_t>(samples) && !finish_sent_ &&
        acked_through_ >= static_cast<uint64_t>(samples)) {
      SendFinishedLocked(samples);
    }
    *next = std::min(next_hb_, next_seq_ <= static_cast<uint64_t>(samples)
                                   ? next_sample_
                                   : now + std::chrono::milliseconds(20));
    return true;
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ends; OnDone follows
    {
      absl::MutexLock lock(&mu_);
      Handle(in_);
    }
    StartRead(&in_);
  }
  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    out_.pop_front();
    if (!ok) return;
    if (!out_.empty()) StartWrite(&out_.front());
  }
  void OnDone(const grpc::Status& s) override {
    if (!s.ok() && !stopping_.load()) {
      std::fprintf(stderr, "agent %d: stream ended: %s\n", index_, s.error_message().c_str());
    }
    totals_.ended.fetch_add(1);
    absl::MutexLock lock(&mu_);
    ended_ = true;
  }
  void Stop() {
    stopping_.store(true);
    ctx_.TryCancel();
  }
  bool ended() {
    absl::MutexLock lock(&mu_);
    return ended_;
  }

 private:
  void Enqueue(v1::AgentMessage m) {
    absl::MutexLock lock(&mu_);
    EnqueueLocked(std::move(m));
  }
  void EnqueueLocked(v1::AgentMessage m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    out_.push_back(std::move(m));
    if (out_.size() == 1) StartWrite(&out_.front());
  }
  void SendFinishedLocked(int samples) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    finish_sent_ = true;
    v1::AgentMessage m;
    v1::RunFinished* f = m.mutable_finished();
    f->set_run_id(assign_.run_id());
    f->set_attempt(assign_.attempt());
    f->set_lease_id(assign_.lease_id());
    f->set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
    f->set_last_sample_seq(static_cast<uint64_t>(samples));
    v1::RunResult* r = f->mutable_result();
    r->set_duration_ns(static_cast<uint64_t>(absl::GetFlag(FLAGS_run_s)) * 1'000'000'000);
    r->set_iops(4000);
    r->set_bw_bytes_per_sec(4000.0 * 4096);
    *r->mutable_lat() = MakeHistogram(absl::GetFlag(FLAGS_buckets) * 2, 0);
    *r->mutable_read_lat() = r->lat();
    r->set_runner("load");
    EnqueueLocked(std::move(m));
  }
  void Handle(const v1::ControllerMessage& msg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (msg.has_registered()) {
      totals_.registered.fetch_add(1);
      return;
    }
    if (msg.has_assign() && !assigned_) {
      assign_ = msg.assign();
      assigned_ = true;
      totals_.assigned.fetch_add(1);
      // Spread the agents' sample phases over one interval, as independent agents are.
      const auto now = Clock::now();
      const auto interval = std::chrono::duration<double>(1.0 / absl::GetFlag(FLAGS_rate));
      next_sample_ = now + std::chrono::duration_cast<Clock::duration>(
                               interval * ((index_ * 7919) % 1000) / 1000.0);
      next_hb_ = now + std::chrono::milliseconds(absl::GetFlag(FLAGS_heartbeat_ms));
      return;
    }
    if (!msg.has_ack() || !assigned_ || msg.ack().run_id() != assign_.run_id()) return;
    const v1::Ack& ack = msg.ack();
    if (!ack.error().empty()) {
      absl::MutexLock lock(&totals_.mu);
      ++totals_.rejected;
      done_ = true;
      return;
    }
    if (ack.finished()) {
      if (!done_) totals_.finished.fetch_add(1);
      done_ = true;
      return;
    }
    const auto now = Clock::now();
    absl::MutexLock lock(&totals_.mu);
    if (ack.retry_after_ms() > 0) ++totals_.retries;
    while (acked_through_ < ack.sample_seq() && !sent_at_.empty()) {
      totals_.ack_lat.Add(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(now - sent_at_.front()).count()));
      sent_at_.pop_front();
      ++acked_through_;
      ++totals_.acked;
    }
  }

  const int index_;
  Totals& totals_;
  std::unique_ptr<v1::AgentService::Stub> stub_;
  grpc::ClientContext ctx_;
  v1::ControllerMessage in_;
  std::atomic<bool> stopping_{false};
  absl::Mutex mu_;
  std::deque<v1::AgentMessage> out_ ABSL_GUARDED_BY(mu_);  // front: being written
  bool assigned_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_sent_ ABSL_GUARDED_BY(mu_) = false;
  v1::RunAssignment assign_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t acked_through_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t hb_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<Clock::time_point> sent_at_ ABSL_GUARDED_BY(mu_);  // of unacked samples
  Clock::time_point next_sample_ ABSL_GUARDED_BY(mu_);
  Clock::time_point next_hb_ ABSL_GUARDED_BY(mu_);
};

pid_t StartController(const std::string& bin, const std::string& db, int port, int agents) {
  std::vector<std::string> args = {
      bin,
      absl::StrCat("--listen=127.0.0.1:", port),
      "--insecure",  // plain text on loopback: the load generator's fake agents and CLI
      "--socket=",
      absl::StrCat("--db=", db),
      "--metrics_listen=",
      absl::StrCat("--max_agent_streams=", agents + 100),
      absl::StrCat("--max_runs=", std::max(100'000, absl::GetFlag(FLAGS_queued_runs))),
  };
  std::string extra = absl::GetFlag(FLAGS_controller_flags);
  size_t pos = 0;
  while (pos < extra.size()) {
    size_t sp = extra.find(' ', pos);
    if (sp == std::string::npos) sp = extra.size();
    if (sp > pos) args.push_back(extra.substr(pos, sp - pos));
    pos = sp + 1;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the bench
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);  // its per-run log lines would dominate the bench
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// --queued_runs: a small experiment, then a big one nothing can place; the cost of the
// big one while it waits.
int QueuedRuns(v1::ControllerService::Stub& cli, pid_t pid, const Totals& totals) {
  const int runs = absl::GetFlag(FLAGS_queued_runs);
  auto submit = [&](const std::string& text, v1::Experiment* exp) {
    v1::SubmitExperimentRequest req;
    req.set_file_name("queued.yaml");
    req.set_matrix_text(text);
    grpc::ClientContext ctx;
    return cli.SubmitExperiment(&ctx, req, exp);
  };
  v1::Experiment small, big;
  grpc::Status st = submit(
      "name: small\nrepeats: 1\njob: {rw: randread, bs: 4k, iodepth: 4, ioengine: io_uring, "
      "runtime: 1s, time_based: 1}\ntarget: {device_class: nomatch}\n",
      &small);
  if (!st.ok()) {
    std::fprintf(stderr, "submit small: %s\n", st.error_message().c_str());
    return 1;
  }
  std::string depths;
  for (int c = 1; c <= 100; ++c) absl::StrAppend(&depths, c > 1 ? ", " : "", c);
  const auto t0 = Clock::now();
  st = submit(absl::StrCat("name: big\nrepeats: ", runs / 100,
                           "\njob: {rw: randread, bs: 4k, ioengine: io_uring, runtime: 1s, "
                           "time_based: 1}\nmatrix:\n  iodepth: [",
                           depths, "]\ntarget: {device_class: ",
                           absl::GetFlag(FLAGS_queued_match) ? "loadbench" : "nomatch", "}\n"),
              &big);
  const double submit_s = SecondsSince(t0);  // Submit answers after its placement pass
  if (!st.ok()) {
    std::fprintf(stderr, "submit big: %s\n", st.error_message().c_str());
    return 1;
  }
  const ProcUsage before = ReadProc(pid);
  const auto t1 = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(absl::GetFlag(FLAGS_idle_s)));
  const ProcUsage after = ReadProc(pid);
  const double idle_cpu = 100 * (after.cpu_s - before.cpu_s) / SecondsSince(t1);
  auto timed = [](auto&& call) {
    const auto t = Clock::now();
    grpc::Status s = call();
    return s.ok() ? SecondsSince(t) * 1000 : -1.0;
  };
  const double list_ms = timed([&] {
    v1::ListExperimentsRequest req;
    req.set_limit(20);
    v1::ListExperimentsResponse resp;
    grpc::ClientContext ctx;
    return cli.ListExperiments(&ctx, req, &resp);
  });
  const double show_ms = timed([&] {
    v1::GetExperimentRequest req;
    req.set_id(small.id());
    v1::Experiment resp;
    grpc::ClientContext ctx;
    return cli.GetExperiment(&ctx, req, &resp);
  });
  std::printf(
      "queued runs %d: submit %.2f s (%d placed) | waiting: controller cpu %.1f %% of a core, "
      "rss %.0f MB (peak %.0f) | list %.1f ms, show another experiment %.1f ms\n",
      big.runs_size(), submit_s, totals.assigned.load(), idle_cpu, after.rss_mb, after.hwm_mb,
      list_ms, show_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // The generator's share of the 2 CPUs is the controller's loss: Debian's absl checks
  // every Lock() against its deadlock graph (6 % of this process's CPU at 1,000 agents),
  // which the release controller does not do either (common/daemon_flags.h).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const int n = absl::GetFlag(FLAGS_agents);
  std::string bin = absl::GetFlag(FLAGS_controller_bin);
  if (bin.empty()) {
    bin = (std::filesystem::canonical("/proc/self/exe").parent_path().parent_path() / "controller" /
           "blkbench-controller")
              .string();
  }
  std::filesystem::path dir = absl::GetFlag(FLAGS_db_dir);
  const bool own_dir = dir.empty();
  if (own_dir) dir = std::filesystem::path("/var/tmp") / absl::StrCat("controller_load.", getpid());
  std::filesystem::create_directories(dir);
  std::string db = (dir / "load.db").string();
  std::unique_ptr<blkbench::testing::PgServer> pg;
  if (absl::GetFlag(FLAGS_store) == "postgresql") {
    const std::string pg_bin = blkbench::testing::PgServer::FindBinDir();
    if (pg_bin.empty()) {
      std::fprintf(stderr, "--store=postgresql: PostgreSQL is not installed (scripts/deps.sh)\n");
      return 2;
    }
    auto server = blkbench::testing::PgServer::Create(pg_bin, dir.string());
    if (!server.ok()) {
      std::fprintf(stderr, "--store=postgresql: %s\n", server.status().ToString().c_str());
      return 2;
    }
    pg = std::move(*server);
    auto name = pg->CreateDatabase();
    if (!name.ok()) {
      std::fprintf(stderr, "--store=postgresql: %s\n", name.status().ToString().c_str());
      return 2;
    }
    db = pg->Uri(*name);
  } else if (absl::GetFlag(FLAGS_store) != "sqlite") {
    std::fprintf(stderr, "--store: expected sqlite or postgresql, got \"%s\"\n",
                 absl::GetFlag(FLAGS_store).c_str());
    return 2;
  }
  std::printf("store: %s\n", absl::GetFlag(FLAGS_store).c_str());
  const int port = FreePort();
  const std::string target = absl::StrCat("127.0.0.1:", port);
  const pid_t pid = StartController(bin, db, port, n);

  // Wait for the controller to serve.
  grpc::ChannelArguments cli_args;
  cli_args.SetMaxReceiveMessageSize(-1);  // Submit answers with every run of the experiment
  auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), cli_args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(20))) {
    std::fprintf(stderr, "controller %s did not come up on %s\n", bin.c_str(), target.c_str());
    kill(pid, SIGKILL);
    return 1;
  }
  auto cli = v1::ControllerService::NewStub(channel);

  if (absl::GetFlag(FLAGS_queued_runs) > 0) {
    // --agents idle agents whose devices the runs do not match.
    Totals idle_totals;
    std::vector<std::unique_ptr<FakeAgent>> idle_agents;
    for (int i = 0; i < n; ++i) {
      idle_agents.push_back(std::make_unique<FakeAgent>(i, target, idle_totals));
      idle_agents.back()->Start();
    }
    while (idle_totals.registered.load() + idle_totals.ended.load() < n) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const int code = QueuedRuns(*cli, pid, idle_totals);
    for (auto& a : idle_agents) a->Stop();
    for (auto& a : idle_agents) {
      while (!a->ended()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    pg.reset();  // stops the server before its directory goes
    if (own_dir) std::filesystem::remove_all(dir);
    return code;
  }

  Totals totals;
  std::vector<std::unique_ptr<FakeAgent>> agents;
  const auto t_connect = Clock::now();
  for (int i = 0; i < n; ++i) {
    agents.push_back(std::make_unique<FakeAgent>(i, target, totals));
    agents.back()->Start();
  }
  // Every agent registered before the experiment is submitted: one placement pass places
  // all runs (as when a lab's agents are up and an experiment arrives).
  while (totals.registered.load() + totals.ended.load() < n &&
         Clock::now() < t_connect + std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "%d of %d agents registered after %.1f s; submitting\n",
               totals.registered.load(), n, SecondsSince(t_connect));
  const ProcUsage idle = ReadProc(pid);
  v1::SubmitExperimentRequest req;
  req.set_file_name("load.yaml");
  // Exactly n runs: c cells (block sizes) x n/c repeats, repeats being at most 1,000.
  int cells = (n + 999) / 1000;
  while (cells <= 8 && n % cells != 0) ++cells;
  if (cells > 8) {
    std::fprintf(stderr, "--agents=%d: use a multiple of 1..8 up to 8,000\n", n);
    kill(pid, SIGKILL);
    return 2;
  }
  std::string sizes;
  for (int c = 0; c < cells; ++c) absl::StrAppend(&sizes, c ? ", " : "", 4 << c, "k");
  req.set_matrix_text(absl::StrCat(
      "name: load\nrepeats: ", n / cells,
      "\njob: {rw: randread, iodepth: 4, ioengine: io_uring, runtime: ", absl::GetFlag(FLAGS_run_s),
      "s, time_based: 1}\nmatrix:\n  bs: [", sizes, "]\ntarget: {device_class: loadbench}\n"));
  grpc::ClientContext sctx;
  v1::Experiment exp;
  const auto t_submit = Clock::now();
  grpc::Status st = cli->SubmitExperiment(&sctx, req, &exp);
  if (!st.ok()) {
    std::fprintf(stderr, "submit: %s\n", st.error_message().c_str());
    kill(pid, SIGKILL);
    return 1;
  }
  const double submit_s = SecondsSince(t_submit);

  // Drive every agent's sends from one thread, soonest due first.
  using Item = std::pair<Clock::time_point, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> due;
  std::vector<int> waiting(static_cast<size_t>(n));  // not assigned yet
  std::iota(waiting.begin(), waiting.end(), 0);
  Clock::time_point next_scan = Clock::now();
  Clock::time_point next_progress = Clock::now();
  const int timeout_s = absl::GetFlag(FLAGS_timeout_s) > 0 ? absl::GetFlag(FLAGS_timeout_s)
                                                           : absl::GetFlag(FLAGS_run_s) + 60;
  const auto deadline = t_submit + std::chrono::seconds(timeout_s);
  double placed_s = -1;
  const ProcUsage start = ReadProc(pid);
  const double self_start = SelfCpuS();
  while (totals.finished.load() + totals.ended.load() < n && Clock::now() < deadline) {
    const auto now = Clock::now();
    if (placed_s < 0 && totals.assigned.load() == n) placed_s = SecondsSince(t_submit);
    if (!waiting.empty() && now >= next_scan) {  // agents newly assigned join the schedule
      next_scan = now + std::chrono::milliseconds(10);
      std::vector<int> still;
      for (int i : waiting) {
        Clock::time_point next;
        if (agents[static_cast<size_t>(i)]->Due(now, &next)) {
          due.emplace(next, i);
        } else {
          still.push_back(i);
        }
      }
      waiting.swap(still);
    }
    while (!due.empty() && due.top().first <= now) {
      const int i = due.top().second;
      due.pop();
      Clock::time_point next;
      if (agents[static_cast<size_t>(i)]->Due(Clock::now(), &next)) due.emplace(next, i);
    }
    if (now >= next_progress) {
      next_progress = now + std::chrono::seconds(5);
      absl::MutexLock lock(&totals.mu);
      std::fprintf(stderr, "%.0f s: assigned %d acked %llu finished %d ended %d\n",
                   SecondsSince(t_submit), totals.assigned.load(),
                   static_cast<unsigned long long>(totals.acked), totals.finished.load(),
                   totals.ended.load());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the driver's tick
  }
  const double elapsed = SecondsSince(t_submit);
  const ProcUsage end = ReadProc(pid);
  const double self_cpu = SelfCpuS() - self_start;

  for (auto& a : agents) a->Stop();
  for (auto& a : agents) {
    while (!a->ended()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  kill(pid, SIGTERM);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  pg.reset();
  if (own_dir) std::filesystem::remove_all(dir);

  absl::MutexLock lock(&totals.mu);
  const int expected = static_cast<int>(absl::GetFlag(FLAGS_rate) * absl::GetFlag(FLAGS_run_s));
  std::printf(
      "agents %d rate %.1f/s buckets %d run_s %d flags '%s'\n"
      "  ack p50 %.1f ms p99 %.1f ms max %.1f ms | acked %llu of %llu samples, %.0f/s | "
      "retries %llu rejected %llu\n"
      "  submit %.2f s, all placed after %.2f s, all %d/%d runs finished after %.1f s "
      "(connect+register %.1f s before submit)\n"
      "  controller cpu %.0f %% of a core, rss %.0f MB (peak %.0f, %.0f idle), threads %ld | "
      "generator cpu %.0f %%\n",
      n, absl::GetFlag(FLAGS_rate), absl::GetFlag(FLAGS_buckets), absl::GetFlag(FLAGS_run_s),
      absl::GetFlag(FLAGS_controller_flags).c_str(),
      static_cast<double>(totals.ack_lat.Percentile(50)) / 1e6,
      static_cast<double>(totals.ack_lat.Percentile(99)) / 1e6,
      static_cast<double>(totals.ack_lat.max_ns()) / 1e6,
      static_cast<unsigned long long>(totals.acked),
      static_cast<unsigned long long>(expected) * static_cast<unsigned long long>(n),
      static_cast<double>(totals.acked) / elapsed, static_cast<unsigned long long>(totals.retries),
      static_cast<unsigned long long>(totals.rejected), submit_s, placed_s, totals.finished.load(),
      n, elapsed, std::chrono::duration<double>(t_submit - t_connect).count(),
      100 * (end.cpu_s - start.cpu_s) / elapsed, end.rss_mb, end.hwm_mb, idle.rss_mb, end.threads,
      100 * self_cpu / elapsed);
  return totals.finished.load() == n ? 0 : 1;
}
