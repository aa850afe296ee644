// Tests for AgentExporter: scraped over real HTTP, checked against the Prometheus text
// format rules (and by promtool when installed), naming rules, live values from a
// sample, and removal of a finished run's series after the grace period (FakeClock).
#include "agent/metrics/agent_exporter.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include "absl/strings/str_split.h"
#include "common/histogram.h"
#include "common/http/http_get.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

constexpr int64_t kGraceMs = 30'000;

v1::Register Registration() {
  v1::Register reg;
  reg.set_agent_id("testbox-17");
  reg.set_version("0.1.0");
  reg.mutable_host()->set_hostname("testbox-17.lab");
  reg.mutable_host()->set_kernel_release("6.12.0-test");
  v1::DeviceFacts* d = reg.add_devices();
  d->set_path("/dev/nullb0");
  d->set_device_class("null_blk");
  d->set_model("nullb");
  v1::DeviceFacts* sim = reg.add_devices();
  sim->set_path("sim:null_blk");
  sim->set_device_class("sim:null_blk");
  sim->set_simulated(true);
  return reg;
}

v1::RunAssignment Assignment(uint64_t run_id, const std::string& device, std::string kernel,
                             uint32_t attempt = 1) {
  v1::RunAssignment a;
  a.set_run_id(run_id);
  a.set_attempt(attempt);
  a.set_experiment_id(3);
  a.set_device_path(device);
  v1::CellSpec& cell = *a.mutable_cell();
  v1::AxisValue* axis = cell.add_axes();
  axis->set_key("bs");
  axis->set_value("4k");
  cell.mutable_target()->set_device_class(device == "sim:null_blk" ? "sim:null_blk" : "null_blk");
  cell.mutable_target()->set_kernel(std::move(kernel));
  cell.mutable_queue()->set_scheduler("none");
  return a;
}

// Half a second of I/O: `n` 4 KiB reads with lognormal latencies around 80 us.
v1::Sample MakeSample(uint64_t seq, uint64_t n, LatencyHistogram* hist_out = nullptr) {
  std::mt19937_64 rng(seq);
  std::lognormal_distribution<double> lat(std::log(80'000.0), 0.6);
  LatencyHistogram h;
  for (uint64_t i = 0; i < n; ++i) h.Add(static_cast<uint64_t>(lat(rng)));
  v1::Sample s;
  s.set_seq(seq);
  s.set_interval_ns(500'000'000);
  s.mutable_io()->set_read_ios(n);
  s.mutable_io()->set_read_bytes(n * 4096);
  h.ToProto(s.mutable_lat());
  if (hist_out != nullptr) *hist_out = h;
  return s;
}

struct Line {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// A deliberately simple reader of the text format for tests: # HELP / # TYPE lines by
// family, sample lines as name, labels and value. Label values here hold no '"' or ','.
struct Scraped {
  std::map<std::string, std::string> help, type;
  std::vector<Line> lines;

  std::vector<Line> Find(const std::string& name,
                         const std::map<std::string, std::string>& match = {}) const {
    std::vector<Line> out;
    for (const Line& l : lines) {
      if (l.name != name) continue;
      bool all = true;
      for (const auto& [k, v] : match) {
        auto it = l.labels.find(k);
        all = all && it != l.labels.end() && it->second == v;
      }
      if (all) out.push_back(l);
    }
    return out;
  }
  double Value(const std::string& name, const std::map<std::string, std::string>& match = {}) {
    std::vector<Line> found = Find(name, match);
    EXPECT_EQ(found.size(), 1u) << name;
    return found.empty() ? -1 : found[0].value;
  }
};

Scraped Parse(const std::string& text) {
  Scraped out;
  for (absl::string_view view : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const std::string line(view);
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(' ', 3));
      (parts[1] == "HELP" ? out.help : out.type)[parts[2]] = parts.size() > 3 ? parts[3] : "";
      continue;
    }
    Line l;
    const size_t brace = line.find('{');
    const size_t space = line.rfind(' ');
    l.name = line.substr(0, std::min(brace, space));
    if (brace != std::string::npos) {
      const size_t close = line.rfind('}');
      for (absl::string_view kv :
           absl::StrSplit(line.substr(brace + 1, close - brace - 1), ',', absl::SkipEmpty())) {
        std::vector<std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
        l.labels[p[0]] = p[1].substr(1, p[1].size() - 2);
      }
    }
    const std::string v = line.substr(space + 1);
    l.value = v == "NaN" ? std::nan("") : v == "+Inf" ? HUGE_VAL : std::stod(v);
    out.lines.push_back(l);
  }
  return out;
}

class AgentExporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = AgentExporter::Start({.listen = "127.0.0.1:0", .finished_grace_ms = kGraceMs}, clock_);
    ASSERT_TRUE(e.ok()) << e.status();
    exporter_ = std::move(*e);
    exporter_->OnRegister(Registration());
    exporter_->OnConnection(true);
  }
  std::string HttpScrape() {
    auto r = HttpGet(exporter_->port(), "/metrics");
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return "";
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->content_type, kPrometheusContentType);
    return r->body;
  }

  FakeClock clock_;
  std::unique_ptr<AgentExporter> exporter_;
};

