// `blkbench run` on real loop devices, end to end through RunCli (and, for Ctrl-C, the
// blkbench binary): a matrix runs and `results --db` reads it; a mounted device, a cell
// no given device matches and a device not given are refused with nothing written; the
// queue settings are restored after the run and after SIGINT; --trace writes blkparse text.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/cli.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using testing::LoopDevice;
using ::testing::Not;
using testing::TempDir;

int Cli(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  const int rc = RunCli(args, o, e);
  *out = o.str();
  *err = e.str();
  return rc;
}

// The active scheduler in sysfs's "a [b] c".
std::string Active(const std::string& schedulers) {
  const size_t open = schedulers.find('['), close = schedulers.find(']');
  if (open == std::string::npos || close == std::string::npos) return schedulers;
  return schedulers.substr(open + 1, close - open - 1);
}

// A scheduler the device offers other than its current one: the run must change it.
std::string OtherScheduler(const LoopDevice& loop) {
  const std::string all = loop.SysfsQueue("scheduler");
  for (absl::string_view s : absl::StrSplit(all, ' ', absl::SkipEmpty())) {
    if (s.front() != '[' && s != "none") return std::string(s);
  }
  return "none";
}

// The journal's entries (its .lock and temporaries aside): empty once all is restored.
std::vector<std::string> JournalEntries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.front() != '.') out.push_back(name);
  }
  return out;
}

std::string ReadDevice(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class RunCmdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (getuid() != 0) GTEST_SKIP() << "needs root (loop devices, queue settings)";
    loop_ = LoopDevice::Create(kDeviceMiB);
    if (loop_ == nullptr) GTEST_SKIP() << "loop devices unavailable";
    db_ = dir_.File("results.db");
    state_ = dir_.File("state");
    scheduler_ = OtherScheduler(*loop_);
  }
  // A matrix for class `device_class`: `cells` cells of a short random job of `rw`.
  std::string Matrix(const std::string& rw, const std::string& runtime,
                     const std::string& device_class = "loop") {
    std::string path = dir_.File("m.yaml");
    std::ofstream(path) << "name: local\nrepeats: 1\njob: {rw: " << rw
                        << ", bs: 4k, direct: 1, ioengine: io_uring, runtime: " << runtime
                        << ", time_based: 1, scheduler: " << scheduler_
                        << "}\nmatrix:\n  iodepth: [1, 4]\ntarget: {device_class: " << device_class
                        << "}\n";
    return path;
  }
  std::vector<std::string> RunArgs(const std::string& matrix) {
    return {"run", matrix, "--device", loop_->path(), "--db", db_, "--state-dir", state_};
  }
  bool DbExists() const {
    struct stat st;
    return stat(db_.c_str(), &st) == 0;
  }

  static constexpr uint64_t kDeviceMiB = 32;
  TempDir dir_{"run_cmd_test"};
  std::unique_ptr<LoopDevice> loop_;
  std::string db_, state_, scheduler_;
};

