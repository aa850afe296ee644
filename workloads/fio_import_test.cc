// Tests for fio_import.h: the seeds' own command lines and job file, fio's job-file
// inheritance, every command-line option form, and that no option is silently dropped.
// Where fio is installed, `fio --parse-only` confirms each input is fio's own syntax.
#include "workloads/fio_import.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Seed 000 (Yu Kuai, mq-deadline/bfq batch dispatch), as pasted; the shell would have
// expanded $disk.
const std::vector<std::string> kSeed000 = {"fio",
                                           "-filename=/dev/nullb0",
                                           "-name=test",
                                           "-rw=randwrite",
                                           "-bs=4k",
                                           "-iodepth=32",
                                           "-numjobs=16",
                                           "--iodepth_batch_submit=8",
                                           "--iodepth_batch_complete=8",
                                           "-direct=1",
                                           "-ioengine=io_uring",
                                           "-group_reporting",
                                           "-time_based",
                                           "-runtime=30"};

// Seed 001 (tag preemption), the job file as posted.
constexpr char kSeed001[] = R"([global]
filename=/dev/sda
ioengine=libaio
direct=1
offset_increment=100m

[test]
rw=randwrite
bs=512k
numjobs=256
iodepth=2
)";

Matrix MustParse(const FioImport& imported) {
  absl::StatusOr<Matrix> m = ParseMatrix(imported.yaml, "imported.yaml");
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << imported.yaml;
  return m.ok() ? *m : Matrix();
}

FioImport Import(const FioJobs& jobs, const std::string& device_class = "") {
  absl::StatusOr<FioImport> imported =
      ImportFio(jobs, {.source = "test", .device_class = device_class, .kernel = ""});
  EXPECT_TRUE(imported.ok()) << imported.status();
  if (imported.ok()) {
    EXPECT_EQ(imported->problems, "") << imported->yaml;
  }
  return imported.ok() ? *imported : FioImport();
}

// Every option of every job is in the output: a key or a comment naming it.
void ExpectNothingDropped(const FioJobs& jobs, const std::string& yaml) {
  for (const FioJob& job : jobs.jobs) {
    for (const FioOption& o : job.options) {
      const std::string key = o.key == "blocksize" ? "bs" : o.key;
      EXPECT_THAT(yaml, HasSubstr(key)) << o.key << " (" << o.where << ") is missing";
    }
  }
}

// Runs `fio --parse-only` on the arguments; true when fio is absent (nothing to check).
bool FioAccepts(const std::vector<std::string>& args, std::string* why) {
  if (access("/usr/bin/fio", X_OK) != 0) return true;
  std::string cmd = "/usr/bin/fio --parse-only";
  for (const std::string& a : args) absl::StrAppend(&cmd, " '", a, "'");
  absl::StrAppend(&cmd, " >/dev/null 2>&1");
  *why = cmd;
  return system(cmd.c_str()) == 0;
}

TEST(FioImportTest, Seed000CommandLineBecomesAMatrixThatValidates) {
  absl::StatusOr<FioJobs> jobs = ParseFioCommandLine(kSeed000);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->jobs.size(), 1u);
  EXPECT_EQ(jobs->jobs[0].name, "test");
  FioImport imported = Import(*jobs);
  Matrix m = MustParse(imported);
  ASSERT_EQ(m.cells.size(), 1u);
  EXPECT_EQ(m.name, "test");
  const v1::JobSpec& job = m.cells[0].job();
  EXPECT_EQ(job.rw(), v1::RANDWRITE);
  EXPECT_EQ(job.bs(), 4096u);
  EXPECT_EQ(job.iodepth(), 32u);
  EXPECT_EQ(job.numjobs(), 16u);
  EXPECT_EQ(job.iodepth_batch_submit(), 8u);
  EXPECT_EQ(job.iodepth_batch_complete_min(), 8u);
  EXPECT_TRUE(job.direct());
  EXPECT_EQ(job.ioengine(), v1::IO_URING);
  EXPECT_TRUE(job.time_based());
  EXPECT_EQ(job.runtime_ns(), 30'000'000'000u);
  EXPECT_EQ(m.cells[0].target().device_class(), "null_blk");
  EXPECT_THAT(imported.yaml, HasSubstr("# group_reporting"));
  EXPECT_THAT(imported.yaml, HasSubstr("confirm, or give --device-class"));
  ASSERT_EQ(imported.notes.size(), 1u);
  EXPECT_THAT(imported.notes[0], HasSubstr("'null_blk' was guessed from /dev/nullb0"));
  ExpectNothingDropped(*jobs, imported.yaml);
  std::string why;
  std::vector<std::string> fio_args(kSeed000.begin() + 1, kSeed000.end());
  EXPECT_TRUE(FioAccepts(fio_args, &why)) << why;
}

