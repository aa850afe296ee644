// Cross-component test of live metrics with real parts: a real Prometheus server
// (Debian's `prometheus`) on loopback scrapes an in-process controller (gRPC on TCP,
// SQLite file, /metrics) and the exporter of an in-process agent that it finds through
// the controller's /sd/agents. A short sim: experiment (two kernels on sim:null_blk)
// runs; its IOPS and p99 must appear in Prometheus while it runs, and afterwards EVERY
// query of EVERY shipped dashboard panel, with the dashboard variables resolved the way
// Grafana would, must return data (Prometheus queries through its HTTP API, results
// panels through the controller's results API). Skipped only without the binary.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <functional>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "agent/metrics/agent_exporter.h"
#include "blkbench/v1/controller.grpc.pb.h"
#include "common/http/http_get.h"
#include "common/testing/command.h"
#include "common/testing/lab_pki.h"
#include "common/testing/loop_device.h"
#include "common/testing/tcp_proxy.h"
#include "common/tls/pki.h"
#include "gtest/gtest.h"
#include "tests/child_process.h"
#include "tests/dashboard_util.h"
#include "tests/test_cluster.h"

namespace blkbench {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;
using testing::Dashboard;
using testing::Str;
using testing::TempDir;

constexpr char kPrometheus[] = "/usr/bin/prometheus";
constexpr char kRateInterval[] = "4s";  // Grafana: max(4 x scrape interval, step + scrape)

// Two kernels (baseline and a patch set) on the engine's null_blk under mq-deadline (so
// the elevator-lock panels have data): ~1 s of wall time per run in the release build
// (~10 s under ASan), sequential on the agent's one simulated device. Seeded.
constexpr char kMatrix[] = R"(name: prometheus-test
repeats: 1
job: {rw: randread, bs: 4k, iodepth: 32, numjobs: 2, ioengine: io_uring, runtime: 1s,
      time_based: 1, randseed: 42, scheduler: mq-deadline}
matrix:
  kernel: ["sim:6.16", "sim:6.16+dd-batch-dispatch"]
target: {device_class: sim:null_blk}
)";

// 160 tiny runs (4 kernels x 4 schedulers x 10 block sizes): each is milliseconds of
// engine time, but every finished run keeps its ~25 KB of series on the controller's
// /metrics for the grace period, so the scrape grows to megabytes as the experiment goes.
constexpr char kLargeMatrix[] = R"(name: prometheus-large
repeats: 1
job: {rw: randread, iodepth: 2, numjobs: 1, ioengine: io_uring, runtime: 20ms,
      time_based: 1, randseed: 7}
matrix:
  kernel: ["sim:6.16", "sim:6.16+dd-batch-dispatch", "sim:6.1", "sim:5.15"]
  scheduler: [none, mq-deadline, bfq, kyber]
  bs: [4k, 8k, 12k, 16k, 20k, 24k, 28k, 32k, 48k, 64k]
target: {device_class: sim:null_blk}
)";
constexpr int kLargeRuns = 160;

// Polls `done` every 200 ms until it holds or `limit` passes; returns the last answer.
bool PollUntil(const std::function<bool()>& done, absl::Duration limit) {
  const absl::Time deadline = absl::Now() + limit;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(200));
  }
  return true;
}

std::optional<Struct> GetJson(int port, const std::string& target) {
  auto r = HttpGet(port, target);
  if (!r.ok() || r->status != 200) return std::nullopt;
  Struct s;
  if (!google::protobuf::util::JsonStringToMessage(r->body, &s).ok()) return std::nullopt;
  return s;
}

// One scrape target as Prometheus's /api/v1/targets reports it.
struct ScrapeTarget {
  std::string job;     // the job label
  std::string agent;   // the agent label ("" for the controller)
  std::string health;  // "up", "down" or "unknown" (not scraped yet)
  std::string last_error;
};

