// Tests for PrometheusExporter: scraped over real HTTP on 127.0.0.1:0,
// parsed as the text format, checked by promtool when installed; series lifecycle on a
// FakeClock; latency quantiles against LatencyHistogram.
#include "controller/metrics/prometheus_exporter.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>

#include "common/histogram.h"
#include "common/http/http_get.h"
#include "common/testing/command.h"
#include "controller/metrics/exposition_test_util.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using testing::Exposition;
using testing::HttpGet;
using testing::ParseExposition;

constexpr int64_t kGraceMs = 60'000;
constexpr int64_t kIdleMs = 120'000;

v1::CellSpec Cell() {
  v1::CellSpec cell;
  cell.set_index(1);
  v1::AxisValue* axis = cell.add_axes();
  axis->set_key("scheduler");
  axis->set_value("mq-deadline");
  cell.mutable_queue()->set_scheduler("mq-deadline");
  cell.mutable_target()->set_device_class("sim:null_blk");
  cell.mutable_target()->set_kernel("sim:6.16");
  return cell;
}

v1::Run RunAt(uint64_t id, uint32_t attempt = 1, const std::string& agent = "host-a") {
  v1::Run run;
  run.set_id(id);
  run.set_experiment_id(7);
  run.set_cell_index(1);
  run.set_attempt(attempt);
  run.set_state(v1::RUN_RUNNING);
  run.set_agent_id(agent);
  run.set_device_path("sim:null_blk/0");
  return run;
}

