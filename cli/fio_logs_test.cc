// fio's log files from sim runs, read by fio's own tools (fiologparser.py,
// fiologparser_hist.py) and compared in shape with real fio 3.33's; and named jobs'
// per-interval statistics in fio-json, absent where the samples have no per-job share.
#include "cli/fio_logs.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/cli.h"
#include "cli/fio_json.h"
#include "cli/sim.h"
#include "common/histogram.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

// A reader and a writer (fio's job numbers 1 and 2), psync, every log.
constexpr char kMatrix[] =
    "name: logs\n"
    "job: {ioengine: psync, runtime: 2s, time_based: 1, log_avg_msec: 250, log_hist_msec: 500,\n"
    "      write_bw_log: p, write_iops_log: p, write_lat_log: p, write_hist_log: p}\n"
    "jobs:\n"
    "  reader: {rw: randread, bs: 4k}\n"
    "  writer: {rw: write, bs: 64k, offset: 1g}\n"
    "target: {device_class: \"sim:ssd\"}\n";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::vector<std::string>> Rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    rows.push_back(absl::StrSplit(line, ", "));
  }
  return rows;
}

// A window's mean as fio logs it (stat.c __add_stat_to_log: mean + 0.5, truncated).
uint64_t FioRound(double v) { return static_cast<uint64_t>(std::floor(v + 0.5)); }

uint64_t U(const std::string& s) {
  uint64_t v = 0;
  EXPECT_TRUE(absl::SimpleAtoi(s, &v)) << s;
  return v;
}

// fio's tools: zcat'ed from the fio package's docs into `dir`; "" when absent.
std::string FioTool(const testing::TempDir& dir, const std::string& name) {
  const std::string gz = "/usr/share/doc/fio/" + name + ".gz";
  if (!std::filesystem::exists(gz)) return "";
  std::string path = dir.File(name);
  if (testing::RunCommand("zcat " + gz + " > " + path) != 0) return "";
  return path;
}

v1::GetResultsResponse RunMatrix(const std::string& path, const std::string& logs_dir) {
  v1::GetResultsResponse resp;
  std::ostringstream out, err;
  absl::StatusOr<workloads::Matrix> matrix = workloads::ParseMatrixFile(path);
  EXPECT_TRUE(matrix.ok()) << matrix.status();
  if (!matrix.ok()) return resp;
  SessionOptions options;
  options.path = path;
  options.format = "csv";
  options.quiet = true;
  options.matrix = std::make_shared<const workloads::Matrix>(*std::move(matrix));
  options.on_results = [&](const v1::GetResultsResponse& r) { resp = r; };
  EXPECT_EQ(RunSim(options, out, err), 0) << err.str();
  if (!logs_dir.empty()) {
    std::ostringstream o, e;
    EXPECT_EQ(RunCli({"sim", path, "--logs", logs_dir, "-q", "--format", "csv"}, o, e), 0)
        << e.str();
  }
  return resp;
}

