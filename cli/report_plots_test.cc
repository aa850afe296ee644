// The report's plots as a reader sees them: pages rendered by `blkbench sim --report`
// and by RenderExperimentReport, measured in headless Chromium at 1400 px
// (common/testing/plot_geometry.h) — round ticks inside the plots, log axes labelled,
// every marker and whisker inside its plot area, every series of the legend visible,
// rows of plots using the window's width, and no spike from a run's last, partial
// sample interval. Screenshots of the same pages: docs/report.md.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/cli.h"
#include "cli/report.h"
#include "common/histogram.h"
#include "common/testing/loop_device.h"
#include "common/testing/plot_geometry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

constexpr int kWindowWidth = 1400;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A run on a real device (as an agent reports it): four 1 s sample intervals at 1000
// IOPS and 50 % util, then the run's last interval cut after 5 ms — whose counters say
// 100 % util and 4000 IOPS, the spike a reader must not be shown.
void AddDeviceRun(v1::GetResultsResponse& resp, const std::string& bs, const std::string& scheduler,
                  uint32_t repeat) {
  v1::ResultRow* row = resp.add_rows();
  v1::CellSpec* cell = row->mutable_cell();
  cell->set_index(static_cast<uint32_t>(resp.rows_size() - 1) / 2);
  cell->mutable_target()->set_device_class("nvme");
  for (const auto& [key, value] : {std::pair{"bs", bs}, std::pair{"scheduler", scheduler}}) {
    v1::AxisValue* a = cell->add_axes();
    a->set_key(key);
    a->set_value(value);
  }
  v1::Run* run = row->mutable_run();
  run->set_id(static_cast<uint64_t>(resp.rows_size()));
  run->set_cell_index(cell->index());
  run->set_repeat(repeat);
  run->set_state(v1::RUN_DONE);
  v1::RunResult* r = run->mutable_result();
  r->set_iops(1000);  // every cell alike: the lines of "IOPS by bs" coincide
  r->mutable_host()->set_kernel_release("6.1.0-test");
  LatencyHistogram lat;
  lat.AddN(80'000, 990);
  lat.AddN(12'000'000, 10);
  lat.ToProto(r->mutable_lat());
  uint64_t offset = 0;
  for (int i = 0; i < 5; ++i) {
    const bool last = i == 4;
    const uint64_t interval = last ? 5'000'000 : 1'000'000'000;
    offset += interval;
    v1::Sample* s = row->add_samples();
    s->set_seq(static_cast<uint64_t>(i) + 1);
    s->set_offset_ns(offset);
    s->set_interval_ns(interval);
    s->mutable_io()->set_read_ios(last ? 20 : 1000);
    v1::DiskStatsInterval* d = s->mutable_device();
    d->set_reads(last ? 20 : 1000);
    d->set_io_ms(last ? 5 : 500);
    d->set_weighted_io_ms(last ? 20 : 1000);
    d->set_elapsed_ns(interval);
  }
}

void ExpectGeometryHolds(const testing::PlotGeometry& g) {
  EXPECT_GE(g.min_row_share, 0.9) << "the narrowest row of plots, as a share of 1400 px";
  EXPECT_GE(g.log_axes, 2);  // latency percentiles and CDF
  EXPECT_TRUE(g.problems.empty()) << absl::StrJoin(g.problems, "\n");
}

TEST(ReportPlotsTest, SimReportPassesTheGeometryChecksInChromium) {
  testing::TempDir dir("report_plots");
  const std::string matrix = dir.File("report.yaml");
  std::ofstream(matrix)
      << "name: report-plots\nrepeats: 2\njob: {rw: randread, ioengine: io_uring, "
         "runtime: 2s, time_based: 1}\nmatrix:\n  bs: [4k, 64k]\n  iodepth: [1, 4, 16]\n"
         "  scheduler: [none, mq-deadline]\ntarget: {device_class: sim:hdd}\n";
  const std::string page = dir.File("report.html");
  std::ostringstream out, err;
  ASSERT_EQ(RunCli({"sim", matrix, "--report", page, "--format", "csv", "-q"}, out, err), 0)
      << err.str();
  const std::string html = ReadAll(page);
  // "IOPS by bs": one line per iodepth x scheduler, six in the legend.
  EXPECT_THAT(html, HasSubstr("data-plot=\"axis:bs\""));
  EXPECT_THAT(html, HasSubstr("latency (log scale)"));
  if (!testing::HaveChromium()) {
    GTEST_SKIP() << "chromium is not installed (scripts/deps.sh installs it): not measured";
  }
  absl::StatusOr<testing::PlotGeometry> g = testing::MeasurePlots(page, kWindowWidth, dir.path());
  ASSERT_TRUE(g.ok()) << g.status();
  // Three axis plots, percentiles, CDF, time series.
  EXPECT_EQ(g->plots, 6);
  EXPECT_GE(g->series, 3 * 4 + 6 * 2 + 12 * 2);
  EXPECT_GT(g->ticks, 6 * 8);
  ExpectGeometryHolds(*g);
}

// Named jobs add the per-job plots (categorical jobs, a log p99 axis).
TEST(ReportPlotsTest, NamedJobsReportPassesTheGeometryChecksInChromium) {
  testing::TempDir dir("report_jobs");
  const std::string page = dir.File("report.html");
  const std::string matrix = std::string(BLKBENCH_SOURCE_DIR) + "/examples/reader-vs-writer.yaml";
  std::ostringstream out, err;
  ASSERT_EQ(RunCli({"sim", matrix, "--report", page, "--format", "csv", "-q"}, out, err), 0)
      << err.str();
  EXPECT_THAT(ReadAll(page), HasSubstr("data-plot=\"jobs-p99\""));
  if (!testing::HaveChromium()) {
    GTEST_SKIP() << "chromium is not installed (scripts/deps.sh installs it): not measured";
  }
  absl::StatusOr<testing::PlotGeometry> g = testing::MeasurePlots(page, kWindowWidth, dir.path());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_GE(g->log_axes, 3);  // percentiles, CDF, p99 per job
  ExpectGeometryHolds(*g);
}

TEST(ReportPlotsTest, PartialIntervalsAndEqualSeriesInChromium) {
  v1::GetResultsResponse resp;
  resp.mutable_experiment()->set_id(7);
  resp.mutable_experiment()->set_name("device");
  for (const char* bs : {"4k", "64k"}) {
    for (const char* sched : {"none", "mq-deadline"}) {
      for (uint32_t rep = 0; rep < 2; ++rep) AddDeviceRun(resp, bs, sched, rep);
    }
  }
  testing::TempDir dir("report_partial");
  const std::string page = dir.File("report.html");
  const std::string html = RenderExperimentReport(resp);
  std::ofstream(page) << html;
  EXPECT_THAT(html, HasSubstr("8 partial intervals at the end of a run"));  // said, not drawn
  if (!testing::HaveChromium()) {
    GTEST_SKIP() << "chromium is not installed (scripts/deps.sh installs it): not measured";
  }
  absl::StatusOr<testing::PlotGeometry> g = testing::MeasurePlots(page, kWindowWidth, dir.path());
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectGeometryHolds(*g);
  // Steady runs draw flat: every point of a series at the same height (a partial
  // interval drawn as a full one would sit at 100 % util and 4000 IOPS).
  for (const char* plot : {"timeseries", "device-util", "device-aqu"}) {
    ASSERT_TRUE(g->point_ys.count(plot)) << plot;
    const std::vector<std::vector<double>>& series = g->point_ys.at(plot);
    EXPECT_EQ(series.size(), 8u) << plot;
    for (const std::vector<double>& ys : series) {
      ASSERT_EQ(ys.size(), 4u) << plot;
      for (double y : ys) EXPECT_NEAR(y, ys.front(), 0.5) << plot;
    }
  }
}

}  // namespace
}  // namespace blkbench