TEST_F(AgentExporterTest, EveryFamilyFollowsTheNamingRules) {
  exporter_->OnRunStarted(Assignment(1, "/dev/nullb0", "6.12*"));
  exporter_->OnRunSample(Assignment(1, "/dev/nullb0", "6.12*"), MakeSample(1, 1000));
  exporter_->OnSampleSent(false);
  Scraped s = Parse(HttpScrape());
  ASSERT_FALSE(s.type.empty());
  const std::regex name_re("blkbench_agent_[a-z0-9_]+");
  // Units: base units only, spelled out at the end of the name.
  const std::regex bad_unit(
      ".*_(ms|us|ns|milliseconds|microseconds|nanoseconds|kb|mb|bytes_[a-z]+_total)$");
  for (const auto& [family, type] : s.type) {
    if (family.rfind("process_", 0) == 0 || family == "blkbench_build_info") continue;
    EXPECT_TRUE(std::regex_match(family, name_re)) << family;
    EXPECT_FALSE(std::regex_match(family, bad_unit)) << family;
    EXPECT_FALSE(s.help[family].empty()) << family << " has no help text";
    const bool total = family.size() > 6 && family.substr(family.size() - 6) == "_total";
    EXPECT_EQ(type == "counter", total) << family << " is a " << type;
  }
  for (const Line& l : s.lines) {
    for (const auto& [k, v] : l.labels) {
      EXPECT_NE(k, "quantile") << l.name << ": quantile is reserved for summaries";
    }
  }
}