// The logs hold the run's per-job samples as fio's windowed logs would: one row per
// interval and direction with I/O, the interval's mean (KiB/s, IO/s, ns), time in ms.
TEST(FioLogsTest, SimLogsAreThePerJobSamplesInFiosFormat) {
  testing::TempDir dir("fio_logs");
  const std::string matrix = dir.File("m.yaml");
  std::ofstream(matrix) << kMatrix;
  const std::string logs = dir.File("logs");
  const v1::GetResultsResponse resp = RunMatrix(matrix, logs);
  ASSERT_EQ(resp.rows_size(), 1);
  const v1::ResultRow& row = resp.rows(0);
  ASSERT_GE(row.samples_size(), 8);  // 2 s of 250 ms

  // The CLI wrote what FioLogFiles gives for the same (deterministic) run.
  const FioLogs files = FioLogFiles(resp);
  EXPECT_THAT(files.skipped, ::testing::IsEmpty());
  std::set<std::string> names;
  for (const FioLogFile& f : files.files) {
    names.insert(f.name);
    EXPECT_EQ(ReadFile(logs + "/" + f.name), f.text) << f.name;
  }
  std::set<std::string> want;
  for (int job : {1, 2}) {
    for (const char* type : {"bw", "iops", "slat", "clat", "lat", "clat_hist"}) {
      want.insert(absl::StrCat("cell_rep0/p_", type, ".", job, ".log"));
    }
  }
  EXPECT_EQ(names, want);

  // Per job: its share of each sample; the jobs add up to the sample.
  for (const v1::Sample& s : row.samples()) {
    ASSERT_EQ(s.jobs_size(), 2);
    EXPECT_EQ(s.jobs(0).io().read_ios() + s.jobs(1).io().read_ios(), s.io().read_ios());
    EXPECT_EQ(s.jobs(0).io().write_bytes() + s.jobs(1).io().write_bytes(), s.io().write_bytes());
    EXPECT_EQ(s.jobs(0).io().write_ios(), 0u);  // the reader
    EXPECT_EQ(s.jobs(1).io().read_ios(), 0u);   // the writer
  }
  const std::string bw = ReadFile(logs + "/cell_rep0/p_bw.2.log");
  const std::string iops = ReadFile(logs + "/cell_rep0/p_iops.1.log");
  const std::string clat = ReadFile(logs + "/cell_rep0/p_clat.1.log");
  const auto bw_rows = Rows(bw), iops_rows = Rows(iops), clat_rows = Rows(clat);
  ASSERT_EQ(bw_rows.size(), static_cast<size_t>(row.samples_size()));
  ASSERT_EQ(iops_rows.size(), static_cast<size_t>(row.samples_size()));
  ASSERT_EQ(clat_rows.size(), static_cast<size_t>(row.samples_size()));
  for (int i = 0; i < row.samples_size(); ++i) {
    const v1::Sample& s = row.samples(i);
    const double secs = static_cast<double>(s.interval_ns()) / 1e9;
    const uint64_t ms = s.offset_ns() / 1'000'000;
    const v1::JobInterval& reader = s.jobs(0);
    const v1::JobInterval& writer = s.jobs(1);
    EXPECT_THAT(
        bw_rows[i],
        ::testing::ElementsAre(
            absl::StrCat(ms),
            absl::StrCat(FioRound(static_cast<double>(writer.io().write_bytes()) / 1024 / secs)),
            "1", "0", "0"));
    EXPECT_THAT(iops_rows[i],
                ::testing::ElementsAre(
                    absl::StrCat(ms),
                    absl::StrCat(FioRound(static_cast<double>(reader.io().read_ios()) / secs)), "0",
                    "0", "0"));
    const double mean = reader.read_lat().sum_ns() / static_cast<double>(reader.read_lat().count());
    EXPECT_THAT(clat_rows[i], ::testing::ElementsAre(absl::StrCat(ms), absl::StrCat(FioRound(mean)),
                                                     "0", "0", "0"));
  }
  EXPECT_EQ(ReadFile(logs + "/cell_rep0/p_lat.1.log"), clat);  // psync: lat is clat
  EXPECT_EQ(ReadFile(logs + "/cell_rep0/p_slat.1.log"), "");   // as fio's for psync

  // The histogram log: every two samples (500 ms / 250 ms), 3 + 1856 columns, fio's
  // bucket layout; the bucket counts are the two intervals' summed.
  const auto hist_rows = Rows(ReadFile(logs + "/cell_rep0/p_clat_hist.1.log"));
  ASSERT_EQ(hist_rows.size(), static_cast<size_t>(row.samples_size() / 2));
  for (size_t w = 0; w < hist_rows.size(); ++w) {
    ASSERT_EQ(hist_rows[w].size(), 3u + LatencyHistogram::kBuckets);
    const v1::Sample& last = row.samples(static_cast<int>(2 * w + 1));
    EXPECT_EQ(hist_rows[w][0], absl::StrCat(last.offset_ns() / 1'000'000));
    EXPECT_EQ(hist_rows[w][1], "0");
    EXPECT_EQ(hist_rows[w][2], "4096");
    uint64_t count = 0;
    for (size_t b = 3; b < hist_rows[w].size(); ++b) count += U(hist_rows[w][b]);
    EXPECT_EQ(count, row.samples(static_cast<int>(2 * w)).jobs(0).read_lat().count() +
                         last.jobs(0).read_lat().count());
  }

  // fio's own readers. fiologparser.py predates the priority column fio 3.33 writes (it
  // fails on fio's own logs alike): given the rows without it, its time-weighted mean of
  // the reader's IOPS is the job's IOPS.
  const std::string parser = FioTool(dir, "fiologparser.py");
  if (parser.empty()) GTEST_SKIP() << "fio's fiologparser.py is not installed (fio package)";
  std::string why;
  ASSERT_EQ(testing::RunCommand("sed 's/, [0-9]*$//' " + logs + "/cell_rep0/p_iops.1.log > " +
                                dir.File("iops4.log")),
            0);
  ASSERT_EQ(testing::RunCommand("python3 " + parser + " " + dir.File("iops4.log") + " 2>&1", &why),
            0)
      << why;
  const double parsed = std::stod(why);
  const v1::JobResult& reader = row.run().result().jobs(0);
  EXPECT_NEAR(parsed, reader.iops(), reader.iops() * 1e-3) << why;

  const std::string hist = FioTool(dir, "fiologparser_hist.py");
  if (hist.empty() || testing::RunCommand("/usr/bin/python3 -c 'import pandas' 2>/dev/null") != 0) {
    GTEST_SKIP() << "fiologparser_hist.py or python3-pandas is not installed (scripts/deps.sh)";
  }
  ASSERT_EQ(testing::RunCommand("/usr/bin/python3 " + hist + " -i 500 " + logs +
                                    "/cell_rep0/p_clat_hist.1.log 2>&1",
                                &why),
            0)
      << why;
  // end-time, samples, min, avg, median, 90%, 95%, 99%, max: a row per window, its
  // samples the window's completions, its median within fio's bucket error of ours.
  const auto parsed_rows = Rows(why);
  ASSERT_EQ(parsed_rows.size(), hist_rows.size() + 1) << why;
  for (size_t w = 0; w < hist_rows.size(); ++w) {
    const auto& r = parsed_rows[w + 1];
    ASSERT_EQ(r.size(), 9u) << why;
    uint64_t count = 0;
    LatencyHistogram merged;
    for (int k : {0, 1}) {
      const v1::Histogram& h = row.samples(static_cast<int>(2 * w) + k).jobs(0).read_lat();
      count += h.count();
      absl::StatusOr<LatencyHistogram> one = LatencyHistogram::FromProto(h);
      ASSERT_TRUE(one.ok()) << one.status();
      merged.Merge(*one);
    }
    EXPECT_EQ(U(r[1]), count) << why;
    const double median = std::stod(r[4]);
    const double ours = static_cast<double>(merged.Percentile(50));
    EXPECT_NEAR(median, ours, ours * 0.02) << why;
  }
}