TEST(FioImportTest, Seed001JobFileInheritsGlobalOptions) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(kSeed001, "seed001.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->jobs.size(), 1u);
  FioImport imported = Import(*jobs, "sata-ssd");
  Matrix m = MustParse(imported);
  ASSERT_EQ(m.cells.size(), 1u);
  const v1::JobSpec& job = m.cells[0].job();
  EXPECT_EQ(job.rw(), v1::RANDWRITE);
  EXPECT_EQ(job.bs(), 512u * 1024);
  EXPECT_EQ(job.numjobs(), 256u);
  EXPECT_EQ(job.iodepth(), 2u);
  EXPECT_EQ(job.offset_increment(), 100u << 20);
  EXPECT_TRUE(job.direct());
  EXPECT_EQ(m.cells[0].target().device_class(), "sata-ssd");
  EXPECT_THAT(imported.yaml,
              HasSubstr("device_class: sata-ssd  # filename=/dev/sda (seed001.fio:2)"));
  EXPECT_TRUE(imported.notes.empty());  // the class was given
  ExpectNothingDropped(*jobs, imported.yaml);
  std::ofstream("/tmp/blkbench_fio_import_seed001.fio") << kSeed001;
  std::string why;
  EXPECT_TRUE(FioAccepts({"/tmp/blkbench_fio_import_seed001.fio"}, &why)) << why;
}

// fio: a [global] applies to the jobs after it; a later [global] changes the defaults
// from there on; a job's own option overrides the global one, the last one written wins.
TEST(FioImportTest, JobFileSectionsFollowFiosInheritance) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(R"(; a comment
# another
[global]
bs=4k
rw=read   ; trailing comment
[first]
rw=randread
iodepth=4
iodepth=8
[global]
bs=64k
[second]
)",
                                                 "inherit.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->jobs.size(), 2u);
  FioImport first = Import(*jobs, "loop");
  Matrix m = MustParse(first);
  ASSERT_EQ(m.cells.size(), 1u);
  // fio runs both at once: one cell, two named jobs, each with the globals it had.
  ASSERT_EQ(m.cells[0].jobs_size(), 2);
  const v1::JobSpec& a = m.cells[0].jobs(0).job();
  EXPECT_EQ(m.cells[0].jobs(0).name(), "first");
  EXPECT_EQ(a.bs(), 4096u);
  EXPECT_EQ(a.rw(), v1::RANDREAD);
  EXPECT_EQ(a.iodepth(), 8u);
  const v1::JobSpec& b = m.cells[0].jobs(1).job();
  EXPECT_EQ(m.cells[0].jobs(1).name(), "second");
  EXPECT_EQ(b.bs(), 65536u);
  EXPECT_EQ(b.rw(), v1::READ);
  EXPECT_EQ(b.iodepth(), 1u);
  EXPECT_TRUE(first.notes.empty());
  FioJobs second_only;
  second_only.jobs = {jobs->jobs[1]};
  Matrix m2 = MustParse(Import(second_only, "loop"));
  ASSERT_EQ(m2.cells.size(), 1u);
  EXPECT_EQ(m2.cells[0].job().bs(), 65536u);
  EXPECT_EQ(m2.cells[0].job().rw(), v1::READ);
}