// The active targets of the Prometheus on `prom_port`; nullopt while it does not answer.
std::optional<std::vector<ScrapeTarget>> ActiveTargets(int prom_port) {
  std::optional<Struct> t = GetJson(prom_port, "/api/v1/targets?state=active");
  if (!t.has_value()) return std::nullopt;
  std::vector<ScrapeTarget> out;
  for (const Value& v :
       t->fields().at("data").struct_value().fields().at("activeTargets").list_value().values()) {
    const Struct& s = v.struct_value();
    const Struct& labels = s.fields().at("labels").struct_value();
    out.push_back({.job = Str(labels, "job"),
                   .agent = Str(labels, "agent"),
                   .health = Str(s, "health"),
                   .last_error = Str(s, "lastError")});
  }
  return out;
}

// Grafana's escaping of a value substituted into a regex matcher (=~"$var") when the
// variable allows "All": regex metacharacters, with the backslash doubled for PromQL.
std::string RegexEscape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out += "\\\\";
    out.push_back(c);
  }
  return out;
}

// One data point that is a finite number somewhere in a Prometheus API result.
bool HasFiniteValue(const Struct& response, std::string* why) {
  if (Str(response, "status") != "success") {
    *why = "status " + Str(response, "status") + ": " + Str(response, "error");
    return false;
  }
  const Struct& data = response.fields().at("data").struct_value();
  const Value& result = data.fields().at("result");
  auto finite = [](const Value& point) {
    double v = 0;
    return point.list_value().values_size() == 2 &&
           absl::SimpleAtod(point.list_value().values(1).string_value(), &v) && std::isfinite(v);
  };
  if (Str(data, "resultType") == "scalar") return finite(result);
  for (const Value& series : result.list_value().values()) {
    const auto& f = series.struct_value().fields();
    if (f.count("value") && finite(f.at("value"))) return true;
    if (f.count("values")) {
      for (const Value& p : f.at("values").list_value().values()) {
        if (finite(p)) return true;
      }
    }
  }
  *why = "no finite value in " + std::to_string(result.list_value().values_size()) + " series";
  return false;
}

class PrometheusTest : public testing::ClusterTest {
 protected:
  PrometheusTest() : ClusterTest("prometheus_test") {}