TEST_F(AgentExporterTest, PromtoolAcceptsTheScrape) {
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool not installed";
  exporter_->OnRunStarted(Assignment(1, "sim:null_blk", "sim:6.16+dd-batch-dispatch"));
  exporter_->OnRunSample(Assignment(1, "sim:null_blk", "sim:6.16+dd-batch-dispatch"),
                         MakeSample(1, 500));
  exporter_->OnRunSample(Assignment(1, "sim:null_blk", "sim:6.16+dd-batch-dispatch"),
                         MakeSample(2, 0));  // an interval with no I/O: NaN percentiles
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("blkbench_agent_promtool." + std::to_string(getpid()) + ".txt");
  std::ofstream(file) << HttpScrape();
  FILE* p = popen(("/usr/bin/promtool check metrics < " + file.string() + " 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  const int rc = pclose(p);
  std::filesystem::remove(file);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "");
}

TEST_F(AgentExporterTest, LiveRunValuesDeviceStateAndLabels) {
  const v1::RunAssignment a = Assignment(5, "sim:null_blk", "sim:6.16+dd-batch-dispatch");
  exporter_->OnRunStarted(a);
  LatencyHistogram h;
  exporter_->OnRunSample(a, MakeSample(1, 2000, &h));
  Scraped s = Parse(exporter_->Scrape());
  const std::map<std::string, std::string> run = {{"run", "5"},
                                                  {"experiment", "3"},
                                                  {"cell", "bs=4k"},
                                                  {"host", "testbox-17.lab"},
                                                  {"device", "sim:null_blk"},
                                                  {"device_class", "sim:null_blk"},
                                                  {"scheduler", "none"},
                                                  {"kernel", "sim:6.16+dd-batch-dispatch"},
                                                  {"profile", "6.16"},
                                                  {"patches", "dd-batch-dispatch"}};
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_run_iops", run), 4000.0);  // 2000 in 0.5 s
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_run_bandwidth_bytes_per_second", run), 4000.0 * 4096);
  auto with = [&run](const std::string& k, const std::string& v) {
    auto m = run;
    m[k] = v;
    return m;
  };
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_run_io_total", with("direction", "read")), 2000);
  EXPECT_DOUBLE_EQ(
      s.Value("blkbench_agent_run_latency_percentile_seconds", with("percentile", "99")),
      static_cast<double>(h.Percentile(99.0)) / 1e9);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_run_latency_seconds_count", run), 2000);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_run_latency_seconds_bucket", with("le", "+Inf")), 2000);
  // Lognormal around 80 us: none at or below 10 us, more than half by 100 us, all by 10 s.
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_run_latency_seconds_bucket", with("le", "1e-05")), 0);
  EXPECT_GT(s.Value("blkbench_agent_run_latency_seconds_bucket", with("le", "0.0001")), 1000);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_run_latency_seconds_bucket", with("le", "10")), 2000);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_device_busy", {{"device", "sim:null_blk"}}), 1);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_device_busy", {{"device", "/dev/nullb0"}}), 0);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_runs_active"), 1);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_controller_connected"), 1);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_info", {{"kernel", "6.12.0-test"}}), 1);
  // No `agent` label of its own: discovery's target label is `agent`.
  for (const Line& l : s.lines) EXPECT_EQ(l.labels.count("agent"), 0u) << l.name;
  EXPECT_EQ(s.Find("blkbench_agent_info", {{"agent_id", "testbox-17"}}).size(), 1u);
  // The standard process metrics and the build.
  EXPECT_GT(s.Value("process_resident_memory_bytes"), 1 << 20);
  EXPECT_GT(s.Value("process_open_fds"), 2);
  EXPECT_GT(s.Value("process_start_time_seconds"), 1.7e9);
  EXPECT_EQ(s.Find("blkbench_build_info").size(), 1u);
  // The agent's own CPU time is exported by mode (it may still round to 0 this early).
  EXPECT_EQ(s.Find("blkbench_agent_cpu_seconds_total", {{"mode", "user"}}).size(), 1u);
  EXPECT_GE(s.Value("blkbench_agent_cpu_seconds_total", {{"mode", "user"}}) +
                s.Value("blkbench_agent_cpu_seconds_total", {{"mode", "system"}}),
            0);

  // A real run's kernel label is the host's release, not the cell's glob.
  const v1::RunAssignment real = Assignment(6, "/dev/nullb0", "6.12*");
  exporter_->OnRunStarted(real);
  s = Parse(exporter_->Scrape());
  EXPECT_EQ(s.Find("blkbench_agent_run_iops", {{"run", "6"}, {"kernel", "6.12.0-test"}}).size(),
            1u);
}