TEST(FioImportTest, CommandLineOptionForms) {
  struct Case {
    std::vector<std::string> argv;
    uint64_t bs;
    bool time_based;
  };
  const Case kCases[] = {
      {{"fio", "--name=a", "--bs=8k", "--time_based", "--runtime=1"}, 8192, true},
      {{"--name=a", "-bs=8k"}, 8192, false},
      {{"--name", "a", "--bs", "8k", "--time_based", "--runtime", "2s"}, 8192, true},
      {{"/usr/bin/fio", "-name=a", "-blocksize=16k"}, 16384, false},
      {{"--bs=4k"}, 4096, false},  // no --name: one job called "job"
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(absl::StrJoin(c.argv, " "));
    absl::StatusOr<FioJobs> jobs = ParseFioCommandLine(c.argv);
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    ASSERT_EQ(jobs->jobs.size(), 1u);
    Matrix m = MustParse(Import(*jobs, "loop"));
    ASSERT_EQ(m.cells.size(), 1u);
    EXPECT_EQ(m.cells[0].job().bs(), c.bs);
    EXPECT_EQ(m.cells[0].job().time_based(), c.time_based);
  }
}

// Options before the first --name are global; each --name starts a job.
TEST(FioImportTest, CommandLineWithSeveralNames) {
  absl::StatusOr<FioJobs> jobs =
      ParseFioCommandLine({"--rw=randread", "--bs=4k", "--output-format=json", "--name=reader",
                           "--iodepth=16", "--name=writer", "--rw=write"});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->jobs.size(), 2u);
  EXPECT_EQ(jobs->jobs[0].name, "reader");
  EXPECT_EQ(jobs->jobs[1].name, "writer");
  ASSERT_EQ(jobs->program_options.size(), 1u);
  EXPECT_EQ(jobs->program_options[0].key, "output-format");
  FioImport imported = Import(*jobs, "loop");
  Matrix m = MustParse(imported);
  ASSERT_EQ(m.cells.size(), 1u);
  ASSERT_EQ(m.cells[0].jobs_size(), 2);
  EXPECT_EQ(m.cells[0].jobs(0).job().rw(), v1::RANDREAD);
  EXPECT_EQ(m.cells[0].jobs(0).job().iodepth(), 16u);
  EXPECT_EQ(m.cells[0].jobs(1).job().rw(), v1::WRITE);
  EXPECT_EQ(m.cells[0].jobs(1).job().iodepth(), 1u);
  // What both set alike is the global section.
  EXPECT_THAT(imported.yaml, HasSubstr("job:\n  bs: 4k\njobs:\n  reader:\n    rw: randread\n"));
  EXPECT_THAT(imported.yaml, HasSubstr("# fio's own option --output-format=json"));
}

// Jobs after a stonewall wait in fio: only the ones that run at once are imported, the
// rest shown. fio's cgroup= and cgroup_weight= per job become a layout of named groups.
TEST(FioImportTest, ConcurrentJobsWithCgroupsAndAStonewall) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(R"([global]
filename=/dev/nvme0n1
direct=1
ioengine=io_uring
time_based
runtime=10
ioscheduler=bfq
[light]
rw=randread
cgroup=light
cgroup_weight=100
[heavy]
rw=randread
iodepth=16
numjobs=2
cgroup=heavy
cgroup_weight=1000
[after]
stonewall
rw=write
)",
                                                 "fair.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  FioImport imported = Import(*jobs, "nvme");
  Matrix m = MustParse(imported);
  ASSERT_EQ(m.cells.size(), 1u) << imported.yaml;
  const v1::CellSpec& cell = m.cells[0];
  ASSERT_EQ(cell.jobs_size(), 2) << imported.yaml;
  EXPECT_EQ(cell.queue().scheduler(), "bfq");
  EXPECT_EQ(cell.cgroup(), "light:100*1,heavy:1000*2");
  EXPECT_EQ(cell.jobs(0).group(), "light");
  EXPECT_EQ(cell.jobs(1).group(), "heavy");
  EXPECT_EQ(cell.jobs(1).job().numjobs(), 2u);
  EXPECT_EQ(cell.jobs(1).job().iodepth(), 16u);
  EXPECT_TRUE(cell.jobs(0).job().direct());
  EXPECT_THAT(imported.yaml, HasSubstr("# fio job 'after' waits for the jobs before it"));
  EXPECT_THAT(imported.notes, ::testing::Contains(HasSubstr("'after' was not imported")));
  ExpectNothingDropped(*jobs, imported.yaml);
}