  void SetUp() override {
    if (access(kPrometheus, X_OK) != 0) {
      GTEST_SKIP() << kPrometheus << " not installed (Debian package 'prometheus')";
    }
    start_ = absl::Now();
    ServerOptions opts = ServerDefaults();
    opts.controller.sample_interval_ms = 200;  // simulated time for sim: runs
    opts.metrics.listen = "127.0.0.1:0";
    opts.metrics.finished_grace_ms = 30 * 60'000;  // results stay for the whole test
    opts.metrics_refresh_ms = 500;
    ASSERT_NO_FATAL_FAILURE(StartController(opts));

    auto exporter =
        AgentExporter::Start({.listen = "127.0.0.1:0", .finished_grace_ms = 30 * 60'000}, clock_);
    ASSERT_TRUE(exporter.ok()) << exporter.status();
    agent_exporter_ = std::move(*exporter);
    AgentConfig config;
    config.agent_id = "prom-agent";
    config.state_dir = dir_.File("agent-state");
    config.sim_devices = {"sim:null_blk"};
    config.controller = ControllerAddress();
    config.metrics_listen = agent_exporter_->address();
    agent_ = std::make_unique<testing::AgentProcess>(config, agent_exporter_.get());
    ASSERT_TRUE(agent_->ok());
    ASSERT_TRUE(agent_->agent().WaitConnected(true, absl::Seconds(30)));

    prom_port_ = testing::FreeTcpPort();
    ASSERT_GT(prom_port_, 0);
    const std::string metrics = absl::StrCat("127.0.0.1:", server_->metrics_port());
    std::ofstream(dir_.File("prometheus.yml"))
        << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        << "scrape_configs:\n"
        << "  - job_name: blkbench-controller\n"
        << "    scrape_interval: " << controller_scrape_s_ << "s\n"
        << "    scrape_timeout: " << controller_scrape_s_ << "s\n"
        << "    static_configs: [{targets: [\"" << metrics << "\"]}]\n"
        << "  - job_name: blkbench-agents\n"
        << "    http_sd_configs: [{url: \"http://" << metrics
        << "/sd/agents\", refresh_interval: 1s}]\n";
    prometheus_ = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{kPrometheus, "--config.file=" + dir_.File("prometheus.yml"),
                                 "--storage.tsdb.path=" + dir_.File("tsdb"),
                                 absl::StrCat("--web.listen-address=127.0.0.1:", prom_port_),
                                 "--log.level=warn"},
        dir_.File("prometheus.log"), testing::ChildProcess::Log::kStdoutAndStderr);
    ASSERT_TRUE(prometheus_->ok());
    ASSERT_TRUE(PollUntil(
        [this] {
          auto r = HttpGet(prom_port_, "/-/ready", absl::Seconds(2));
          return r.ok() && r->status == 200;
        },
        absl::Seconds(60)))
        << "prometheus did not become ready; see " << dir_.File("prometheus.log");
  }

  void TearDown() override {
    if (prometheus_) prometheus_->Terminate(absl::Seconds(20));
    prometheus_.reset();
    agent_.reset();
  }

  std::optional<Struct> Prom(const std::string& target) { return GetJson(prom_port_, target); }

  // Polls Prometheus's targets until the controller's and the agent's are both up.
  bool WaitTargetsUp() {
    return PollUntil(
        [this] {
          auto targets = ActiveTargets(prom_port_);
          if (!targets.has_value()) return false;
          int up = 0;
          for (const ScrapeTarget& t : *targets) {
            if (t.health == "up" && (t.job == "blkbench-controller" ||
                                     (t.job == "blkbench-agents" && t.agent == "prom-agent"))) {
              ++up;
            }
          }
          return up == 2;
        },
        absl::Seconds(60));
  }

  // Submits `matrix` over gRPC on TCP, as the CLI does (so the request metrics see it).
  uint64_t Submit(const std::string& file_name, const std::string& matrix) {
    auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                       grpc::InsecureChannelCredentials());
    auto stub = v1::ControllerService::NewStub(channel);
    grpc::ClientContext ctx;
    v1::SubmitExperimentRequest req;
    req.set_file_name(file_name);
    req.set_matrix_text(matrix);
    v1::Experiment exp;
    grpc::Status submitted = stub->SubmitExperiment(&ctx, req, &exp);
    EXPECT_TRUE(submitted.ok()) << submitted.error_message();
    return submitted.ok() ? exp.id() : 0;
  }

  // The value of a scalar-valued instant query, if it has one.
  std::optional<double> Scalar(const std::string& expr) {
    auto r = Prom("/api/v1/query?query=" + UrlEncode(expr));
    if (!r.has_value() || Str(*r, "status") != "success") return std::nullopt;
    const Value& result = r->fields().at("data").struct_value().fields().at("result");
    if (result.list_value().values_size() != 1) return std::nullopt;
    const Value& v = result.list_value().values(0).struct_value().fields().at("value");
    double d = 0;
    if (!absl::SimpleAtod(v.list_value().values(1).string_value(), &d)) return std::nullopt;
    return d;
  }

  // Instant query at now; true when it returns a finite value.
  bool InstantHasData(const std::string& expr) {
    auto r = Prom("/api/v1/query?query=" + UrlEncode(expr));
    std::string why;
    return r.has_value() && HasFiniteValue(*r, &why);
  }

  // label_values(<selector>, <label>) over the test's window, sorted.
  std::vector<std::string> LabelValues(const std::string& query) {
    const size_t open = query.find('('), comma = query.rfind(','), close = query.rfind(')');
    EXPECT_TRUE(query.rfind("label_values(", 0) == 0 && comma != std::string::npos) << query;
    const std::string selector = query.substr(open + 1, comma - open - 1);
    std::string label(absl::StripAsciiWhitespace(query.substr(comma + 1, close - comma - 1)));
    auto r = Prom(absl::StrCat("/api/v1/series?match[]=", UrlEncode(selector),
                               "&start=", absl::ToUnixSeconds(start_) - 5,
                               "&end=", absl::ToUnixSeconds(absl::Now()) + 1));
    std::set<std::string> values;
    if (r.has_value() && Str(*r, "status") == "success") {
      for (const Value& s : r->fields().at("data").list_value().values()) {
        auto it = s.struct_value().fields().find(label);
        if (it != s.struct_value().fields().end()) values.insert(it->second.string_value());
      }
    }
    return {values.begin(), values.end()};
  }

