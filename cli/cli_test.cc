// CLI behaviour a new user meets first: validate's output and errors, usage errors, and
// a clear message with exit code 3 when the controller cannot be reached.
#include "cli/cli.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/connect_errors.h"
#include "cli/fio_json.h"
#include "common/clock.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"
#include "controller/server.h"
#include "controller/store/store_wrapper.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

int Cli(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  const int rc = RunCli(args, o, e);
  *out = o.str();
  *err = e.str();
  return rc;
}

TEST(CliTest, ValidatePrintsCellsOfTheQuickstart) {
  std::string out, err;
  const std::string src = std::string(BLKBENCH_SOURCE_DIR) + "/examples/quickstart.yaml";
  ASSERT_EQ(Cli({"validate", src}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("8 cells x 1 repeat = 8 runs"));
}

// Every matrix shipped under examples/ (not the CI pipeline files) validates: examples
// that users copy never rot behind the parser. From the repository root, where the
// examples' machine profile paths start (the CLI reads them relative to where it runs).
TEST(CliTest, EveryExampleMatrixValidates) {
  const std::filesystem::path root = std::filesystem::path(BLKBENCH_SOURCE_DIR) / "examples";
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(BLKBENCH_SOURCE_DIR);
  size_t checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::filesystem::path& p = entry.path();
    if (p.extension() != ".yaml" || p.parent_path().filename() == "ci") continue;
    std::string out, err;
    EXPECT_EQ(Cli({"validate", p.string()}, &out, &err), 0) << p << ": " << err;
    ++checked;
  }
  std::filesystem::current_path(cwd);
  EXPECT_GE(checked, 10u);
}

TEST(CliTest, ValidateNamesTheLineOfATypo) {
  testing::TempDir dir("cli_test");
  const std::string path = dir.File("typo.yaml");
  std::ofstream(path)
      << "name: t\njob:\n  rw: randread\n  iodeth: 32\ntarget: {device_class: ssd}\n";
  std::string out, err;
  EXPECT_EQ(Cli({"validate", path}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr(path + ":4:3"));
  EXPECT_THAT(err, HasSubstr("iodepth"));
}

TEST(CliTest, SubmitOfBadFileFailsBeforeDialling) {
  testing::TempDir dir("cli_test");
  const std::string path = dir.File("bad.yaml");
  std::ofstream(path) << "name: t\njob: {bs: 4000}\ntarget: {device_class: ssd}\n";
  std::string out, err;
  EXPECT_EQ(Cli({"--controller", "127.0.0.1:1", "submit", path}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr(path + ":2"));
  EXPECT_THAT(err, HasSubstr("512"));
}

TEST(CliTest, UnreachableControllerIsAClearError) {
  std::string out, err;
  EXPECT_EQ(Cli({"--controller", "127.0.0.1:1", "list"}, &out, &err), 3);
  EXPECT_THAT(err, HasSubstr("cannot reach the controller at 127.0.0.1:1"));
}

TEST(CliTest, PlainTextToAnotherHostIsRefusedBeforeDiallingUnlessInsecure) {
  std::string out, err;
  const absl::Time start = absl::Now();
  // 192.0.2.1 (TEST-NET-1) answers nothing: dialling it would wait the full 3 s.
  EXPECT_EQ(Cli({"--controller", "192.0.2.1:7450", "list"}, &out, &err), 3);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2)) << "refused only after dialling";
  EXPECT_THAT(err, HasSubstr("refusing to dial the controller at 192.0.2.1:7450 without TLS"));
  EXPECT_THAT(err, HasSubstr("--insecure"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("cannot reach")));
  err.clear();
  EXPECT_EQ(Cli({"--controller", "192.0.2.1:7450", "--insecure", "list"}, &out, &err), 3);
  EXPECT_THAT(err, HasSubstr("WARNING: --insecure: dialling the controller at 192.0.2.1:7450"));
  EXPECT_THAT(err, HasSubstr("cannot reach the controller at 192.0.2.1:7450"));
}

// A store that is down, as PostgreSQL stopped under a running controller leaves it.
// Up while `down` is false (the controller starts), then down.
class DownStore final : public StoreWrapper {
 public:
  DownStore(std::unique_ptr<Store> store, const std::atomic<bool>& down)
      : StoreWrapper(std::move(store)), down_(down) {}
  absl::StatusOr<std::vector<v1::Experiment>> ListExperiments(uint32_t limit) override {
    if (!down_) return StoreWrapper::ListExperiments(limit);
    return absl::UnavailableError(
        "list experiments: connection to PostgreSQL lost: server closed the connection");
  }