// Real fio 3.33 with the same log options on a regular file: the same file names, the
// same columns per file, times in ms from the log interval on, slat empty for psync.
// A stored experiment's logs (`results --logs`, its samples read back from the store with
// their jobs) are the files `sim --logs` wrote for the same runs.
TEST(FioLogsTest, ResultsWritesFromTheStoreWhatSimWrote) {
  testing::TempDir dir("fio_logs_store");
  const std::string matrix = dir.File("m.yaml");
  std::ofstream(matrix) << kMatrix;
  const std::string db = dir.File("s.db");
  const std::string sim_logs = dir.File("sim");
  const std::string stored_logs = dir.File("stored");
  std::ostringstream o, e;
  ASSERT_EQ(RunCli({"sim", matrix, "--db", db, "--logs", sim_logs, "-q", "--format", "csv"}, o, e),
            0)
      << e.str();
  ASSERT_EQ(RunCli({"results", "1", "--db", db, "--logs", stored_logs, "--format", "csv"}, o, e), 0)
      << e.str();
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(sim_logs)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = std::filesystem::relative(entry.path(), sim_logs).string();
    names.insert(name);
    EXPECT_EQ(ReadFile((std::filesystem::path(stored_logs) / name).string()),
              ReadFile(entry.path().string()))
        << name;
  }
  EXPECT_EQ(names.size(), 12u);  // two jobs' bw, iops, slat, clat, lat and clat_hist
  size_t stored = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(stored_logs)) {
    stored += entry.is_regular_file() ? 1 : 0;
  }
  EXPECT_EQ(stored, names.size());
}