  // Resolves the dashboard's variables in order, each from the values its query
  // returns with the earlier ones substituted; a variable whose query repeats an earlier
  // one's takes the next value (baseline vs candidate). Fills `regex_vars`.
  std::map<std::string, std::string> ResolveVariables(const Dashboard& d,
                                                      std::set<std::string>* regex_vars) {
    std::map<std::string, std::string> values;
    std::map<std::string, int> seen_queries;
    for (const Value& v : d.Variables().values()) {
      const Struct& var = v.struct_value();
      const std::string name = Str(var, "name");
      if (Str(var, "type") == "textbox") {
        values[name] = Str(var, "query");
        continue;
      }
      std::string query = Substitute(Str(var, "definition"), values, *regex_vars);
      std::vector<std::string> options = LabelValues(query);
      EXPECT_FALSE(options.empty())
          << d.file << ": variable " << name << " has no values (" << query << ")";
      if (options.empty()) continue;
      const int n = seen_queries[query]++;
      values[name] = options[static_cast<size_t>(n) % options.size()];
      if (var.fields().count("includeAll") && var.fields().at("includeAll").bool_value()) {
        regex_vars->insert(name);
      }
    }
    return values;
  }

  std::string Substitute(std::string text, const std::map<std::string, std::string>& values,
                         const std::set<std::string>& regex_vars) {
    const int64_t range_s = absl::ToInt64Seconds(absl::Now() - start_) + 10;
    text = absl::StrReplaceAll(text, {{"$__rate_interval", kRateInterval},
                                      {"$__range", absl::StrCat(range_s, "s")},
                                      {"$__interval", "1s"}});
    // Longest names first so $kernel_a is not taken for $kernel.
    std::vector<std::pair<std::string, std::string>> subs;
    for (const auto& [name, value] : values) {
      const std::string v = regex_vars.count(name) ? RegexEscape(value) : value;
      subs.emplace_back(absl::StrCat("${", name, ":percentencode}"), UrlEncode(value));
      subs.emplace_back(absl::StrCat("${", name, "}"), v);
      subs.emplace_back(absl::StrCat("$", name), v);
    }
    std::sort(subs.begin(), subs.end(),
              [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    for (const auto& [from, to] : subs) text = absl::StrReplaceAll(text, {{from, to}});
    return text;
  }

  // The controller job's scrape interval and timeout (Prometheus allows no timeout longer
  // than the interval). 1 s keeps the dashboard test quick; a multi-megabyte scrape
  // takes ~0.2 s in the release build and several times that under ASan on a busy
  // machine, so the large-experiment test gives it 5 s (Prometheus's default is 10 s).
  int controller_scrape_s_ = 1;
  absl::Time start_;
  std::unique_ptr<AgentExporter> agent_exporter_;
  std::unique_ptr<testing::AgentProcess> agent_;
  std::unique_ptr<testing::ChildProcess> prometheus_;
  int prom_port_ = 0;
};

TEST_F(PrometheusTest, EveryDashboardPanelQueryReturnsDataForASimExperiment) {
  // Discovery: the agent's exporter is found through the controller and scraped.
  ASSERT_TRUE(WaitTargetsUp()) << "controller and agent targets not both up; see "
                               << dir_.File("prometheus.log");
  const uint64_t exp_id = Submit("prometheus-test.yaml", kMatrix);
  ASSERT_NE(exp_id, 0u);
  const std::string id = std::to_string(exp_id);
  // A running experiment's IOPS and p99 appear within a scrape interval or two.
  EXPECT_TRUE(PollUntil(
      [&] {
        return InstantHasData("blkbench_run_iops{experiment=\"" + id + "\"}") &&
               InstantHasData("blkbench_run_latency_seconds{quantile=\"0.99\", experiment=\"" + id +
                              "\"}") &&
               InstantHasData("blkbench_agent_run_iops{experiment=\"" + id + "\"}");
      },
      absl::Seconds(60)))
      << "live IOPS/p99 of the running experiment never reached Prometheus";

  v1::Experiment done = WaitForEndWithProgress(exp_id, absl::Minutes(3), /*with_runs=*/false);
  ASSERT_EQ(done.state(), v1::EXPERIMENT_DONE) << done.error();
  // The final results and engine internals of both runs are scraped.
  ASSERT_TRUE(PollUntil(
      [&] {
        return InstantHasData("count(blkbench_run_result_iops{experiment=\"" + id + "\"}) == 2") &&
               InstantHasData("count(blkbench_engine_sequential_ratio{experiment=\"" + id +
                              "\"}) == 2") &&
               InstantHasData("blkbench_agent_runs_finished_total{outcome=\"succeeded\"} == 2");
      },
      absl::Seconds(60)));

  auto names_json = Prom("/api/v1/label/__name__/values");
  ASSERT_TRUE(names_json.has_value());
  std::set<std::string> names;
  for (const Value& v : names_json->fields().at("data").list_value().values()) {
    names.insert(v.string_value());
  }

  std::string error;
  std::vector<Dashboard> dashboards = testing::LoadDashboards(BLKBENCH_SOURCE_DIR, &error);
  ASSERT_GE(dashboards.size(), 5u) << error;
  const std::regex metric_name("blkbench_[a-z0-9_]+");
  int evaluated = 0;
  for (const Dashboard& d : dashboards) {
    std::set<std::string> regex_vars;
    const std::map<std::string, std::string> vars = ResolveVariables(d, &regex_vars);
    const int64_t end = absl::ToUnixSeconds(absl::Now()) + 1;
    const int64_t start = absl::ToUnixSeconds(start_) - 5;
    for (const Value& pv : d.Panels().values()) {
      const Struct& panel = pv.struct_value();
      const std::string title = Str(panel, "title");
      for (const Value& tv : panel.fields().at("targets").list_value().values()) {
        const Struct& target = tv.struct_value();
        const std::string where = d.file + " / " + title + " / " + Str(target, "refId");
        const std::string ds_type = Str(target.fields().at("datasource").struct_value(), "type");
        ++evaluated;
        if (ds_type == "yesoreyeram-infinity-datasource") {
          const std::string url = Substitute(Str(target, "url"), vars, regex_vars);
          auto r = HttpGet(server_->metrics_port(), url);
          ASSERT_TRUE(r.ok()) << where << ": " << r.status();
          EXPECT_EQ(r->status, 200) << where << ": GET " << url << ": " << r->body;
          Value rows;
          ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r->body, &rows).ok()) << where;
          ASSERT_TRUE(rows.has_list_value()) << where;
          EXPECT_GT(rows.list_value().values_size(), 0) << where << ": GET " << url;
          if (rows.list_value().values_size() == 0) continue;
          const Struct& row = rows.list_value().values(0).struct_value();
          for (const Value& c : target.fields().at("columns").list_value().values()) {
            const std::string selector = Str(c.struct_value(), "selector");
            EXPECT_TRUE(row.fields().count(selector)) << where << ": no field " << selector;
          }
          continue;
        }
        ASSERT_EQ(ds_type, "prometheus") << where;
        const std::string raw = Str(target, "expr");
        for (std::sregex_iterator it(raw.begin(), raw.end(), metric_name), e; it != e; ++it) {
          EXPECT_TRUE(names.count(it->str()))
              << where << ": metric " << it->str() << " never scraped";
        }
        const std::string expr = Substitute(raw, vars, regex_vars);
        const bool instant =
            target.fields().count("instant") && target.fields().at("instant").bool_value();
        const std::string api =
            instant ? absl::StrCat("/api/v1/query?query=", UrlEncode(expr), "&time=", end)
                    : absl::StrCat("/api/v1/query_range?query=", UrlEncode(expr), "&start=", start,
                                   "&end=", end, "&step=1");
        auto r = Prom(api);
        ASSERT_TRUE(r.has_value()) << where << ": query failed: " << expr;
        std::string why;
        EXPECT_TRUE(HasFiniteValue(*r, &why)) << where << ": no data (" << why << ")\n  " << expr;
      }
    }
  }
  EXPECT_GT(evaluated, 40);
}