 private:
  const std::atomic<bool>& down_;
};

// The controller answers; only its store is down: not "cannot reach the controller".
TEST(CliTest, StoreUnavailableIsNotAnUnreachableController) {
  testing::TempDir dir("cli_test");
  SystemClock clock;
  ServerOptions options;
  options.listen = "";
  options.in_process_only = true;
  options.db_path = dir.File("s.db");
  std::atomic<bool> down{false};
  options.wrap_store = [&down](std::unique_ptr<Store> store) -> std::unique_ptr<Store> {
    return std::make_unique<DownStore>(std::move(store), down);
  };
  absl::StatusOr<std::unique_ptr<ControllerServer>> server =
      ControllerServer::Start(options, clock);
  ASSERT_TRUE(server.ok()) << server.status();
  down = true;
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"list"}, out, err, (*server)->InProcessChannel()), kExitStoreUnavailable);
  EXPECT_THAT(err.str(), HasSubstr("is running but its store is unavailable: list experiments: "
                                   "connection to PostgreSQL lost"));
  EXPECT_THAT(err.str(), ::testing::Not(HasSubstr("cannot reach")));
}

TEST(CliTest, AMissingUnixSocketIsNamed) {
  std::string out, err;
  EXPECT_EQ(Cli({"--controller", "unix:/nonexistent/c.sock", "list"}, &out, &err), 3);
  EXPECT_THAT(err, HasSubstr("no socket at /nonexistent/c.sock"));
}

// UnreachableMessage as `uid` sees it: in a child that drops to that user when this test
// runs as root (root passes every permission check).
std::string UnreachableMessageAs(uid_t uid, const std::string& address) {
  if (geteuid() != 0) return UnreachableMessage(address, "");
  int fds[2];
  if (pipe(fds) != 0) return "<pipe failed>";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string msg =
        setgid(uid) == 0 && setuid(uid) == 0 ? UnreachableMessage(address, "") : "<setuid failed>";
    (void)!write(fds[1], msg.data(), msg.size());
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;)
    msg.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return msg;
}

TEST(CliTest, APermissionDeniedSocketIsNotAnUnreachableController) {
  testing::TempDir dir("cli_test");
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  const std::string path = dir.File("c.sock");
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << strerror(errno);
  ASSERT_EQ(listen(fd, 1), 0);
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  const uid_t nobody = 65534;
  if (geteuid() != 0 && access(path.c_str(), W_OK) == 0) GTEST_SKIP() << "socket is ours";
  const std::string msg = UnreachableMessageAs(nobody, "unix:" + path);
  EXPECT_THAT(msg, HasSubstr("permission denied on the socket " + path + " (mode 0600"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("is blkbench-controller running")));
  close(fd);
}

TEST(CliTest, SimRunsAMatrixOnTheEngineAndStoresIt) {
  testing::TempDir dir("cli_test");
  const std::string path = dir.File("sim.yaml");
  std::ofstream(path) << "name: s\njob: {rw: randread, bs: 4k, ioengine: io_uring, "
                         "runtime: 10ms, time_based: 1}\nmatrix:\n  iodepth: [1, 8]\n"
                         "target: {device_class: sim:null_blk}\n";
  std::string out, err;
  ASSERT_EQ(Cli({"sim", path, "--db", dir.File("sim.db"), "--trace", dir.File("trace.txt"),
                 "--format", "csv"},
                &out, &err),
            0)
      << err;
  // blkparse-style D and C events, one D and one C per request.
  const std::string trace = testing::ReadFileOr(dir.File("trace.txt"));
  EXPECT_THAT(trace, HasSubstr("# run 1 iodepth=1 rep 0"));
  EXPECT_THAT(trace, ::testing::ContainsRegex(" D +R [0-9]+ \\+ 8 "));
  EXPECT_THAT(trace, ::testing::ContainsRegex(" C +R [0-9]+ \\+ 8 "));
  // Progress on stderr; stdout is only the CSV.
  EXPECT_THAT(err, HasSubstr("[2/2] iodepth=8 rep 0"));
  EXPECT_THAT(err, HasSubstr("stored as experiment 1"));
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_EQ(lines[0].rfind("experiment,experiment_name,run,cell_index,", 0), 0u) << lines[0];
  EXPECT_EQ(testing::RunCommand(
                "sqlite3 " + dir.File("sim.db") + " \"SELECT COUNT(*) FROM results\"", &out),
            0);
  EXPECT_EQ(out, "2");
}