TEST_F(AgentExporterTest, FinishedRunSeriesGoAfterTheGracePeriodAndNotBefore) {
  const v1::RunAssignment a = Assignment(7, "sim:null_blk", "sim:6.16");
  exporter_->OnRunStarted(a);
  exporter_->OnRunSample(a, MakeSample(1, 100));
  v1::RunFinished fin;
  fin.set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
  exporter_->OnRunEnded(a, fin);
  Scraped s = Parse(exporter_->Scrape());
  // Live gauges go at once; counters and the histogram stay for the grace period.
  EXPECT_TRUE(s.Find("blkbench_agent_run_iops", {{"run", "7"}}).empty());
  EXPECT_TRUE(s.Find("blkbench_agent_run_latency_percentile_seconds", {{"run", "7"}}).empty());
  EXPECT_EQ(s.Find("blkbench_agent_run_io_total", {{"run", "7"}}).size(), 2u);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_device_busy", {{"device", "sim:null_blk"}}), 0);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_runs_finished_total", {{"outcome", "succeeded"}}), 1);
  clock_.AdvanceMs(kGraceMs - 1);
  s = Parse(exporter_->Scrape());
  EXPECT_EQ(s.Find("blkbench_agent_run_io_total", {{"run", "7"}}).size(), 2u);
  EXPECT_EQ(exporter_->TrackedRuns(), 1u);
  clock_.AdvanceMs(1);
  s = Parse(HttpScrape());
  for (const Line& l : s.lines) {
    auto it = l.labels.find("run");
    EXPECT_TRUE(it == l.labels.end()) << l.name << " of run " << it->second << " is still there";
  }
  EXPECT_EQ(exporter_->TrackedRuns(), 0u);
}

TEST_F(AgentExporterTest, EndedRunsGoWithoutAScrapeAndBeyondTheCapOldestFirst) {
  auto capped = AgentExporter::Start(
      {.listen = "", .finished_grace_ms = kGraceMs, .max_finished_runs = 5}, clock_);
  ASSERT_TRUE(capped.ok()) << capped.status();
  v1::RunFinished fin;
  fin.set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
  for (uint64_t id = 1; id <= 20; ++id) {
    const v1::RunAssignment a = Assignment(id, "sim:null_blk", "sim:6.16");
    (*capped)->OnRunStarted(a);
    (*capped)->OnRunSample(a, MakeSample(1, 100));
    (*capped)->OnRunEnded(a, fin);
    clock_.AdvanceMs(1);
  }
  // No scrape, no Sweep(): the cap holds as runs end.
  EXPECT_EQ((*capped)->TrackedRuns(), 5u);
  // The grace passes while the agent is idle; the next run's start sweeps the rest.
  clock_.AdvanceMs(kGraceMs);
  (*capped)->OnRunStarted(Assignment(21, "sim:null_blk", "sim:6.16"));
  EXPECT_EQ((*capped)->TrackedRuns(), 1u);
  Scraped s = Parse((*capped)->Scrape());
  for (const Line& l : s.lines) {
    auto it = l.labels.find("run");
    if (it != l.labels.end()) {
      EXPECT_EQ(it->second, "21") << l.name;
    }
  }
}

TEST_F(AgentExporterTest, ConnectionAndSampleBufferCounters) {
  exporter_->OnSampleSent(false);
  exporter_->OnSampleSent(false);
  exporter_->OnSampleSent(true);
  exporter_->OnSampleBuffer(5, 0, 0);
  exporter_->OnSampleBuffer(2, 3, 1);
  exporter_->OnConnection(false);
  exporter_->OnConnection(false);  // repeated: counted once
  exporter_->OnConnection(true);
  Scraped s = Parse(exporter_->Scrape());
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_samples_sent_total", {{"kind", "first"}}), 2);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_samples_sent_total", {{"kind", "resend"}}), 1);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_samples_buffered"), 2);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_samples_acked_total"), 3);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_samples_dropped_total"), 1);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_disconnects_total"), 1);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_registrations_total"), 2);
  EXPECT_DOUBLE_EQ(s.Value("blkbench_agent_controller_connected"), 1);
}

TEST(AgentExporterListenTest, AddressInUseIsUnavailableAndEmptyListenServesNothing) {
  FakeClock clock;
  auto first = AgentExporter::Start({.listen = "127.0.0.1:0"}, clock);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second =
      AgentExporter::Start({.listen = "127.0.0.1:" + std::to_string((*first)->port())}, clock);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  auto none = AgentExporter::Start({.listen = ""}, clock);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->address(), "");
  EXPECT_NE((*none)->Scrape().find("blkbench_agent_controller_connected 0"), std::string::npos);
}

}  // namespace
}  // namespace blkbench