TEST_F(RunCmdTest, AMatrixRunsOnALoopDeviceAndResultsReadItWithDb) {
  const std::string before = loop_->SysfsQueue("scheduler");
  std::string out, err;
  ASSERT_EQ(Cli(RunArgs(Matrix("randread", "1500ms")), &out, &err), 0) << err;
  EXPECT_THAT(err, HasSubstr("[2/2] iodepth=4"));
  EXPECT_THAT(err, HasSubstr("stored as experiment 1 in " + db_));
  EXPECT_THAT(out, HasSubstr("the device during each run"));
  // Left as found: the scheduler the run switched to is undone, the journal is empty.
  EXPECT_EQ(loop_->SysfsQueue("scheduler"), before);
  EXPECT_THAT(JournalEntries(state_), ::testing::IsEmpty());

  ASSERT_EQ(Cli({"results", "1", "--db", db_, "--format", "csv"}, &out, &err), 0) << err;
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out;  // header and one row per run
  EXPECT_THAT(lines[1], HasSubstr(",done,"));
  EXPECT_THAT(lines[1], HasSubstr(loop_->path()));
  EXPECT_THAT(lines[1], HasSubstr(",loop,"));
  // Per interval, the device's own counters came along.
  ASSERT_EQ(Cli({"results", "1", "--db", db_, "--samples", "--format", "json"}, &out, &err), 0)
      << err;
  EXPECT_THAT(out, HasSubstr("\"device_util_pct\": "));
  EXPECT_THAT(out, Not(HasSubstr("\"device_util_pct\": null")));
  // The other readers take the same store.
  ASSERT_EQ(Cli({"list", "--db", db_}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("local"));
  ASSERT_EQ(Cli({"report", "1", "--db", db_}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("iostat aqu-sz"));
  EXPECT_EQ(Cli({"results", "1", "--db", dir_.File("missing.db")}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("no store at"));
}

// --trace on a matrix without trace: 1: every run traced (said on stderr, stored so), and
// its block events written as blkparse lines: each line parses, the device is the loop
// device, a run's D lines (with data) are its summary's trace_issued, every C follows a
// D of the same request, and every sector lies on the device.
TEST_F(RunCmdTest, TraceWritesEachRunsBlockEventsAsBlkparseText) {
  struct stat st;
  ASSERT_EQ(stat(loop_->path().c_str(), &st), 0);
  const std::string trace = dir_.File("trace.txt");
  std::vector<std::string> args = RunArgs(Matrix("randwrite", "500ms"));
  args.insert(args.end(), {"--trace", trace});
  std::string out, err;
  ASSERT_EQ(Cli(args, &out, &err), 0) << err;
  EXPECT_THAT(err, HasSubstr("--trace: block tracing 2 cells without trace: 1"));

  // The runs' summaries, by run id.
  ASSERT_EQ(Cli({"results", "1", "--db", db_, "--format", "csv"}, &out, &err), 0) << err;
  std::vector<std::string> rows = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(rows.size(), 3u) << out;
  const std::vector<std::string> header = absl::StrSplit(rows[0], ',');
  const auto column = [&](const std::string& name) {
    return std::find(header.begin(), header.end(), name) - header.begin();
  };
  const size_t run_col = column("run"), issued_col = column("internals.trace_issued");
  ASSERT_LT(issued_col, header.size()) << rows[0];
  std::map<uint64_t, uint64_t> issued_by_run;
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::vector<std::string> f = absl::StrSplit(rows[r], ',');
    ASSERT_EQ(f.size(), header.size()) << rows[r];
    issued_by_run[std::stoull(f[run_col])] = std::stoull(f[issued_col]);
  }

  const uint64_t device_sectors = kDeviceMiB << 11;
  const std::regex line_re(
      R"(^ *(\d+),(\d+) +(\d+) +(\d+) +(\d+)\.(\d{9}) +(\d+) +([QGIDCMFXR]) +([A-Z]+) (\d+) )"
      R"((\+|/) (\d+) \[([^\]]*)\]$)");
  std::ifstream in(trace);
  ASSERT_TRUE(in) << trace;
  std::map<uint64_t, uint64_t> d_by_run;
  uint64_t run = 0, lines = 0, queued = 0;
  std::set<std::pair<uint64_t, bool>> issued;  // (sector, write) issued, not completed
  bool lost = false;  // the ring overran in this run: a C's D may be among the lost
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# run ", 0) == 0) {
      run = std::stoull(line.substr(6));
      issued.clear();
      lost = false;
      continue;
    }
    if (line.rfind("# lost ", 0) == 0) {
      lost = true;
      continue;
    }
    ASSERT_NE(line.front(), '#') << line;  // nothing cut at 2^24 lines in a 500 ms run
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, line_re)) << line;
    ++lines;
    EXPECT_EQ(std::stoul(m[1]), major(st.st_rdev)) << line;
    EXPECT_EQ(std::stoul(m[2]), minor(st.st_rdev)) << line;
    const char action = m[8].str()[0];
    const bool write = m[9].str().find('W') != std::string::npos;
    const uint64_t sector = std::stoull(m[10]);
    const uint64_t sectors = m[11] == "+" ? std::stoull(m[12]) : 0;
    if (sectors == 0) continue;  // a flush without data
    EXPECT_LE(sector + sectors, device_sectors) << line;
    if (action == 'Q') ++queued;
    if (action == 'D') {
      ++d_by_run[run];
      issued.insert({sector, write});
    }
    if (action == 'C') {
      if (issued.erase({sector, write}) == 0) {
        EXPECT_TRUE(lost) << "C without a D: " << line;
      }
      EXPECT_EQ(m[13], "0") << line;  // the error
    }
  }
  EXPECT_GT(lines, 0u);
  EXPECT_GE(queued, d_by_run[1] + d_by_run[2]);  // Q and G are on with the text
  ASSERT_EQ(d_by_run.size(), 2u);
  for (const auto& [id, d] : d_by_run) {
    EXPECT_GT(d, 0u) << "run " << id;
    EXPECT_EQ(d, issued_by_run[id]) << "run " << id;
  }
  EXPECT_THAT(JournalEntries(state_), ::testing::IsEmpty());
}