// gate --axis on a local store without --experiment: the newest experiment, said so.
TEST(CliTest, GateOnALocalStoreDefaultsToItsNewestExperiment) {
  testing::TempDir dir("cli_test");
  const std::string db = dir.File("g.db");
  for (const char* name : {"older", "newer"}) {
    const std::string path = dir.File(std::string(name) + ".yaml");
    std::ofstream(path) << "name: " << name
                        << "\nrepeats: 2\njob: {rw: randread, bs: 4k, ioengine: io_uring, "
                           "runtime: 10ms, time_based: 1}\nmatrix:\n  iodepth: [1, 8]\n"
                           "target: {device_class: sim:null_blk}\n";
    std::string out, err;
    ASSERT_EQ(Cli({"sim", path, "--db", db, "--quiet"}, &out, &err), 0) << err;
  }
  std::string out, err;
  EXPECT_THAT(Cli({"gate", "--db", db, "--axis", "iodepth", "--baseline", "1", "--candidate", "8"},
                  &out, &err),
              ::testing::AnyOf(0, 1, 2))
      << err;
  EXPECT_THAT(err, HasSubstr("experiment 2 'newer', the newest in the store"));
  EXPECT_THAT(out, HasSubstr("iodepth 1 -> 8"));
  // Without --db an experiment is still required.
  EXPECT_EQ(Cli({"gate", "--axis", "iodepth", "--baseline", "1", "--candidate", "8"}, &out, &err),
            3);
  EXPECT_THAT(err, HasSubstr("usage: blkbench gate"));
}