// The controller target must stay up through and after an experiment whose finished
// runs make /metrics megabytes (the ~128 KB cut-off made Prometheus mark it down). Every
// byte of the big scrape must also reach a plain client, and promtool must accept it.
class PrometheusLargeTest : public PrometheusTest {
 protected:
  PrometheusLargeTest() { controller_scrape_s_ = 5; }
};

TEST_F(PrometheusLargeTest, ControllerTargetStaysUpThroughAndAfterALargeExperiment) {
  ASSERT_TRUE(WaitTargetsUp()) << "see " << dir_.File("prometheus.log");
  const uint64_t exp_id = Submit("prometheus-large.yaml", kLargeMatrix);
  ASSERT_NE(exp_id, 0u);
  v1::Experiment done = WaitForEndWithProgress(exp_id, absl::Minutes(2));
  ASSERT_EQ(done.state(), v1::EXPERIMENT_DONE) << done.error();
  ASSERT_EQ(done.runs_size(), kLargeRuns);
  const absl::Time ended = absl::Now();

  auto plain = HttpGet(server_->metrics_port(), "/metrics", {.timeout = absl::Seconds(60)});
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_GT(plain->body.size(), 2u << 20) << "the scrape is not large: the test tests nothing";
  absl::Status checked = testing::PromtoolCheckMetrics(plain->body);
  EXPECT_TRUE(checked.ok()) << checked;
  size_t lines = 0;
  for (char c : plain->body) lines += c == '\n' ? 1 : 0;

  // Prometheus scrapes (gzip, as it always asks) after the experiment ended and takes in
  // every sample of the big body.
  ASSERT_TRUE(PollUntil(
      [&] {
        std::optional<double> at = Scalar("timestamp(up{job=\"blkbench-controller\"} == 1)");
        std::optional<double> samples =
            Scalar("scrape_samples_scraped{job=\"blkbench-controller\"}");
        return at.has_value() && *at > absl::ToUnixMillis(ended) / 1000.0 && samples.has_value() &&
               *samples > static_cast<double>(lines) / 2;
      },
      absl::Seconds(60)))
      << "no successful scrape of the big /metrics after the experiment; see "
      << dir_.File("prometheus.log");
  // And no scrape failed at any point of the test.
  const int64_t window_s = absl::ToInt64Seconds(absl::Now() - start_) + 5;
  std::optional<double> worst =
      Scalar(absl::StrCat("min_over_time(up{job=\"blkbench-controller\"}[", window_s, "s])"));
  ASSERT_TRUE(worst.has_value());
  EXPECT_EQ(*worst, 1.0) << "the controller target was down in some scrape";
  std::optional<double> scrapes =
      Scalar(absl::StrCat("count_over_time(up{job=\"blkbench-controller\"}[", window_s, "s])"));
  ASSERT_TRUE(scrapes.has_value());
  EXPECT_GE(*scrapes, 2.0);
}

