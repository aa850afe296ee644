// Tests for agent discovery (/sd/agents, peer-address resolution), the results API on
// a real SQLite store, the instrumented store and the gRPC interceptor's series, all
// read over real HTTP from the exporter.
#include <unistd.h>

#include <filesystem>

#include "common/clock.h"
#include "common/http/http_get.h"
#include "controller/controller.h"
#include "controller/metrics/http_sd.h"
#include "controller/metrics/instrumented_store.h"
#include "controller/metrics/prometheus_exporter.h"
#include "controller/results_api.h"
#include "controller/store/sqlite_store.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

google::protobuf::ListValue ParseList(const std::string& json) {
  google::protobuf::Value v;
  auto st = google::protobuf::util::JsonStringToMessage(json, &v);
  EXPECT_TRUE(st.ok()) << st.ToString() << "\n" << json;
  EXPECT_TRUE(v.has_list_value()) << json;
  return v.list_value();
}

TEST(ResolveMetricsAddressTest, WildcardHostsBecomeThePeerAndConcreteHostsStay) {
  EXPECT_EQ(ResolveMetricsAddress("0.0.0.0:9471", "ipv4:10.1.2.3:53422"), "10.1.2.3:9471");
  EXPECT_EQ(ResolveMetricsAddress(":9471", "ipv4:10.1.2.3:53422"), "10.1.2.3:9471");
  EXPECT_EQ(ResolveMetricsAddress("[::]:9471", "ipv6:[fd00::5]:53422"), "[fd00::5]:9471");
  EXPECT_EQ(ResolveMetricsAddress("[::]:9471", "ipv6:%5Bfd00::5%5D:53422"), "[fd00::5]:9471");
  EXPECT_EQ(ResolveMetricsAddress("0.0.0.0:9471", "ipv6:[::1]:53422"), "127.0.0.1:9471");
  EXPECT_EQ(ResolveMetricsAddress("0.0.0.0:9471", "unix:/run/blkbench.sock"), "127.0.0.1:9471");
  EXPECT_EQ(ResolveMetricsAddress("testbox-17.lab:9471", "ipv4:10.1.2.3:1"), "testbox-17.lab:9471");
  EXPECT_EQ(ResolveMetricsAddress("", "ipv4:10.1.2.3:1"), "");
}

v1::AgentInfo Agent(const std::string& id, bool connected) {
  v1::AgentInfo a;
  a.set_agent_id(id);
  a.set_connected(connected);
  a.mutable_host()->set_hostname(id + ".lab");
  a.mutable_host()->set_kernel_release("6.12.0");
  a.add_devices()->set_device_class("sim:null_blk");
  a.add_devices()->set_device_class("nvme");
  return a;
}

TEST(AgentDiscoveryTest, ServesOneTargetGroupPerAgentWithAnAddress) {
  FakeClock clock;
  auto e = PrometheusExporter::Start(ExporterListening("127.0.0.1:0"), clock);
  ASSERT_TRUE(e.ok()) << e.status();
  PrometheusExporter& x = **e;
  auto empty = HttpGet(x.port(), "/sd/agents");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->status, 200);
  EXPECT_EQ(empty->content_type, "application/json");
  EXPECT_EQ(ParseList(empty->body).values_size(), 0);

  x.OnAgentRegistered(Agent("b-host", true), "10.0.0.2:9471");
  x.OnAgentRegistered(Agent("a-host", true), "10.0.0.1:9471");
  x.OnAgentRegistered(Agent("c-host", true), "");  // no exporter: not a target
  x.OnAgentsChanged({Agent("a-host", true), Agent("b-host", false), Agent("c-host", true)});
  auto r = HttpGet(x.port(), "/sd/agents");
  ASSERT_TRUE(r.ok()) << r.status();
  google::protobuf::ListValue groups = ParseList(r->body);
  ASSERT_EQ(groups.values_size(), 2) << r->body;
  const auto& a = groups.values(0).struct_value().fields();
  EXPECT_EQ(a.at("targets").list_value().values(0).string_value(), "10.0.0.1:9471");
  EXPECT_EQ(a.at("labels").struct_value().fields().at("agent").string_value(), "a-host");
  EXPECT_EQ(
      a.at("labels").struct_value().fields().at("__meta_blkbench_device_classes").string_value(),
      ",nvme,sim:null_blk,");
  const auto& b = groups.values(1).struct_value().fields();
  EXPECT_EQ(b.at("labels").struct_value().fields().at("__meta_blkbench_connected").string_value(),
            "false");
}

class ResultsApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("results_api_test." + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto store = SqliteStore::Open((dir_ / "db.sqlite").string());
    ASSERT_TRUE(store.ok()) << store.status();
    auto e = PrometheusExporter::Start(ExporterListening("127.0.0.1:0"), clock_);
    ASSERT_TRUE(e.ok()) << e.status();
    exporter_ = std::move(*e);
    store_ = std::make_unique<InstrumentedStore>(std::move(*store), exporter_->service());
    // The handlers read through a Controller, as in the server; the test writes rows
    // straight into the store behind it.
    controller_ = std::make_unique<Controller>(*store_, clock_, ControllerOptions());
    Controller* c = controller_.get();
    exporter_->AddHandler("/api/v1/results",
                          [c](const HttpRequest& req) { return ResultsJson(*c, req); });
    exporter_->AddHandler("/api/v1/experiments",
                          [c](const HttpRequest& req) { return ExperimentsJson(*c, req); });
  }
  void TearDown() override {
    exporter_.reset();
    controller_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // An experiment with two cells (kernel axis) and one run each; run 1 finishes DONE.
  uint64_t MakeExperiment() {
    v1::Experiment exp;
    exp.set_name("cmp");
    exp.set_repeats(1);
    AddKernelCells(&exp, {"sim:6.16", "sim:6.16+dd-batch-dispatch"});
    auto id = store_->CreateExperiment(exp);
    EXPECT_TRUE(id.ok()) << id.status();
    auto runs = store_->GetExperiment(*id, false);
    FinishDone(runs->runs(1));  // the patched cell
    return *id;
  }

  static void AddKernelCells(v1::Experiment* exp, const std::vector<std::string>& kernels) {
    for (const std::string& kernel : kernels) {
      v1::CellSpec* c = exp->add_cells();
      c->set_index(static_cast<uint32_t>(exp->cells_size() - 1));
      v1::AxisValue* k = c->add_axes();
      k->set_key("kernel");
      k->set_value(kernel);
      v1::AxisValue* bs = c->add_axes();
      bs->set_key("bs");
      bs->set_value("4k");
      c->mutable_target()->set_kernel(kernel);
      c->mutable_target()->set_device_class("sim:null_blk");
    }
  }

  // Runs `run` to DONE with a result and a few engine internals.
  void FinishDone(v1::Run run) {
    run.set_attempt(1);
    run.set_state(v1::RUN_RUNNING);
    run.set_agent_id("a-host");
    run.set_device_path("sim:null_blk");
    EXPECT_TRUE(store_->UpdateRun(run).ok());
    v1::RunResult result;
    result.set_iops(123456);
    result.set_bw_bytes_per_sec(123456.0 * 4096);
    result.mutable_lat_summary()->set_p99_ns(250'000);
    result.mutable_host()->set_hostname("a-host.lab");
    result.set_runner("engine");
    (*result.mutable_internals())["seq_ratio"] = 0.25;
    EXPECT_TRUE(store_->FinishRun(run.id(), 1, v1::RUN_DONE, "", 1, &result).ok());
  }

  FakeClock clock_;
  std::filesystem::path dir_;
  std::unique_ptr<PrometheusExporter> exporter_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Controller> controller_;
};

TEST_F(ResultsApiTest, ResultsRowsCarryLabelsValuesAndInternals) {
  const uint64_t id = MakeExperiment();
  for (const std::string& which : {std::to_string(id), std::string("latest")}) {
    auto r = HttpGet(exporter_->port(), "/api/v1/results?experiment=" + which);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->status, 200) << r->body;
    google::protobuf::ListValue rows = ParseList(r->body);
    ASSERT_EQ(rows.values_size(), 1) << r->body;  // only the DONE run
    const auto& f = rows.values(0).struct_value().fields();
    EXPECT_EQ(f.at("kernel").string_value(), "sim:6.16+dd-batch-dispatch");
    EXPECT_EQ(f.at("profile").string_value(), "6.16");
    EXPECT_EQ(f.at("patches").string_value(), "dd-batch-dispatch");
    EXPECT_EQ(f.at("cell").string_value(), "kernel=sim:6.16+dd-batch-dispatch bs=4k");
    EXPECT_EQ(f.at("cell_without_kernel").string_value(), "bs=4k");
    EXPECT_EQ(f.at("host").string_value(), "a-host.lab");
    EXPECT_DOUBLE_EQ(f.at("iops").number_value(), 123456);
    EXPECT_DOUBLE_EQ(f.at("latency_p99_seconds").number_value(), 250e-6);
    EXPECT_DOUBLE_EQ(f.at("internals").struct_value().fields().at("seq_ratio").number_value(),
                     0.25);
  }
  auto other = HttpGet(exporter_->port(),
                       "/api/v1/results?experiment=" + std::to_string(id) + "&kernel=sim:6.16");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(ParseList(other->body).values_size(), 0);
  auto exps = HttpGet(exporter_->port(), "/api/v1/experiments");
  ASSERT_TRUE(exps.ok());
  google::protobuf::ListValue list = ParseList(exps->body);
  ASSERT_EQ(list.values_size(), 1);
  EXPECT_EQ(list.values(0).struct_value().fields().at("runs").number_value(), 2);
}