// One second of I/O: `reads` reads and `writes` writes of 4 KiB, latencies from `hist`.
v1::Sample MakeSample(uint64_t seq, uint64_t reads, uint64_t writes, const LatencyHistogram& hist) {
  v1::Sample s;
  s.set_seq(seq);
  s.set_offset_ns(seq * 1'000'000'000);
  s.set_interval_ns(1'000'000'000);
  s.mutable_io()->set_read_ios(reads);
  s.mutable_io()->set_write_ios(writes);
  s.mutable_io()->set_read_bytes(reads * 4096);
  s.mutable_io()->set_write_bytes(writes * 4096);
  hist.ToProto(s.mutable_lat());
  return s;
}

LatencyHistogram SomeLatencies(uint64_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> lat(std::log(80'000.0), 0.6);  // ~80 us median
  LatencyHistogram h;
  for (uint64_t i = 0; i < n; ++i) h.Add(static_cast<uint64_t>(lat(rng)));
  return h;
}

v1::AgentInfo Agent(const std::string& id, bool connected, std::vector<std::string> classes) {
  v1::AgentInfo a;
  a.set_agent_id(id);
  a.set_connected(connected);
  for (size_t i = 0; i < classes.size(); ++i) {
    v1::DeviceFacts* d = a.add_devices();
    d->set_path("/dev/dev" + std::to_string(i));
    d->set_device_class(classes[i]);
  }
  return a;
}

class ExporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ExporterOptions options;
    options.listen = "127.0.0.1:0";
    options.finished_grace_ms = kGraceMs;
    options.idle_timeout_ms = kIdleMs;
    auto e = PrometheusExporter::Start(options, clock_);
    ASSERT_TRUE(e.ok()) << e.status();
    exporter_ = std::move(*e);
    ASSERT_GT(exporter_->port(), 0);
  }

  // Scrapes /metrics over HTTP and parses it; fails the test on any error.
  Exposition ScrapeHttp() {
    auto body = HttpGet(exporter_->port(), "/metrics");
    EXPECT_TRUE(body.ok()) << body.status();
    if (!body.ok()) return {};
    auto parsed = ParseExposition(*body);
    EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << *body;
    return parsed.ok() ? *parsed : Exposition{};
  }

  // Feeds one agent, state counts and two samples of run 42.
  void FeedSomething() {
    exporter_->OnAgentsChanged({Agent("host-a", true, {"sim:null_blk", "sim:null_blk", "ssd"}),
                                Agent("host-b", false, {"hdd"})});
    StateCounts counts;
    counts.runs[v1::RUN_RUNNING] = 1;
    counts.runs[v1::RUN_QUEUED] = 3;
    counts.experiments[v1::EXPERIMENT_RUNNING] = 1;
    exporter_->OnStateCounts(counts);
    exporter_->OnRunSample(RunAt(42), Cell(), MakeSample(1, 1000, 500, SomeLatencies(1500, 1)));
    exporter_->OnRunSample(RunAt(42), Cell(), MakeSample(2, 2000, 1000, SomeLatencies(3000, 2)));
  }

  FakeClock clock_;
  std::unique_ptr<PrometheusExporter> exporter_;
};

const std::map<std::string, std::string> kRun42 = {{"experiment", "7"},
                                                   {"run", "42"},
                                                   {"agent", "host-a"},
                                                   {"device", "sim:null_blk/0"},
                                                   {"device_class", "sim:null_blk"},
                                                   {"cell", "scheduler=mq-deadline"},
                                                   {"scheduler", "mq-deadline"},
                                                   {"kernel", "sim:6.16"}};

std::map<std::string, std::string> With(std::map<std::string, std::string> m, const std::string& k,
                                        const std::string& v) {
  m[k] = v;
  return m;
}

TEST_F(ExporterTest, HttpScrapeIsValidTextFormatWithHelpTypeAndNamingRules) {
  FeedSomething();
  Exposition exp = ScrapeHttp();
  ASSERT_FALSE(exp.samples.empty());
  const std::regex name_rule("^blkbench_[a-z0-9_]+$");
  int ours = 0;
  for (const auto& [name, family] : exp.families) {
    if (name.starts_with("process_")) continue;  // the standard process metrics
    ++ours;  // every other family, no library self-metrics (exposer_*) any more
    EXPECT_TRUE(std::regex_match(name, name_rule)) << name;
    EXPECT_TRUE(family.has_help && !family.help.empty()) << name << " has no help";
    EXPECT_FALSE(family.type.empty()) << name << " has no type";
    EXPECT_EQ(family.type == "counter", name.ends_with("_total")) << name;
  }
  // 12 run/state/agent families, 6 service ones (store, placement, limit refusals) that
  // exist from the start, the two security ones and blkbench_build_info; families without
  // series yet (gRPC, results, engine) are not listed.
  EXPECT_EQ(ours, 21);
  EXPECT_EQ(exp.Value("blkbench_controller_insecure", {}), 0.0);
  EXPECT_EQ(
      exp.Value("blkbench_controller_security_info", {{"grpc", "plaintext"}, {"http", "http"}}),
      1.0);
  EXPECT_EQ(exp.Value("blkbench_run_iops", kRun42), 3000.0);
  EXPECT_EQ(exp.Value("blkbench_run_bandwidth_bytes_per_second", kRun42), 3000.0 * 4096);
  EXPECT_EQ(exp.Value("blkbench_run_io_total", With(kRun42, "direction", "read")), 3000.0);
  EXPECT_EQ(exp.Value("blkbench_run_io_total", With(kRun42, "direction", "write")), 1500.0);
  EXPECT_EQ(exp.Value("blkbench_run_io_bytes_total", With(kRun42, "direction", "write")),
            1500.0 * 4096);
  for (const char* q : {"0.5", "0.99", "0.999"}) {
    auto v = exp.Value("blkbench_run_latency_seconds", With(kRun42, "quantile", q));
    ASSERT_TRUE(v.has_value()) << q;
    EXPECT_GT(*v, 1e-6) << q;
    EXPECT_LT(*v, 1.0) << q;
  }
  EXPECT_EQ(exp.families["blkbench_run_latency_seconds"].type, "summary");
  EXPECT_EQ(exp.Value("blkbench_run_latency_seconds_count", kRun42), 4500.0);
  EXPECT_GT(exp.Value("blkbench_run_latency_seconds_sum", kRun42).value_or(0), 4500 * 10e-6);
  EXPECT_EQ(exp.Value("blkbench_samples_ingested_total"), 2.0);
  EXPECT_EQ(exp.Value("blkbench_runs", {{"state", "running"}}), 1.0);
  EXPECT_EQ(exp.Value("blkbench_runs", {{"state", "queued"}}), 3.0);
  EXPECT_EQ(exp.Value("blkbench_runs", {{"state", "canceled"}}), 0.0);
  EXPECT_EQ(exp.Find("blkbench_runs").size(), 6u);
  EXPECT_EQ(exp.Value("blkbench_experiments", {{"state", "running"}}), 1.0);
  EXPECT_EQ(exp.Find("blkbench_experiments").size(), 5u);
  EXPECT_EQ(exp.Value("blkbench_agents", {{"state", "connected"}}), 1.0);
  EXPECT_EQ(exp.Value("blkbench_agents", {{"state", "disconnected"}}), 1.0);
  EXPECT_EQ(exp.Value("blkbench_agent_connected", {{"agent", "host-b"}}), 0.0);
  EXPECT_EQ(
      exp.Value("blkbench_agent_devices", {{"agent", "host-a"}, {"device_class", "sim:null_blk"}}),
      2.0);
  EXPECT_EQ(exp.Value("blkbench_agent_devices", {{"agent", "host-b"}, {"device_class", "hdd"}}),
            1.0);
}

TEST_F(ExporterTest, ProcessMetricsAndBuildInfoAreExported) {
  Exposition exp = ScrapeHttp();
  EXPECT_EQ(exp.families.at("process_cpu_seconds_total").type, "counter");
  EXPECT_GT(exp.Value("process_resident_memory_bytes").value_or(0), 1 << 20);
  EXPECT_GT(exp.Value("process_virtual_memory_bytes").value_or(0), 1 << 20);
  EXPECT_GT(exp.Value("process_threads").value_or(0), 1);
  EXPECT_GT(exp.Value("process_max_fds").value_or(0), exp.Value("process_open_fds").value_or(0));
  const auto info = exp.Find("blkbench_build_info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_FALSE(info[0].labels.at("version").empty());
  EXPECT_FALSE(info[0].labels.at("revision").empty());
}

TEST_F(ExporterTest, PromtoolAcceptsTheScrape) {
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool not installed";
  FeedSomething();
  exporter_->OnRunSample(RunAt(43, 2, "host-\"quoted\"\\b"), Cell(),
                         MakeSample(1, 0, 0, LatencyHistogram()));  // NaN quantiles, escaping
  auto body = HttpGet(exporter_->port(), "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  absl::Status checked = testing::PromtoolCheckMetrics(*body);
  EXPECT_TRUE(checked.ok()) << checked << "\n" << *body;
}

// After a big experiment (kept for the grace period) /metrics is megabytes: every scrape,
// plain or gzip as Prometheus asks, must arrive whole (HttpGet checks Content-Length
// and the gzip stream) and be valid. Before the fix civetweb reset the connection after
// ~128 KB and Prometheus marked the controller down.
TEST_F(ExporterTest, MultiMegabyteScrapesArriveWholePlainAndGzipAndPromtoolAcceptsThem) {
  constexpr uint64_t kRuns = 1500;
  const LatencyHistogram lat = SomeLatencies(2000, 3);
  for (uint64_t id = 1; id <= kRuns; ++id) {
    exporter_->OnRunSample(RunAt(id), Cell(), MakeSample(1, 1000 + id, 500, lat));
    v1::RunResult result;
    result.set_iops(1000.0 + static_cast<double>(id));
    result.mutable_lat_summary()->set_p99_ns(200'000 + id);
    result.set_runner("engine");
    (*result.mutable_internals())["seq_ratio"] = 0.4;
    (*result.mutable_internals())["tags.waits"] = static_cast<double>(id);
    exporter_->OnRunResult(RunAt(id), Cell(), result);
    exporter_->OnRunFinished(RunAt(id));
  }
  const std::string reference = exporter_->Scrape();
  ASSERT_GT(reference.size(), 2u << 20);
  for (int i = 0; i < 8; ++i) {
    const bool gzip = i % 2 == 1;
    auto r = blkbench::HttpGet(exporter_->port(), "/metrics",
                               {.timeout = absl::Seconds(60), .accept_gzip = gzip});
    ASSERT_TRUE(r.ok()) << "scrape " << i << ": " << r.status();
    ASSERT_EQ(r->status, 200);
    EXPECT_EQ(r->content_encoding, gzip ? "gzip" : "");
    // Nothing changes between scrapes but the exporter's own scrape counters.
    EXPECT_NEAR(static_cast<double>(r->body.size()), static_cast<double>(reference.size()), 512)
        << "scrape " << i;
    ASSERT_TRUE(ParseExposition(r->body).ok()) << "scrape " << i;
    if (i < 2) {
      absl::Status checked = testing::PromtoolCheckMetrics(r->body);
      if (checked.code() != absl::StatusCode::kFailedPrecondition) {
        EXPECT_TRUE(checked.ok()) << checked;
      }
    }
  }
}

TEST_F(ExporterTest, LatencyQuantilesMatchHistogramPercentiles) {
  LatencyHistogram hist = SomeLatencies(20'000, 3);
  exporter_->OnRunSample(RunAt(42), Cell(), MakeSample(1, 20'000, 0, hist));
  Exposition exp = ScrapeHttp();
  const std::pair<const char*, double> quantiles[] = {{"0.5", 50}, {"0.99", 99}, {"0.999", 99.9}};
  for (const auto& [label, pct] : quantiles) {
    auto v = exp.Value("blkbench_run_latency_seconds", With(kRun42, "quantile", label));
    ASSERT_TRUE(v.has_value()) << label;
    EXPECT_DOUBLE_EQ(*v, static_cast<double>(hist.Percentile(pct)) / 1e9) << label;
  }
  // An interval without completions has no latency: NaN, not a stale or zero value.
  exporter_->OnRunSample(RunAt(42), Cell(), MakeSample(2, 0, 0, LatencyHistogram()));
  exp = ScrapeHttp();
  auto v = exp.Value("blkbench_run_latency_seconds", With(kRun42, "quantile", "0.99"));
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(std::isnan(*v));
  EXPECT_EQ(exp.Value("blkbench_run_iops", kRun42), 0.0);
}

TEST_F(ExporterTest, DeviceCountersOfASampleBecomeIostatSeries) {
  // A sample without device counters (a file, a sim: device) adds no device series.
  exporter_->OnRunSample(RunAt(42), Cell(), MakeSample(1, 1000, 0, SomeLatencies(1000, 1)));
  EXPECT_TRUE(ScrapeHttp().Find("blkbench_run_device_utilization_ratio").empty());
  v1::Sample s = MakeSample(2, 3000, 1000, SomeLatencies(4000, 2));
  v1::DiskStatsInterval& d = *s.mutable_device();
  d.set_reads(3000);
  d.set_read_ms(1500);  // 0.5 ms each
  d.set_reads_merged(30);
  d.set_writes(1000);
  d.set_write_ms(2000);  // 2 ms each
  d.set_writes_merged(250);
  d.set_io_ms(800);            // 80 % of the 1 s interval
  d.set_weighted_io_ms(3500);  // 3.5 requests in flight on average
  d.set_in_flight(4);
  exporter_->OnRunSample(RunAt(42), Cell(), s);
  Exposition exp = ScrapeHttp();
  EXPECT_DOUBLE_EQ(exp.Value("blkbench_run_device_utilization_ratio", kRun42).value_or(-1), 0.8);
  EXPECT_DOUBLE_EQ(exp.Value("blkbench_run_device_queue_size", kRun42).value_or(-1), 3.5);
  EXPECT_EQ(exp.Value("blkbench_run_device_in_flight", kRun42), 4.0);
  EXPECT_DOUBLE_EQ(exp.Value("blkbench_run_device_await_seconds", With(kRun42, "direction", "read"))
                       .value_or(-1),
                   0.0005);
  EXPECT_DOUBLE_EQ(
      exp.Value("blkbench_run_device_await_seconds", With(kRun42, "direction", "write"))
          .value_or(-1),
      0.002);
  EXPECT_EQ(exp.Value("blkbench_run_device_merges_total", With(kRun42, "direction", "write")),
            250.0);
  EXPECT_EQ(exp.families["blkbench_run_device_merges_total"].type, "counter");
  // The interval gauges go when the run ends; the attempt's merge counters stay.
  exporter_->OnRunFinished(RunAt(42));
  exp = ScrapeHttp();
  EXPECT_TRUE(exp.Find("blkbench_run_device_utilization_ratio").empty());
  EXPECT_TRUE(exp.Find("blkbench_run_device_await_seconds").empty());
  EXPECT_EQ(exp.Find("blkbench_run_device_merges_total", {{"run", "42"}}).size(), 2u);
}

TEST_F(ExporterTest, FinishedRunSeriesGoAfterGracePeriodAndNotBefore) {
  FeedSomething();
  clock_.AdvanceMs(5'000);
  exporter_->OnRunFinished(RunAt(42));
  // The per-interval gauges describe a running run: gone at once.
  Exposition exp = ScrapeHttp();
  EXPECT_TRUE(exp.Find("blkbench_run_iops", {{"run", "42"}}).empty());
  EXPECT_TRUE(exp.Find("blkbench_run_latency_seconds", {{"run", "42"}}).empty());
  EXPECT_EQ(exp.Find("blkbench_run_io_total", {{"run", "42"}}).size(), 2u);

  clock_.AdvanceMs(kGraceMs - 1);
  exporter_->Sweep();
  exp = ScrapeHttp();
  EXPECT_EQ(exp.Value("blkbench_run_io_total", With(kRun42, "direction", "read")), 3000.0);
  EXPECT_EQ(exp.Find("blkbench_run_io_bytes_total", {{"run", "42"}}).size(), 2u);
  EXPECT_EQ(exporter_->TrackedRuns(), 1u);

  clock_.AdvanceMs(1);
  exporter_->Sweep();
  exp = ScrapeHttp();
  for (const auto& s : exp.samples) EXPECT_EQ(s.labels.count("run"), 0u) << s.name;
  EXPECT_EQ(exporter_->TrackedRuns(), 0u);
  // The store-derived gauges are not per run and stay.
  EXPECT_EQ(exp.Value("blkbench_runs", {{"state", "running"}}), 1.0);
}

TEST_F(ExporterTest, FinishedRunsBeyondTheCapLoseTheirSeriesOldestFirstWithinTheGrace) {
  ExporterOptions options = ExporterListening("");
  options.finished_grace_ms = kGraceMs;
  options.max_finished_runs = 3;
  auto capped = PrometheusExporter::Start(options, clock_);
  ASSERT_TRUE(capped.ok()) << capped.status();
  v1::RunResult result;
  result.set_iops(5000);
  (*result.mutable_internals())["tags.waits"] = 17;
  for (uint64_t id = 1; id <= 10; ++id) {
    (*capped)->OnRunSample(RunAt(id), Cell(), MakeSample(1, 1000, 500, SomeLatencies(100, 1)));
    (*capped)->OnRunResult(RunAt(id), Cell(), result);
    (*capped)->OnRunFinished(RunAt(id));
    clock_.AdvanceMs(1);
  }
  // No sweep: the cap holds as runs finish, and the newest three keep everything.
  EXPECT_EQ((*capped)->TrackedRuns(), 3u);
  auto exp = ParseExposition((*capped)->Scrape());
  ASSERT_TRUE(exp.ok()) << exp.status();
  std::set<std::string> runs;
  for (const auto& s : exp->samples) {
    if (s.labels.count("run")) runs.insert(s.labels.at("run"));
  }
  EXPECT_EQ(runs, (std::set<std::string>{"8", "9", "10"}));
  EXPECT_EQ(exp->Find("blkbench_engine_tag_waits_total").size(), 3u);
  clock_.AdvanceMs(kGraceMs);
  (*capped)->Sweep();
  EXPECT_EQ((*capped)->TrackedRuns(), 0u);
  exp = ParseExposition((*capped)->Scrape());
  ASSERT_TRUE(exp.ok()) << exp.status();
  for (const auto& s : exp->samples) EXPECT_EQ(s.labels.count("run"), 0u) << s.name;
}

TEST_F(ExporterTest, RunThatFallsSilentIsDroppedAfterIdleTimeout) {
  FeedSomething();
  clock_.AdvanceMs(kIdleMs - 1);
  exporter_->Sweep();
  EXPECT_EQ(exporter_->TrackedRuns(), 1u);
  EXPECT_TRUE(ScrapeHttp().Value("blkbench_run_iops", kRun42).has_value());
  clock_.AdvanceMs(1);
  exporter_->Sweep();
  EXPECT_EQ(exporter_->TrackedRuns(), 0u);
  EXPECT_TRUE(ScrapeHttp().Find("blkbench_run_iops").empty());
}

TEST_F(ExporterTest, ResentSamplesAreNotCountedTwice) {
  FeedSomething();
  exporter_->OnRunSample(RunAt(42), Cell(), MakeSample(2, 2000, 1000, SomeLatencies(3000, 2)));
  exporter_->OnRunSample(RunAt(42), Cell(), MakeSample(1, 1000, 500, SomeLatencies(1500, 1)));
  Exposition exp = ScrapeHttp();
  EXPECT_EQ(exp.Value("blkbench_run_io_total", With(kRun42, "direction", "read")), 3000.0);
  EXPECT_EQ(exp.Value("blkbench_samples_ingested_total"), 2.0);
  EXPECT_EQ(exp.Value("blkbench_samples_duplicate_total"), 2.0);
}

TEST_F(ExporterTest, NewAttemptElsewhereReplacesTheOldSeries) {
  FeedSomething();
  exporter_->OnRunFinished(RunAt(42));  // lease lost; re-queued
  exporter_->OnRunSample(RunAt(42, 2, "host-b"), Cell(),
                         MakeSample(1, 10, 0, SomeLatencies(10, 4)));
  Exposition exp = ScrapeHttp();
  EXPECT_TRUE(exp.Find("blkbench_run_io_total", {{"agent", "host-a"}}).empty());
  EXPECT_EQ(exp.Value("blkbench_run_io_total",
                      {{"run", "42"}, {"agent", "host-b"}, {"direction", "read"}}),
            10.0);
  EXPECT_EQ(exp.Value("blkbench_run_iops", {{"run", "42"}}), 10.0);
  // A late resend from the old attempt changes nothing.
  exporter_->OnRunSample(RunAt(42, 1), Cell(), MakeSample(3, 99, 0, SomeLatencies(99, 5)));
  EXPECT_EQ(ScrapeHttp().Value("blkbench_run_iops", {{"run", "42"}}), 10.0);
}

TEST_F(ExporterTest, AgentsThatGoAwayLoseTheirSeries) {
  FeedSomething();
  exporter_->OnAgentsChanged({Agent("host-a", false, {"ssd"})});
  Exposition exp = ScrapeHttp();
  EXPECT_EQ(exp.Value("blkbench_agents", {{"state", "connected"}}), 0.0);
  EXPECT_EQ(exp.Value("blkbench_agents", {{"state", "disconnected"}}), 1.0);
  EXPECT_TRUE(exp.Find("blkbench_agent_connected", {{"agent", "host-b"}}).empty());
  EXPECT_TRUE(exp.Find("blkbench_agent_devices", {{"device_class", "sim:null_blk"}}).empty());
  EXPECT_EQ(exp.Value("blkbench_agent_devices", {{"agent", "host-a"}, {"device_class", "ssd"}}),
            1.0);
}

TEST_F(ExporterTest, RegisteredAgentGivesHostAndRealKernelLabels) {
  v1::AgentInfo a = Agent("host-a", true, {"ssd"});
  a.mutable_host()->set_hostname("testbox-17.lab");
  a.mutable_host()->set_kernel_release("6.12.0-test");
  exporter_->OnAgentRegistered(a, "10.0.0.1:9471");
  v1::CellSpec real = Cell();
  real.mutable_target()->set_kernel("6.12*");
  real.mutable_target()->set_device_class("ssd");
  exporter_->OnRunSample(RunAt(50), real, MakeSample(1, 10, 0, SomeLatencies(10, 6)));
  exporter_->OnRunSample(RunAt(51), Cell(), MakeSample(1, 10, 0, SomeLatencies(10, 7)));
  Exposition exp = ScrapeHttp();
  EXPECT_EQ(exp.Find("blkbench_run_iops", {{"run", "50"},
                                           {"host", "testbox-17.lab"},
                                           {"kernel", "6.12.0-test"},
                                           {"cell_without_kernel", "scheduler=mq-deadline"}})
                .size(),
            1u);
  // An engine run keeps its simulated kernel, split into profile and patch set.
  auto sim = exp.Find("blkbench_run_iops", {{"run", "51"}, {"kernel", "sim:6.16"}});
  ASSERT_EQ(sim.size(), 1u);
  EXPECT_EQ(sim[0].labels["profile"], "6.16");
  EXPECT_EQ(sim[0].labels["patches"], "none");
  EXPECT_EQ(exp.Find("blkbench_run_iops", {{"run", "50"}})[0].labels.count("profile"), 0u);
}

TEST_F(ExporterTest, RunResultAndEngineInternalsAreRelayedUntilTheGracePeriodEnds) {
  FeedSomething();
  v1::RunResult result;
  result.set_iops(5000);
  result.set_bw_bytes_per_sec(5000.0 * 4096);
  result.mutable_lat_summary()->set_p99_ns(300'000);
  result.set_runner("engine");
  (*result.mutable_internals())["seq_ratio"] = 0.4;
  (*result.mutable_internals())["tags.waits"] = 17;
  (*result.mutable_internals())["cpu_ns_per_io.dispatch"] = 250;
  (*result.mutable_internals())["cpu_ns_per_io.lock_spin"] = 40;
  (*result.mutable_internals())["engine.trace_hash"] = 903083448241635;
  exporter_->OnRunResult(RunAt(42), Cell(), result);
  exporter_->OnRunFinished(RunAt(42));
  Exposition exp = ScrapeHttp();
  EXPECT_EQ(exp.Value("blkbench_run_result_iops", kRun42), 5000.0);
  EXPECT_EQ(
      exp.Value("blkbench_run_result_latency_percentile_seconds", With(kRun42, "percentile", "99")),
      300e-6);
  EXPECT_EQ(exp.Value("blkbench_engine_sequential_ratio", kRun42), 0.4);
  EXPECT_EQ(exp.Value("blkbench_engine_tag_waits_total", kRun42), 17.0);
  EXPECT_EQ(exp.families.at("blkbench_engine_tag_waits_total").type, "counter");
  EXPECT_EQ(exp.Value("blkbench_engine_cpu_seconds_per_io", With(kRun42, "stage", "dispatch")),
            250e-9);
  EXPECT_EQ(exp.Value("blkbench_engine_cpu_seconds_per_io", With(kRun42, "stage", "lock_spin")),
            40e-9);
  // One metric per quantity: no catch-all gauge, no hashes.
  EXPECT_EQ(exp.families.count("blkbench_engine_internal"), 0u);
  EXPECT_TRUE(exp.Find("blkbench_engine_trace_hash").empty());
  EXPECT_TRUE(exp.Find("blkbench_engine_engine_trace_hash_total").empty());
  const size_t series = exp.Find("blkbench_engine_cpu_seconds_per_io", {{"run", "42"}}).size();
  EXPECT_EQ(series, 2u);
  // A resend of the result does not add series.
  exporter_->OnRunResult(RunAt(42), Cell(), result);
  EXPECT_EQ(ScrapeHttp().Find("blkbench_engine_cpu_seconds_per_io", {{"run", "42"}}).size(),
            series);

  clock_.AdvanceMs(kGraceMs);
  exporter_->Sweep();
  exp = ScrapeHttp();
  for (const auto& s : exp.samples) EXPECT_EQ(s.labels.count("run"), 0u) << s.name;
}

TEST_F(ExporterTest, ListenFailureIsUnavailable) {
  ExporterOptions options;
  options.listen = "127.0.0.1:" + std::to_string(exporter_->port());  // taken
  auto second = PrometheusExporter::Start(options, clock_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
}

TEST(ExporterNoHttpTest, ScrapeWorksWithoutListening) {
  FakeClock clock;
  ExporterOptions options;
  options.listen = "";
  auto e = PrometheusExporter::Start(options, clock);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)->port(), 0);
  auto exp = ParseExposition((*e)->Scrape());
  ASSERT_TRUE(exp.ok()) << exp.status();
  EXPECT_EQ(exp->Value("blkbench_agents", {{"state", "connected"}}), 0.0);
}

}  // namespace
}  // namespace blkbench