TEST_F(RunCmdTest, AMountedDeviceIsRefusedAndNothingIsWritten) {
  if (!testing::HaveCommand("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 missing";
  const std::string mount_point = dir_.File("mnt");
  auto unmount = testing::MountExt4ReadOnly(loop_->path(), mount_point);
  ASSERT_TRUE(unmount.ok()) << unmount.status();
  const std::string content = ReadDevice(loop_->path());
  const uint64_t sectors = loop_->SectorsWritten();
  const std::string scheduler = loop_->SysfsQueue("scheduler");

  std::string out, err;
  EXPECT_EQ(Cli(RunArgs(Matrix("randwrite", "1s")), &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("refused: "));
  EXPECT_THAT(err, HasSubstr(loop_->path() + " is mounted at " + mount_point));
  EXPECT_FALSE(DbExists()) << "a refused run stores nothing";
  EXPECT_EQ(loop_->SectorsWritten(), sectors);
  EXPECT_EQ(loop_->SysfsQueue("scheduler"), scheduler);
  EXPECT_EQ(ReadDevice(loop_->path()), content);
}

// A cell needs a device of its class: the loop device is not an "hdd" unless told so, and
// nothing runs when a cell matches no device.
// Named jobs on a real device, stored and read back: a reader and a writer run at once,
// and fio-json has one fio job per named job (their I/O adding up to the
// --group_reporting total).
TEST_F(RunCmdTest, NamedJobsRunTogetherAndComeBackPerJob) {
  const std::string matrix = dir_.File("jobs.yaml");
  std::ofstream(matrix) << "name: jobs\njob: {direct: 1, runtime: 500ms, time_based: 1, size: 8m}\n"
                           "jobs:\n"
                           "  reader: {rw: randread, bs: 4k, ioengine: psync}\n"
                           "  writer: {rw: write, bs: 64k, ioengine: io_uring, iodepth: 8, "
                           "offset: 16m}\n"
                           "target: {device_class: loop}\n";
  std::string out, err;
  ASSERT_EQ(Cli(RunArgs(matrix), &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("job reader"));
  EXPECT_THAT(out, HasSubstr("job writer"));
  auto total_ios = [](const google::protobuf::Struct& job, const char* dir) {
    return job.fields().at(dir).struct_value().fields().at("total_ios").number_value();
  };
  ASSERT_EQ(Cli({"results", "1", "--db", db_, "--format", "fio-json"}, &out, &err), 0) << err;
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &doc).ok()) << out;
  const auto& jobs = doc.fields().at("jobs").list_value();
  ASSERT_EQ(jobs.values_size(), 2) << out;
  const google::protobuf::Struct& reader = jobs.values(0).struct_value();
  const google::protobuf::Struct& writer = jobs.values(1).struct_value();
  EXPECT_EQ(reader.fields().at("jobname").string_value(), "reader");
  EXPECT_EQ(writer.fields().at("jobname").string_value(), "writer");
  EXPECT_GT(total_ios(reader, "read"), 100);
  EXPECT_EQ(total_ios(reader, "write"), 0);
  EXPECT_GT(total_ios(writer, "write"), 100);
  EXPECT_EQ(total_ios(writer, "read"), 0);
  const auto& wopt = writer.fields().at("job options").struct_value().fields();
  EXPECT_EQ(wopt.at("bs").string_value(), "64k");
  EXPECT_EQ(wopt.at("ioengine").string_value(), "io_uring");
  ASSERT_EQ(
      Cli({"results", "1", "--db", db_, "--format", "fio-json", "--group_reporting"}, &out, &err),
      0)
      << err;
  google::protobuf::Struct merged;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &merged).ok()) << out;
  const auto& one = merged.fields().at("jobs").list_value();
  ASSERT_EQ(one.values_size(), 1);
  EXPECT_EQ(total_ios(one.values(0).struct_value(), "read"), total_ios(reader, "read"));
  EXPECT_EQ(total_ios(one.values(0).struct_value(), "write"), total_ios(writer, "write"));
}