// t/io_uring-style job files drive several devices from one job: on a simulated target
// they become engine.devices, with fio's file_service_type carried over.
TEST(FioImportTest, SeveralFilesBecomeSeveralSimulatedDevices) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(R"([peak]
filename=/dev/nvme0n1:/dev/nvme1n1:/dev/nvme2n1
file_service_type=roundrobin:32
rw=randread
bs=512
ioengine=io_uring
iodepth=128
)",
                                                 "peak.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  FioImport sim = Import(*jobs, "sim:optane-p5800x");
  Matrix m = MustParse(sim);
  ASSERT_EQ(m.cells.size(), 1u);
  EXPECT_EQ(m.cells[0].device_params().at("engine.devices"), "3");
  EXPECT_EQ(m.cells[0].job().file_service_type(), "roundrobin:32");
  EXPECT_THAT(sim.yaml, HasSubstr("engine: {devices: 3}  # filename with 3 files (peak.fio:2)"));
  // A real target, or a simulated one with a per-LUN budget, runs on the first file.
  for (const std::string cls : {"nvme", "sim:hdd"}) {
    FioImport one = Import(*jobs, cls);
    EXPECT_FALSE(MustParse(one).cells[0].device_params().contains("engine.devices")) << cls;
    EXPECT_THAT(one.yaml, HasSubstr("several files per job")) << cls;
  }
}

// What blkbench cannot run is a comment with the reason, and the rest still imports.
TEST(FioImportTest, UnsupportedOptionsAreCommentsWithTheReason) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(R"([job]
filename=/dev/sdb:/dev/sdc
rw=randread:8
bs=4k
zonemode=zbd
directory=/mnt
stonewall
cgroup=bench
cgroup_weight=500
ioscheduler=bfq
)",
                                                 "unsupported.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  FioImport imported = Import(*jobs);
  Matrix m = MustParse(imported);
  ASSERT_EQ(m.cells.size(), 1u);
  const std::string& y = imported.yaml;
  EXPECT_THAT(y, HasSubstr("# rw=randread:8  (unsupported.fio:3): not carried over: blkbench's "
                           "'rw' expects one of read"));
  EXPECT_THAT(y, HasSubstr("# zonemode=zbd  (unsupported.fio:5): not carried over: zoned block "
                           "devices are not supported"));
  EXPECT_THAT(y, HasSubstr("# directory=/mnt  (unsupported.fio:6): not carried over"));
  EXPECT_THAT(y, HasSubstr("# stonewall  (unsupported.fio:7): not carried over"));
  EXPECT_THAT(y, HasSubstr("several files per job"));
  EXPECT_EQ(m.cells[0].target().device_class(), "sd");  // from the first file
  EXPECT_EQ(m.cells[0].cgroup(), "one:500");
  EXPECT_EQ(m.cells[0].queue().scheduler(), "bfq");
  EXPECT_EQ(m.cells[0].job().bs(), 4096u);
  ExpectNothingDropped(*jobs, y);
}

// fio accepts it, blkbench does not carry the runtime over: the matrix is written
// anyway, with the parser's verdict for the user to fix.
TEST(FioImportTest, AMatrixThatDoesNotValidateSaysWhy) {
  absl::StatusOr<FioJobs> jobs = ParseFioCommandLine({"--name=x", "--time_based", "--runtime=1x"});
  ASSERT_TRUE(jobs.ok());
  auto imported = ImportFio(*jobs, {.source = "cmd", .device_class = "loop", .kernel = ""});
  ASSERT_TRUE(imported.ok());
  EXPECT_THAT(imported->yaml, HasSubstr("# runtime=1x"));
  EXPECT_THAT(imported->problems, HasSubstr("time_based=1 needs a runtime > 0"));
  // Lines and columns are the YAML's, so the label is not the fio file's name.
  EXPECT_THAT(imported->problems, HasSubstr("the matrix above:"));
}