// Seed 000's fio line as pasted (shorter runtime and fewer jobs), imported for a
// simulated null_blk and run on the engine; and the job-file hint from validate.
TEST(CliTest, ImportOfAFioCommandLineRunsOnTheEngine) {
  testing::TempDir dir("cli_test");
  std::string yaml, err;
  ASSERT_EQ(Cli({"import", "--device-class", "sim:null_blk", "--", "fio", "-filename=/dev/nullb0",
                 "-name=test", "-rw=randwrite", "-bs=4k", "-iodepth=32", "-numjobs=2",
                 "--iodepth_batch_submit=8", "--iodepth_batch_complete=8", "-direct=1",
                 "-ioengine=io_uring", "-group_reporting", "-time_based", "-runtime=20ms"},
                &yaml, &err),
            0)
      << err;
  EXPECT_EQ(err, "");  // the class was given: nothing to confirm
  EXPECT_THAT(yaml, HasSubstr("# group_reporting"));
  const std::string path = dir.File("imported.yaml");
  std::ofstream(path) << yaml;
  std::string out;
  ASSERT_EQ(Cli({"sim", path, "--format", "csv", "--quiet"}, &out, &err), 0) << err << yaml;
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  EXPECT_EQ(lines.size(), 2u) << out;  // the header and the one cell

  const std::string fio = dir.File("seed001.fio");
  std::ofstream(fio) << "[global]\nfilename=/dev/sda\ndirect=1\n[test]\nrw=randwrite\n";
  EXPECT_EQ(Cli({"validate", fio}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("this looks like a fio job file, not a matrix; convert it with "
                             "'blkbench import " +
                             fio + "'"));
  ASSERT_EQ(Cli({"import", fio}, &yaml, &err), 0) << err;
  EXPECT_THAT(err, HasSubstr("target.device_class 'sd' was guessed from /dev/sda"));
  EXPECT_EQ(Cli({"import", dir.File("missing.fio")}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("cannot read"));
}

// A job file that loses what changes the workload is refused (exit 1, nothing written),
// every loss named with its file:line; --lossy writes it with the losses at its top.
// Errors in the matrix written name --output's file, not the .fio.
TEST(CliTest, ImportRefusesALossyJobFileUnlessLossy) {
  testing::TempDir dir("cli_test");
  const std::string fio = dir.File("engines.fio");
  std::ofstream(fio) << "[global]\nfilename=/dev/nvme0n1\nioengine=net\n[a]\nrw=randread\n"
                        "[b]\nstonewall\nrw=write\nbs=64k\n";
  std::string out, err;
  EXPECT_EQ(Cli({"import", fio}, &out, &err), 1);
  EXPECT_EQ(out, "");
  EXPECT_THAT(err, HasSubstr(fio + ":3: ioengine=net: lost, the workload changes: blkbench's "
                                   "'ioengine' expects one of"));
  EXPECT_THAT(err, HasSubstr(fio + ":6: job 'b': lost, the workload changes"));
  EXPECT_THAT(err, HasSubstr("refused: the matrix would not run what " + fio + " runs"));

  const std::string yaml = dir.File("engines.yaml");
  ASSERT_EQ(Cli({"import", fio, "--lossy", "-o", yaml}, &out, &err), 0) << err;
  EXPECT_EQ(out, "");
  std::string written;
  std::getline(std::ifstream(yaml), written, '\0');
  EXPECT_THAT(written,
              ::testing::StartsWith("# LOSSY IMPORT: this matrix does not run what " + fio +
                                    " runs. Lost:\n#   " + fio + ":3: ioengine=net: "));
  EXPECT_EQ(Cli({"validate", yaml}, &out, &err), 0) << err;

  // Nothing lost, but no class to name: written, exit 1, the error placed in the output.
  const std::string bare = dir.File("bare.fio");
  std::ofstream(bare) << "[j]\nrw=read\n";
  const std::string bare_yaml = dir.File("bare.yaml");
  EXPECT_EQ(Cli({"import", bare, "--output", bare_yaml}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr(bare_yaml + " does not validate; edit it:\n" + bare_yaml + ":"));
  EXPECT_THAT(err, HasSubstr("key 'device_class': expected a device class"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr(bare + ":")));
  EXPECT_EQ(Cli({"validate", bare_yaml}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("not a placeholder such as CHANGE-ME"));
}

// The matrix file is read once: the check's read is what the run uses. A FIFO holds
// its text for one read only; a second open would block (ctest's timeout ends it).
TEST(CliTest, SimAndValidateReadTheMatrixFileOnce) {
  testing::TempDir dir("cli_test");
  const std::string text =
      "name: s\njob: {rw: randread, bs: 4k, ioengine: io_uring, runtime: 5ms, "
      "time_based: 1}\ntarget: {device_class: sim:null_blk}\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"validate"}, "1 cells x 1 repeats = 1 runs"},
      {{"sim", "--format", "csv"}, "experiment,experiment_name,run,"}};
  for (const auto& [args, expected] : cases) {
    const std::string path = dir.File(args[0] + ".fifo");
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0) << strerror(errno);
    std::thread writer([&path, &text] { std::ofstream(path) << text; });
    std::vector<std::string> argv = args;
    argv.insert(argv.begin() + 1, path);
    std::string out, err;
    EXPECT_EQ(Cli(argv, &out, &err), 0) << args[0] << ": " << err;
    writer.join();
    EXPECT_THAT(out, HasSubstr(expected)) << args[0] << ": " << out;
  }
}

TEST(CliTest, SimRefusesRealDeviceClasses) {
  std::string out, err;
  const std::string src = std::string(BLKBENCH_SOURCE_DIR) + "/examples/quickstart.yaml";
  EXPECT_EQ(Cli({"sim", src}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("blkbench sim runs only simulated classes"));
}

TEST(CliTest, UsageErrors) {
  std::string out, err;
  EXPECT_EQ(Cli({}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("usage: blkbench"));
  EXPECT_EQ(Cli({"frobnicate"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("unknown command 'frobnicate'"));
  EXPECT_EQ(Cli({"results", "--format", "xml", "1"}, &out, &err), 2);
  EXPECT_EQ(Cli({"--bogus", "list"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("unknown option '--bogus'"));
  EXPECT_EQ(Cli({"show", "abc"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("expected an experiment id"));
}

// Every command in the table has its own --help (and -h), printed on stdout with exit 0.
TEST(CliTest, EveryCommandHasItsOwnHelp) {
  std::string out, err;
  ASSERT_EQ(Cli({"--help"}, &out, &err), 0);
  std::vector<std::string> names;
  bool in_commands = false;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (line == "commands:") in_commands = true;
    if (line.empty()) in_commands = false;
    if (in_commands && absl::StartsWith(line, "  ")) {
      names.push_back(std::string(absl::StripLeadingAsciiWhitespace(line).substr(
          0, absl::StripLeadingAsciiWhitespace(line).find(' '))));
    }
  }
  ASSERT_GE(names.size(), 14u) << out;
  for (const std::string& name : names) {
    for (const char* help : {"--help", "-h"}) {
      out.clear();
      EXPECT_EQ(Cli({name, help}, &out, &err), 0) << name << " " << help << ": " << err;
      EXPECT_EQ(out.rfind("usage: blkbench " + name, 0), 0u) << name << ": " << out;
    }
  }
  ASSERT_EQ(Cli({"help", "results"}, &out, &err), 0);
  EXPECT_THAT(out, HasSubstr("--format table|csv|json|fio-json"));
}

TEST(CliTest, StrayArgumentsAndOtherCommandsFlagsAreErrors) {
  std::string out, err;
  EXPECT_EQ(Cli({"list", "extra-arg"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("unexpected argument 'extra-arg'"));
  EXPECT_EQ(Cli({"list", "--watch"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("'--watch' is for 'blkbench submit'"));
  EXPECT_EQ(Cli({"--samples", "list"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("'--samples' is for 'blkbench results'"));
  EXPECT_EQ(Cli({"show", "1", "2"}, &out, &err), 2);
  EXPECT_EQ(Cli({"submit"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("usage: blkbench submit FILE"));
  EXPECT_EQ(Cli({"list", "--format=yaml"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("expected table, json, csv, got 'yaml'"));
  EXPECT_EQ(Cli({"list", "--watch=1"}, &out, &err), 2);
  EXPECT_EQ(Cli({"completion", "fish"}, &out, &err), 2);
}

TEST(CliTest, GateCouldNotRunHasItsOwnExitCode) {
  std::string out, err;
  // 2 means inconclusive for the gate; not being able to run it at all is 3.
  EXPECT_EQ(Cli({"gate", "--baseline", "1"}, &out, &err), 3);
  EXPECT_EQ(Cli({"gate", "--bogus"}, &out, &err), 3);
  EXPECT_EQ(Cli({"--controller", "127.0.0.1:1", "gate", "--baseline", "1", "--candidate", "2"},
                &out, &err),
            3);
}

TEST(CliTest, VersionNamesTheRevision) {
  std::string out, err;
  ASSERT_EQ(Cli({"--version"}, &out, &err), 0);
  EXPECT_THAT(out, ::testing::MatchesRegex("blkbench [0-9]+\\.[0-9]+\\.[0-9]+ \\(.+\\)\n"));
}

// stdout of `sim --format json|fio-json|csv` is exactly the document: it parses whole.
TEST(CliTest, SimMachineFormatsAreTheWholeStdout) {
  testing::TempDir dir("cli_test");
  const std::string path = dir.File("sim.yaml");
  std::ofstream(path) << "name: s\nrepeats: 2\njob: {rw: randread, bs: 4k, ioengine: io_uring, "
                         "runtime: 10ms, time_based: 1}\nmatrix:\n  iodepth: [1, 8]\n"
                         "target: {device_class: sim:null_blk}\n";
  std::string out, err;
  ASSERT_EQ(Cli({"sim", path, "--format", "json"}, &out, &err), 0) << err;
  google::protobuf::Value rows;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &rows).ok()) << out;
  ASSERT_EQ(rows.list_value().values_size(), 4);
  const auto& f = rows.list_value().values(0).struct_value().fields();
  EXPECT_EQ(f.at("rw").string_value(), "randread");
  EXPECT_EQ(f.at("bs").number_value(), 4096);
  EXPECT_EQ(f.at("axes").struct_value().fields().at("iodepth").string_value(), "1");
  EXPECT_GT(f.at("iops").number_value(), 0);
  ASSERT_EQ(Cli({"sim", path, "--format", "fio-json", "-q"}, &out, &err), 0) << err;
  EXPECT_EQ(err, "");
  google::protobuf::Struct fio;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(out, &fio).ok()) << out;
}

// fio's ecosystem reads the export: every key path of fio 3.33's own json+ for the same
// job exists with the same JSON type (cli/testdata/fio_json_shape.py), and fio's
// fio_jsonplus_clat2csv converts and validates the bins.
TEST(FioJsonTest, KeyPathsAndTypesAreFio333s) {
  if (testing::RunCommand("fio --version >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "fio is not installed (scripts/deps.sh installs it)";
  }
  testing::TempDir dir("fio_json");
  std::string why;
  ASSERT_EQ(testing::RunCommand("fio --name=ref --filename=" + dir.File("data") +
                                    " --size=4M --rw=randread --bs=4k --ioengine=psync"
                                    " --output-format=json+ --output=" +
                                    dir.File("fio.json") + " 2>&1",
                                &why),
            0)
      << why;
  const std::string matrix = dir.File("shape.yaml");
  std::ofstream(matrix) << "name: shape\nrepeats: 2\njob: {rw: randread, bs: 4k, ioengine: psync, "
                           "size: 4M}\nmatrix:\n  iodepth: [1, 4]\n"
                           "target: {device_class: sim:null_blk}\n";
  std::string out, err;
  ASSERT_EQ(Cli({"sim", matrix, "--format", "fio-json+", "-q"}, &out, &err), 0) << err;
  std::ofstream(dir.File("ours.json")) << out;
  EXPECT_EQ(testing::RunCommand("python3 " BLKBENCH_SOURCE_DIR "/cli/testdata/fio_json_shape.py " +
                                    dir.File("fio.json") + " " + dir.File("ours.json") + " 2>&1",
                                &why),
            0)
      << why;
  // One job per cell, repeats merged: 2 cells of 2 runs each.
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &doc).ok()) << out;
  const auto& jobs = doc.fields().at("jobs").list_value();
  ASSERT_EQ(jobs.values_size(), 2);
  const auto& read = jobs.values(0).struct_value().fields().at("read").struct_value().fields();
  EXPECT_EQ(read.at("total_ios").number_value(), 2 * 1024);  // 4M / 4k, twice
  EXPECT_GT(read.at("clat_ns").struct_value().fields().at("stddev").number_value(), 0);
  const auto& options = jobs.values(0).struct_value().fields().at("job options").struct_value();
  EXPECT_EQ(options.fields().at("rw").string_value(), "randread");
  EXPECT_EQ(options.fields().at("bs").string_value(), "4k");
  EXPECT_EQ(options.fields().at("ioengine").string_value(), "psync");
  const auto& facts = jobs.values(0).struct_value().fields().at("blkbench").struct_value();
  EXPECT_EQ(facts.fields().at("kernel").string_value(), "sim:6.16");  // not the host's
  EXPECT_EQ(facts.fields().at("runs").list_value().values_size(), 2);
  EXPECT_EQ(testing::RunCommand("cd " + dir.path() +
                                    " && fio_jsonplus_clat2csv ours.json clat.csv && "
                                    "fio_jsonplus_clat2csv --validate ours.json clat.csv 2>&1",
                                &why),
            0)
      << why;
  std::ifstream csv(dir.File("clat_job0.csv"));
  std::string header, first;
  ASSERT_TRUE(std::getline(csv, header) && std::getline(csv, first)) << why;
  EXPECT_THAT(header, HasSubstr("read_clat_ns_count"));
}

// The options of real job files come back in "job options" as a fio job file spells them.
TEST(FioJsonTest, JobOptionsSpellTheJobFileOptions) {
  testing::TempDir dir("fio_json_options");
  const std::string matrix = dir.File("options.yaml");
  std::ofstream(matrix) << "name: options\njob:\n  rw: randread\n  bssplit: 4k/50:64k/50\n"
                           "  norandommap: 1\n  randrepeat: 0\n  prioclass: 3\n"
                           "  log_avg_msec: 5\n  ioengine: io_uring\n  iodepth: 4\n"
                           "  runtime: 20ms\n  time_based: 1\n"
                           "target: {device_class: sim:null_blk}\n";
  std::string out, err;
  ASSERT_EQ(Cli({"sim", matrix, "--format", "fio-json", "-q"}, &out, &err), 0) << err;
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &doc).ok()) << out;
  const auto& jobs = doc.fields().at("jobs").list_value();
  ASSERT_EQ(jobs.values_size(), 1);
  const auto& o = jobs.values(0).struct_value().fields().at("job options").struct_value().fields();
  EXPECT_EQ(o.at("bssplit").string_value(), "4k/50:64k/50");
  EXPECT_EQ(o.at("bs").string_value(), "4k");
  EXPECT_EQ(o.at("norandommap").string_value(), "1");
  EXPECT_EQ(o.at("randrepeat").string_value(), "0");
  EXPECT_EQ(o.at("prioclass").string_value(), "3");
  EXPECT_EQ(o.at("log_avg_msec").string_value(), "5");
}

// fsync=N on a real device: the executor's count of syncs is fio's sync.total_ios.
TEST(FioJsonTest, SyncTotalIosIsTheExecutorsFsyncCount) {
  v1::GetResultsResponse resp;
  v1::ResultRow* row = resp.add_rows();
  row->mutable_cell()->mutable_job()->set_rw(v1::RANDWRITE);
  row->mutable_cell()->mutable_job()->set_fsync(32);
  row->mutable_cell()->mutable_target()->set_device_class("nvme");
  v1::Run* run = row->mutable_run();
  run->set_id(1);
  run->set_state(v1::RUN_DONE);
  v1::RunResult* r = run->mutable_result();
  r->set_duration_ns(1'000'000'000);
  r->mutable_io()->set_write_ios(256);
  r->mutable_io()->set_write_bytes(256 * 4096);
  (*r->mutable_internals())["executor.fsyncs"] = 8;
  google::protobuf::Struct doc;
  const std::string json = FioJsonDocument(resp, {});
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &doc).ok()) << json;
  const auto& job = doc.fields().at("jobs").list_value().values(0).struct_value().fields();
  EXPECT_EQ(job.at("sync").struct_value().fields().at("total_ios").number_value(), 8);
  EXPECT_EQ(job.at("job options").struct_value().fields().at("fsync").string_value(), "32");
}

// `results --out DIR` with named jobs: one file per (cell, named job), named by both, so
// two cells' "reader" jobs do not become reader.json and reader-2.json.
TEST(FioJsonTest, NamedJobFilesNameTheirCell) {
  v1::GetResultsResponse resp;
  for (const char* bs : {"4k", "64k"}) {
    v1::ResultRow* row = resp.add_rows();
    v1::CellSpec* cell = row->mutable_cell();
    cell->set_index(static_cast<uint32_t>(resp.rows_size() - 1));
    cell->mutable_target()->set_device_class("nvme");
    v1::AxisValue* axis = cell->add_axes();
    axis->set_key("bs");
    axis->set_value(bs);
    for (const char* name : {"reader", "writer"}) cell->add_jobs()->set_name(name);
    v1::Run* run = row->mutable_run();
    run->set_id(static_cast<uint64_t>(resp.rows_size()));
    run->set_cell_index(cell->index());
    run->set_state(v1::RUN_DONE);
    run->mutable_result()->set_duration_ns(1'000'000'000);
    run->mutable_result()->add_jobs();
    run->mutable_result()->add_jobs();
  }
  std::vector<std::string> names;
  for (const FioJsonFile& f : FioJsonFiles(resp, {})) names.push_back(f.name);
  EXPECT_THAT(names, ::testing::ElementsAre("bs-4k-reader.json", "bs-4k-writer.json",
                                            "bs-64k-reader.json", "bs-64k-writer.json"));
}

// `sim --report` (and `blkbench report`) write one self-contained page whose plots are
// there: named in the markup, well-formed, and drawn when Chromium renders it headless.
TEST(ReportTest, PlotsArePresentAndRenderHeadless) {
  testing::TempDir dir("report");
  const std::string matrix = dir.File("report.yaml");
  std::ofstream(matrix)
      << "name: report\nrepeats: 2\njob: {rw: randread, bs: 4k, ioengine: io_uring, "
         "runtime: 3s, time_based: 1}\nmatrix:\n  iodepth: [1, 8]\n"
         "  scheduler: [none, mq-deadline]\ntarget: {device_class: sim:hdd}\n";
  const std::string html_path = dir.File("report.html");
  std::string out, err;
  ASSERT_EQ(Cli({"sim", matrix, "--report", html_path, "--format", "csv", "-q"}, &out, &err), 0)
      << err;
  std::ifstream in(html_path);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* plot : {"axis:iodepth", "axis:scheduler", "percentiles", "cdf", "timeseries"}) {
    EXPECT_THAT(html, HasSubstr(std::string("data-plot=\"") + plot + "\"")) << plot;
  }
  EXPECT_THAT(html, HasSubstr("mq-deadline"));  // the exact queue settings of the runs
  // Self-contained: nothing fetched from anywhere.
  EXPECT_THAT(html, ::testing::Not(HasSubstr("src=")));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("href=")));
  std::string why;
  EXPECT_EQ(testing::RunCommand(
                "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " +
                    html_path + " 2>&1",
                &why),
            0)
      << why;
  if (testing::RunCommand("chromium --version >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "chromium is not installed (scripts/deps.sh installs it): not rendered";
  }
  const std::string png = dir.File("report.png");
  ASSERT_EQ(testing::RunCommand("chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
                                "--user-data-dir=" +
                                    dir.File("chromium") +
                                    " --window-size=1280,2000 --screenshot=" + png + " file://" +
                                    html_path + " 2>&1",
                                &why),
            0)
      << why;
  // Ink where the plots are drawn: a page whose SVG did not render is white there.
  ASSERT_EQ(
      testing::RunCommand("python3 " BLKBENCH_SOURCE_DIR "/cli/testdata/png_ink.py " + png, &why),
      0)
      << why;
  EXPECT_GT(std::stod(why), 0.02) << "share of non-white pixels: " << why;
}

// The example with named jobs on the engine: one fio job per named job (the cell as the
// groupid), one with --group_reporting semantics, and the report's per-job section.
TEST(ReportTest, NamedJobsArePerJobInFioJsonAndTheReport) {
  testing::TempDir dir("named_jobs");
  const std::string matrix = BLKBENCH_SOURCE_DIR "/examples/reader-vs-writer.yaml";
  const std::string html_path = dir.File("report.html");
  std::string out, err;
  ASSERT_EQ(Cli({"sim", matrix, "--report", html_path, "--format", "fio-json", "-q"}, &out, &err),
            0)
      << err;
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &doc).ok()) << out;
  const auto& jobs = doc.fields().at("jobs").list_value();
  ASSERT_EQ(jobs.values_size(), 8);  // 4 cells x (reader, writer)
  for (int i = 0; i < jobs.values_size(); ++i) {
    const auto& job = jobs.values(i).struct_value().fields();
    EXPECT_EQ(job.at("jobname").string_value(), i % 2 == 0 ? "reader" : "writer");
    EXPECT_EQ(job.at("groupid").number_value(), i / 2);
    const char* busy = i % 2 == 0 ? "read" : "write";
    const char* idle = i % 2 == 0 ? "write" : "read";
    EXPECT_GT(job.at(busy).struct_value().fields().at("total_ios").number_value(), 0);
    EXPECT_EQ(job.at(idle).struct_value().fields().at("total_ios").number_value(), 0);
  }
  // The json rows carry each run's jobs; their I/O adds up to the run's.
  ASSERT_EQ(Cli({"sim", matrix, "--format", "json", "-q"}, &out, &err), 0) << err;
  google::protobuf::ListValue rows;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &rows).ok()) << out;
  ASSERT_EQ(rows.values_size(), 4);
  for (const auto& row : rows.values()) {
    const auto& f = row.struct_value().fields();
    const auto& per_job = f.at("jobs").list_value();
    ASSERT_EQ(per_job.values_size(), 2);
    const auto& reader = per_job.values(0).struct_value().fields();
    const auto& writer = per_job.values(1).struct_value().fields();
    EXPECT_EQ(reader.at("name").string_value(), "reader");
    EXPECT_EQ(writer.at("rw").string_value(), "write");
    EXPECT_EQ(reader.at("read_ios").number_value() + writer.at("read_ios").number_value(),
              f.at("read_ios").number_value());
    EXPECT_EQ(reader.at("write_ios").number_value() + writer.at("write_ios").number_value(),
              f.at("write_ios").number_value());
  }
  std::ifstream in(html_path);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(html, HasSubstr("<h2>Per job</h2>"));
  EXPECT_THAT(html, HasSubstr("data-plot=\"jobs\""));
  EXPECT_THAT(html, HasSubstr("data-plot=\"jobs-p99\""));
}

// Completion and the man page come from the command table and are valid for their tools.
TEST(CliTest, CompletionScriptsAndManPageAreValid) {
  testing::TempDir dir("cli_test");
  std::string out, err;
  ASSERT_EQ(Cli({"completion", "bash"}, &out, &err), 0);
  EXPECT_THAT(out, HasSubstr("complete -F _blkbench blkbench"));
  EXPECT_THAT(out, HasSubstr("fio-json"));
  std::ofstream(dir.File("blkbench.bash")) << out;
  std::string why;
  EXPECT_EQ(testing::RunCommand("bash -n " + dir.File("blkbench.bash") + " 2>&1", &why), 0) << why;
  // The script completes for real: the commands, then a command's flags.
  EXPECT_EQ(testing::RunCommand("bash -c 'source " + dir.File("blkbench.bash") +
                                    "; COMP_WORDS=(blkbench res); COMP_CWORD=1; _blkbench; "
                                    "echo ${COMPREPLY[*]}'",
                                &why),
            0);
  EXPECT_EQ(why, "results");
  EXPECT_EQ(testing::RunCommand("bash -c 'source " + dir.File("blkbench.bash") +
                                    "; COMP_WORDS=(blkbench results 1 --format \"\"); "
                                    "COMP_CWORD=4; _blkbench; echo ${COMPREPLY[*]}'",
                                &why),
            0);
  EXPECT_EQ(why, "table csv json fio-json fio-json+");
  ASSERT_EQ(Cli({"completion", "zsh"}, &out, &err), 0);
  EXPECT_EQ(out.rfind("#compdef blkbench", 0), 0u);
  ASSERT_EQ(Cli({"man"}, &out, &err), 0);
  EXPECT_THAT(out, HasSubstr(".SH COMMANDS"));
  std::ofstream(dir.File("blkbench.1")) << out;
  if (testing::HaveCommand("groff")) {
    EXPECT_EQ(
        testing::RunCommand("groff -man -Tutf8 -ww -z " + dir.File("blkbench.1") + " 2>&1", &why),
        0);
    EXPECT_EQ(why, "") << "groff warnings";
  }
}

}  // namespace
}  // namespace blkbench