TEST(FioLogsTest, ShapeIsRealFios) {
  if (testing::RunCommand("fio --version >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "fio is not installed (scripts/deps.sh installs it)";
  }
  testing::TempDir dir("fio_logs_shape");
  const std::string theirs = dir.File("fio"), ours = dir.File("ours");
  std::filesystem::create_directories(theirs);
  std::string why;
  ASSERT_EQ(
      testing::RunCommand("cd " + theirs + " && fio --name=reader --filename=" + dir.File("data") +
                              " --size=4M --rw=randread --bs=4k --ioengine=psync"
                              " --time_based --runtime=1 --log_avg_msec=250"
                              " --log_hist_msec=500 --write_bw_log=p --write_iops_log=p"
                              " --write_lat_log=p --write_hist_log=p --output=/dev/null 2>&1",
                          &why),
      0)
      << why;
  const std::string matrix = dir.File("m.yaml");
  std::ofstream(matrix) << "name: shape\njob: {rw: randread, bs: 4k, ioengine: psync, runtime: 1s,"
                           " time_based: 1, log_avg_msec: 250, log_hist_msec: 500,"
                           " write_bw_log: p, write_iops_log: p, write_lat_log: p,"
                           " write_hist_log: p}\ntarget: {device_class: \"sim:ssd\"}\n";
  RunMatrix(matrix, ours);
  std::set<std::string> fio_names, our_names;
  for (const auto& e : std::filesystem::directory_iterator(theirs)) {
    fio_names.insert(e.path().filename().string());
  }
  for (const auto& e : std::filesystem::directory_iterator(ours + "/cell_rep0")) {
    our_names.insert(e.path().filename().string());
  }
  EXPECT_EQ(our_names, fio_names);
  for (const std::string& name : fio_names) {
    SCOPED_TRACE(name);
    const auto fio_rows = Rows(ReadFile(absl::StrCat(theirs, "/", name)));
    const auto our_rows = Rows(ReadFile(absl::StrCat(ours, "/cell_rep0/", name)));
    EXPECT_EQ(fio_rows.empty(), our_rows.empty());
    if (fio_rows.empty() || our_rows.empty()) continue;
    EXPECT_EQ(our_rows[0].size(), fio_rows[0].size());
    // Time in ms: the first window ends about one interval in, in both.
    const uint64_t interval = name.find("hist") != std::string::npos ? 500 : 250;
    EXPECT_GE(U(fio_rows[0][0]), interval - 10);
    EXPECT_LE(U(fio_rows[0][0]), interval + 100);
    EXPECT_EQ(U(our_rows[0][0]), interval);
  }
}

// A cell's rows for the fio-json tests: two named jobs, two 1 s samples.
v1::GetResultsResponse NamedJobRun(bool per_job_samples) {
  v1::GetResultsResponse resp;
  v1::ResultRow* row = resp.add_rows();
  v1::CellSpec* cell = row->mutable_cell();
  cell->mutable_target()->set_device_class("nvme");
  for (const char* name : {"reader", "writer"}) cell->add_jobs()->set_name(name);
  v1::Run* run = row->mutable_run();
  run->set_id(1);
  run->set_state(v1::RUN_DONE);
  v1::RunResult* r = run->mutable_result();
  r->set_duration_ns(2'000'000'000);
  r->add_jobs()->mutable_io()->set_read_ios(3000);
  r->add_jobs()->mutable_io()->set_write_ios(10);
  const uint64_t reads[] = {1000, 2000};
  for (uint64_t i = 0; i < 2; ++i) {
    v1::Sample* s = row->add_samples();
    s->set_seq(i + 1);
    s->set_offset_ns((i + 1) * 1'000'000'000);
    s->set_interval_ns(1'000'000'000);
    s->mutable_io()->set_read_ios(reads[i]);
    s->mutable_io()->set_read_bytes(reads[i] * 4096);
    s->mutable_io()->set_write_ios(5);
    s->mutable_io()->set_write_bytes(5 << 20);
    if (!per_job_samples) continue;
    v1::JobInterval* reader = s->add_jobs();
    reader->set_name("reader");
    reader->mutable_io()->set_read_ios(reads[i]);
    reader->mutable_io()->set_read_bytes(reads[i] * 4096);
    v1::JobInterval* writer = s->add_jobs();
    writer->set_index(1);
    writer->set_name("writer");
    writer->mutable_io()->set_write_ios(5);
    writer->mutable_io()->set_write_bytes(5 << 20);
  }
  return resp;
}

google::protobuf::Struct Direction(const v1::GetResultsResponse& resp, int job, const char* dir) {
  const std::string json = FioJsonDocument(resp, {});
  google::protobuf::Struct doc;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &doc).ok()) << json;
  return doc.fields()
      .at("jobs")
      .list_value()
      .values(job)
      .struct_value()
      .fields()
      .at(dir)
      .struct_value();
}

// Named jobs' bw_*/iops_* are their own samples' (fio's sample standard deviation), and
// absent — not 0 — for runs whose samples have no per-job share.
TEST(FioLogsTest, NamedJobsIntervalStatisticsAreTheirOwnOrAbsent) {
  const auto read = Direction(NamedJobRun(true), 0, "read").fields();
  EXPECT_EQ(read.at("iops_samples").number_value(), 2);
  EXPECT_EQ(read.at("iops_min").number_value(), 1000);
  EXPECT_EQ(read.at("iops_max").number_value(), 2000);
  EXPECT_EQ(read.at("iops_mean").number_value(), 1500);
  EXPECT_NEAR(read.at("iops_stddev").number_value(), std::sqrt(2.0) * 500, 1e-6);
  EXPECT_EQ(read.at("bw_min").number_value(), 4000);  // KiB/s
  const auto write = Direction(NamedJobRun(true), 1, "write").fields();
  EXPECT_EQ(write.at("iops_mean").number_value(), 5);
  EXPECT_EQ(write.at("bw_samples").number_value(), 2);

  const auto old = Direction(NamedJobRun(false), 0, "read").fields();
  EXPECT_EQ(old.at("total_ios").number_value(), 3000);
  for (const char* key : {"iops_min", "iops_max", "iops_mean", "iops_stddev", "iops_samples",
                          "bw_min", "bw_max", "bw_agg", "bw_mean", "bw_dev", "bw_samples"}) {
    EXPECT_EQ(old.count(key), 0u) << key;
  }
  // Their logs cannot be written either: said, not faked.
  v1::GetResultsResponse no_jobs = NamedJobRun(false);
  no_jobs.mutable_rows(0)->mutable_cell()->mutable_jobs(0)->mutable_job()->set_write_bw_log("x");
  no_jobs.mutable_rows(0)->mutable_cell()->mutable_jobs(0)->mutable_job()->set_log_avg_msec(1000);
  no_jobs.mutable_rows(0)->mutable_cell()->mutable_job()->set_log_avg_msec(1000);
  const FioLogs logs = FioLogFiles(no_jobs);
  EXPECT_THAT(logs.files, ::testing::IsEmpty());
  ASSERT_EQ(logs.skipped.size(), 1u);
  EXPECT_THAT(logs.skipped[0], HasSubstr("no per-job samples"));
}

}  // namespace
}  // namespace blkbench