// A controller whose HTTP endpoints are exposed the secure way — HTTPS with the lab
// controller certificate, client certificates required, a bearer token — scraped by a
// real Prometheus that has the lab CA, its own certificate and the token: up. A second job
// with the CA but without a certificate or token is refused, and one with the certificate
// but a wrong token gets 401.
class PrometheusHttpsTest : public testing::ClusterTest {
 protected:
  PrometheusHttpsTest() : ClusterTest("prometheus_https_test") {}
};

TEST_F(PrometheusHttpsTest, ScrapesOverHttpsWithClientCertificateAndTokenOnly) {
  if (access(kPrometheus, X_OK) != 0) GTEST_SKIP() << kPrometheus << " not installed";
  const std::string pki = dir_.File("pki");
  ASSERT_TRUE(
      testing::MakeLabPki(pki, {testing::Cert(tls::Kind::kController, "controller"),
                                testing::Cert(tls::Kind::kCli, "prometheus", tls::Role::kRead)})
          .ok());
  std::ofstream(dir_.File("token")) << "prom-token-1\n";
  std::ofstream(dir_.File("wrong-token")) << "prom-token-2\n";
  chmod(dir_.File("token").c_str(), 0600);

  ServerOptions opts = ServerDefaults();
  opts.tls_dir = pki;
  opts.metrics.listen = "127.0.0.1:0";
  auto security = HttpSecurityFromFlags({.listen = "0.0.0.0:9470",  // as if exposed
                                         .tls_dir = pki,
                                         .stem = "controller",
                                         .tls = true,
                                         .client_certs = true,
                                         .token_file = dir_.File("token"),
                                         .insecure = false,
                                         .revoked = nullptr});
  ASSERT_TRUE(security.ok()) << security.status();
  opts.metrics.security = *security;
  ASSERT_NO_FATAL_FAILURE(StartController(opts));

  const int prom_port = testing::FreeTcpPort();
  ASSERT_GT(prom_port, 0);
  const std::string target = absl::StrCat("127.0.0.1:", server_->metrics_port());
  auto job = [&](const std::string& name, bool cert, const std::string& token_file) {
    std::string out = absl::StrCat("  - job_name: ", name, "\n    scheme: https\n",
                                   "    static_configs: [{targets: [\"", target, "\"]}]\n",
                                   "    tls_config:\n      ca_file: ", pki, "/ca.pem\n");
    if (cert) {
      absl::StrAppend(&out, "      cert_file: ", pki, "/cli-prometheus.pem\n",
                      "      key_file: ", pki, "/cli-prometheus.key\n");
    }
    if (!token_file.empty()) {
      absl::StrAppend(&out, "    authorization: {credentials_file: ", token_file, "}\n");
    }
    return out;
  };
  std::ofstream(dir_.File("prometheus.yml"))
      << "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
      << "scrape_configs:\n"
      << job("secured", true, dir_.File("token")) << job("anonymous", false, "")
      << job("wrong-token", true, dir_.File("wrong-token"));
  testing::ChildProcess prometheus(
      {kPrometheus, "--config.file=" + dir_.File("prometheus.yml"),
       "--storage.tsdb.path=" + dir_.File("tsdb"),
       absl::StrCat("--web.listen-address=127.0.0.1:", prom_port), "--log.level=warn"},
      dir_.File("prometheus.log"), testing::ChildProcess::Log::kStdoutAndStderr);
  ASSERT_TRUE(prometheus.ok());

  // Waits until every job has been scraped at least once, then reads each one's health.
  std::map<std::string, std::pair<std::string, std::string>> health;  // job -> (health, error)
  ASSERT_TRUE(PollUntil(
      [&] {
        auto targets = ActiveTargets(prom_port);
        if (!targets.has_value()) return false;
        health.clear();
        for (const ScrapeTarget& t : *targets) {
          if (t.health == "unknown") return false;
          health[t.job] = {t.health, t.last_error};
        }
        return health.size() == 3;
      },
      absl::Seconds(60)))
      << "see " << dir_.File("prometheus.log");
  EXPECT_EQ(health["secured"].first, "up") << health["secured"].second;
  EXPECT_EQ(health["anonymous"].first, "down");
  EXPECT_EQ(health["wrong-token"].first, "down");
  EXPECT_NE(health["wrong-token"].second.find("401"), std::string::npos)
      << health["wrong-token"].second;
  prometheus.Terminate(absl::Seconds(20));
}

}  // namespace
}  // namespace blkbench