TEST(FioImportTest, BadInputIsAPositionedError) {
  auto before = ParseFioJobFile("bs=4k\n[job]\n", "x.fio");
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(before.status().message(),
            "x.fio:1: option 'bs=4k' before the first section ([global] or [job])");
  auto header = ParseFioJobFile("[job\n", "x.fio");
  ASSERT_FALSE(header.ok());
  EXPECT_THAT(header.status().message(), HasSubstr("x.fio:1: expected a section header"));
  auto positional = ParseFioCommandLine({"fio", "job.fio"});
  ASSERT_FALSE(positional.ok());
  EXPECT_THAT(positional.status().message(), HasSubstr("blkbench import FILE"));
  auto only_global = ParseFioJobFile("[global]\nbs=4k\n", "g.fio");
  ASSERT_TRUE(only_global.ok());
  auto none = ImportFio(*only_global, {.source = "g.fio", .device_class = "", .kernel = ""});
  EXPECT_FALSE(none.ok());
}

// Values that YAML would read as something else are quoted: a job named "null" stays
// that name, fio's null engine stays nop, a control character is escaped; fio's alias
// io_limit is io_size.
TEST(FioImportTest, ReservedWordsAreQuotedAndIoLimitIsIoSize) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(
      "[null]\nfilename=/dev/nullb0\nrw=read\nio_limit=1g\ndescription=a\tb\nioengine=null\n",
      "null.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  FioImport imported = Import(*jobs, "null");
  EXPECT_THAT(imported.yaml, HasSubstr("name: \"null\""));
  EXPECT_THAT(imported.yaml, HasSubstr("device_class: \"null\""));
  EXPECT_THAT(imported.yaml, HasSubstr("ioengine: \"null\""));
  Matrix m = MustParse(imported);
  ASSERT_EQ(m.cells.size(), 1u);
  EXPECT_EQ(m.name, "null");
  EXPECT_EQ(m.cells[0].target().device_class(), "null");
  EXPECT_EQ(m.cells[0].job().io_size(), 1u << 30);
  EXPECT_EQ(m.cells[0].job().ioengine(), v1::NOP);
}

// A file outside /dev is class `file`, whatever its name says.
TEST(FioImportTest, RegularFilesAreClassFileNotTheirName) {
  for (const char* name : {"fio-rand-read", "/tmp/testfile", "ssd.test.file"}) {
    absl::StatusOr<FioJobs> jobs =
        ParseFioJobFile(absl::StrCat("[j]\nfilename=", name, "\nrw=read\nsize=1m\n"), "f.fio");
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    FioImport imported = Import(*jobs);
    Matrix m = MustParse(imported);
    ASSERT_EQ(m.cells.size(), 1u) << name;
    EXPECT_EQ(m.cells[0].target().device_class(), "file") << name;
  }
}

TEST(FioImportTest, LooksLikeFioJobFile) {
  EXPECT_TRUE(LooksLikeFioJobFile(kSeed001));
  EXPECT_TRUE(LooksLikeFioJobFile("; comment\n\n[job1]\nrw=read\n"));
  EXPECT_FALSE(LooksLikeFioJobFile("name: x\njob: {rw: read}\n"));
  EXPECT_FALSE(LooksLikeFioJobFile("[1, 2]\n"));  // a YAML flow list
}

TEST(FioImportTest, AJobFileGivenAsAMatrixSaysToImportIt) {
  absl::StatusOr<Matrix> m = ParseMatrix(kSeed001, "seed001.fio");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "seed001.fio:1:1: this looks like a fio job file, not a matrix; convert it with "
            "'blkbench import seed001.fio'");
}

}  // namespace
}  // namespace blkbench::workloads