// The results of a big experiment are megabytes of JSON: every fetch, plain or gzip,
// arrives whole (HttpGet checks Content-Length) and parses, with one row per DONE run.
TEST_F(ResultsApiTest, MultiMegabyteResultsArriveWholePlainAndGzip) {
  constexpr int kCells = 3000;
  v1::Experiment exp;
  exp.set_name("big");
  exp.set_repeats(1);
  std::vector<std::string> kernels;
  kernels.reserve(kCells);
  for (int i = 0; i < kCells; ++i) kernels.push_back("sim:6.16+patch-" + std::to_string(i));
  AddKernelCells(&exp, kernels);
  auto id = store_->CreateExperiment(exp);
  ASSERT_TRUE(id.ok()) << id.status();
  auto created = store_->GetExperiment(*id, false);
  ASSERT_TRUE(created.ok());
  for (const v1::Run& run : created->runs()) FinishDone(run);
  size_t first_size = 0;
  for (int i = 0; i < 6; ++i) {
    const bool gzip = i % 2 == 1;
    auto r = HttpGet(exporter_->port(), "/api/v1/results?experiment=" + std::to_string(*id),
                     {.timeout = absl::Seconds(60), .accept_gzip = gzip});
    ASSERT_TRUE(r.ok()) << "fetch " << i << ": " << r.status();
    ASSERT_EQ(r->status, 200);
    EXPECT_EQ(r->content_encoding, gzip ? "gzip" : "");
    if (i == 0) first_size = r->body.size();
    EXPECT_EQ(r->body.size(), first_size) << "fetch " << i;
    EXPECT_GT(r->body.size(), 1u << 20);
    EXPECT_EQ(ParseList(r->body).values_size(), kCells) << "fetch " << i;
  }
}

TEST_F(ResultsApiTest, BadRequestsGetClearStatuses) {
  auto missing = HttpGet(exporter_->port(), "/api/v1/results");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 400);
  auto bad = HttpGet(exporter_->port(), "/api/v1/results?experiment=abc");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("abc"), std::string::npos);
  auto unknown = HttpGet(exporter_->port(), "/api/v1/results?experiment=99");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, 404);
  auto none = HttpGet(exporter_->port(), "/api/v1/results?experiment=latest");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->body, "[]\n");
}

TEST_F(ResultsApiTest, StoreCallsAreTimedAndErrorsCountedByOperation) {
  MakeExperiment();
  EXPECT_FALSE(store_->GetRun(999).ok());
  const std::string text = exporter_->Scrape();
  EXPECT_NE(
      text.find("blkbench_store_operation_duration_seconds_count{operation=\"finish_run\"} 1"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("blkbench_store_errors_total{operation=\"get_run\"} 1"), std::string::npos);
  EXPECT_NE(text.find("blkbench_store_errors_total{operation=\"finish_run\"} 0"),
            std::string::npos);
}

}  // namespace
}  // namespace blkbench