TEST_F(RunCmdTest, ACellNoDeviceMatchesIsRefusedBeforeAnythingRuns) {
  const uint64_t sectors = loop_->SectorsWritten();
  std::string out, err;
  const std::string matrix = Matrix("randwrite", "1s", "hdd");
  EXPECT_EQ(Cli(RunArgs(matrix), &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("targets device class 'hdd'; the devices given: " + loop_->path() +
                             " (loop, detected)"));
  EXPECT_THAT(err, HasSubstr("give --device " + loop_->path() + "=hdd"));
  EXPECT_FALSE(DbExists());
  EXPECT_EQ(loop_->SectorsWritten(), sectors);
  // Told so, it runs there.
  std::vector<std::string> args = RunArgs(matrix);
  args[3] = loop_->path() + "=hdd";
  ASSERT_EQ(Cli(args, &out, &err), 0) << err;
  EXPECT_GT(loop_->SectorsWritten(), sectors);
}

// Only the devices given may be touched: a second loop device of the same class, not
// given, is left alone by a write matrix.
TEST_F(RunCmdTest, ADeviceNotGivenIsNeverTouched) {
  std::unique_ptr<LoopDevice> other = LoopDevice::Create(kDeviceMiB);
  ASSERT_NE(other, nullptr);
  const uint64_t sectors = other->SectorsWritten();
  const std::string scheduler = other->SysfsQueue("scheduler");
  std::string out, err;
  ASSERT_EQ(Cli(RunArgs(Matrix("randwrite", "1s")), &out, &err), 0) << err;
  EXPECT_EQ(other->SectorsWritten(), sectors);
  EXPECT_EQ(other->SysfsQueue("scheduler"), scheduler);
  EXPECT_THAT(out, Not(HasSubstr(other->path())));
  // Without --device nothing runs at all.
  EXPECT_EQ(Cli({"run", Matrix("randwrite", "1s"), "--db", db_, "--state-dir", state_}, &out, &err),
            2);
  EXPECT_THAT(err, HasSubstr("--device PATH"));
}

// Ctrl-C: the blkbench binary stops the running run through the executor's cancel path,
// restores the scheduler it changed, stores the run canceled and exits 1.
TEST_F(RunCmdTest, SigintCancelsTheRunAndRestoresTheDevice) {
  const char* build = getenv("BLKBENCH_BUILD_DIR");
  if (build == nullptr) GTEST_SKIP() << "BLKBENCH_BUILD_DIR not set (run through ctest)";
  const std::string binary = std::string(build) + "/cli/blkbench";
  const std::string before = loop_->SysfsQueue("scheduler");
  ASSERT_NE(Active(before), scheduler_) << "the run must change the scheduler";
  const std::vector<std::string> args = RunArgs(Matrix("randread", "60s"));
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    std::vector<char*> argv = {const_cast<char*>(binary.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  // Running once the cell's scheduler is in place (bounded: setup takes well under 30 s).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (Active(loop_->SysfsQueue("scheduler")) != scheduler_ &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(Active(loop_->SysfsQueue("scheduler")), scheduler_) << "the run never started";
  const auto interrupted = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  // Stopped within the executor's cancel grace, not at the end of the 60 s runtime.
  EXPECT_LT(std::chrono::steady_clock::now() - interrupted, std::chrono::seconds(20));
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(loop_->SysfsQueue("scheduler"), before);
  EXPECT_THAT(JournalEntries(state_), ::testing::IsEmpty());
  std::string out, err;
  ASSERT_EQ(Cli({"show", "1", "--db", db_, "--format", "json"}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("\"state\": \"canceled\""));
  EXPECT_THAT(out, Not(HasSubstr("\"done\"")));
}

}  // namespace
}  // namespace blkbench
