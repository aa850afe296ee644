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
#include "workloads/fio_import_jobs.h"
#include "workloads/matrix.h"
#include "workloads/yaml_scalar.h"

namespace blkbench::workloads {
namespace {

using ::testing::ElementsAre;
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
  EXPECT_THAT(imported.yaml,
              HasSubstr("# fio job 'after' (fair.fio:18) runs after the jobs before it "
                        "(stonewall) and was not imported: its phase has another number of "
                        "jobs than the first"));
  // A job fio runs and the matrix does not: the workload changes.
  ASSERT_TRUE(imported.ChangesWorkload());
  EXPECT_THAT(imported.yaml, ::testing::StartsWith("# LOSSY IMPORT: this matrix does not run "
                                                   "what test runs. Lost:\n#   fair.fio:18: "
                                                   "job 'after': it runs after"));
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
  EXPECT_THAT(y, HasSubstr("# stonewall  (unsupported.fio:7): fio's phases"));
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

// A corpus in the shape of fio's own examples/*.fio (not installed by Debian's fio, so
// written here): what each would lose, and whether that changes the workload.
struct CorpusCase {
  const char* name;
  const char* text;
  bool changes_workload;
  const char* lost;  // a FioDrop as "where: what", or "" when nothing changes
};
const CorpusCase kCorpus[] = {
    {"net.fio", "[global]\nioengine=net\nhostname=localhost\nport=8888\n[sender]\nrw=write\n", true,
     "net.fio:2: ioengine=net"},
    // fio's null engine is blkbench's nop: nothing lost.
    {"null.fio", "[null]\nioengine=null\nsize=100g\nrw=randread\n", false, ""},
    {"uring-cmd.fio", "[cmd]\nfilename=/dev/ng0n1\nioengine=io_uring_cmd\ncmd_type=nvme\n", true,
     "uring-cmd.fio:3: ioengine=io_uring_cmd"},
    {"zoned.fio",
     "[z]\nfilename=/dev/nvme0n1\nrw=randread\nrandom_distribution=zoned:60/10:30/20:8/30:2/40\n",
     false, ""},
    // fio's examples/cmdprio-bssplit.fio: a split per direction runs as fio's.
    {"split.fio", "[s]\nfilename=/dev/sdb\nrw=randrw\nbssplit=64k/40:1024k/60,1024k/100\n", false,
     ""},
    {"exitall.fio", "[e]\nfilename=/dev/sdb\nrw=read\nexitall\n", true, "exitall.fio:4: exitall"},
    {"logs.fio",
     "[l]\nfilename=/dev/sdb\nrw=read\nwrite_bw_log=l\nlog_avg_msec=100\ndisable_slat=1\n"
     "percentile_list=99:99.9\n",
     false, ""},
    {"faithful.fio",
     "[global]\nioengine=libaio\ndirect=1\niodepth=16\n[f]\nfilename=/dev/nvme0n1\nrw=randrw\n"
     "rwmixread=70\nbssplit=4k/80:64k/20\nrandom_distribution=zipf:1.2\nnorandommap\n",
     false, ""},
    {"surface.fio",
     "[global]\nfilename=/dev/sdc\n[write]\nrw=write\n[verify]\nstonewall\nrw=read\n"
     "verify=crc32c\n",
     true, "surface.fio:5: job 'verify'"},
    // fio's zoned forms run as fio defines them (regions may add up to less than 100).
    // Per-direction zone lists are not here: fio 3.33's own parser refuses them.
    {"zoned-abs.fio",
     "[z]\nfilename=/dev/nvme0n1\nrw=randread\nrandom_distribution=zoned_abs:60/1g:40/4g\n", false,
     ""},
    {"zoned-short.fio",
     "[z]\nfilename=/dev/nvme0n1\nrw=randread\nrandom_distribution=zoned:60/10:40/20\n", false, ""},
    // bs and bsrange per direction (R,W; an empty part is fio's default).
    {"bs-dir.fio", "[b]\nfilename=/dev/sdb\nrw=randrw\nbs=4k,64k\n", false, ""},
    {"bsrange-dir.fio", "[b]\nfilename=/dev/sdb\nrw=randrw\nbsrange=,8k-16k\n", false, ""},
    // fio's examples/jesd219.fio, whole: the JEDEC SSD endurance workload.
    {"jesd219.fio",
     "[global]\nioengine=libaio\ndirect=1\nrw=randrw\nnorandommap\nrandrepeat=0\n"
     "rwmixread=40\nrwmixwrite=60\niodepth=256\nnumjobs=4\n"
     "bssplit=512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3\n"
     "blockalign=4k\nrandom_distribution=zoned:50/5:30/15:20/80\nfilename=/dev/nvme0n1\n"
     "group_reporting=1\n[JESD219]\n",
     false, ""},
    // fio's examples/rand-zones.fio: the last zone's blank region is the rest (80 %).
    {"rand-zones.fio",
     "[zones]\nfilename=/dev/sdb\nrw=randread\nnorandommap\n"
     "random_distribution=zoned:50/5:30/15:20/\n",
     false, ""},
};

TEST(FioImportTest, CorpusLossesAreListedWithTheirPlaceAndChangeTheWorkload) {
  for (const CorpusCase& c : kCorpus) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<FioJobs> jobs = ParseFioJobFile(c.text, c.name);
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    // The lossy matrix still validates: --lossy writes something that runs.
    FioImport imported = Import(*jobs, "nvme");
    MustParse(imported);
    EXPECT_EQ(imported.ChangesWorkload(), c.changes_workload) << imported.yaml;
    std::vector<std::string> lost, kept;
    for (const FioDrop& d : imported.dropped) {
      EXPECT_THAT(d.where, ::testing::StartsWith(std::string(c.name) + ":")) << d.what;
      (d.changes_workload ? lost : kept).push_back(absl::StrCat(d.where, ": ", d.what));
    }
    if (c.changes_workload) {
      const std::string want = c.lost;
      EXPECT_THAT(lost, ::testing::Contains(want)) << imported.yaml;
      EXPECT_THAT(imported.yaml, ::testing::StartsWith("# LOSSY IMPORT: this matrix does not run"));
      EXPECT_THAT(imported.yaml, HasSubstr("#   " + want + ": "));
    } else {
      EXPECT_THAT(lost, ::testing::IsEmpty());
      EXPECT_THAT(imported.yaml, Not(HasSubstr("LOSSY")));
    }
    ExpectNothingDropped(*jobs, imported.yaml);
    const std::string path = absl::StrCat("/tmp/blkbench_fio_import_", getpid(), "_", c.name);
    std::ofstream(path) << c.text;
    std::string why;
    EXPECT_TRUE(FioAccepts({path}, &why)) << why;
    unlink(path.c_str());
  }
}

// fio's reporting options are dropped but reported; the I/O is the same without them.
TEST(FioImportTest, ReportOnlyOptionsAreReportedNotLost) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(kCorpus[6].text, "logs.fio");
  ASSERT_TRUE(jobs.ok());
  FioImport imported = Import(*jobs, "sd");
  std::vector<std::string> kept;
  for (const FioDrop& d : imported.dropped) kept.push_back(absl::StrCat(d.where, ": ", d.what));
  EXPECT_THAT(kept,
              ElementsAre("logs.fio:6: disable_slat=1", "logs.fio:7: percentile_list=99:99.9"));
  EXPECT_EQ(MustParse(imported).cells[0].job().log_avg_msec(), 100u);
  EXPECT_EQ(MustParse(imported).cells[0].job().write_bw_log(), "l");  // carried over
}

// Phases that differ in one option (fio's examples/ssd-test.fio runs read, randread,
// write and randwrite one after another) become that option's axis, in fio's order.
TEST(FioImportTest, StonewallPhasesThatDifferInOneOptionBecomeAnAxis) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(R"([global]
bs=4k
ioengine=libaio
iodepth=4
size=1g
direct=1
runtime=60
directory=/mnt/ssd
filename=ssd.test.file

[seq-read]
rw=read
stonewall

[rand-read]
readwrite=randread
stonewall

[seq-write]
rw=write
stonewall

[rand-write]
rw=randwrite
stonewall
)",
                                                 "bench/ssd-test.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  absl::StatusOr<FioImport> ok =
      ImportFio(*jobs, {.source = "bench/ssd-test.fio", .device_class = "", .kernel = ""});
  ASSERT_TRUE(ok.ok());
  const FioImport& imported = *ok;
  EXPECT_FALSE(imported.ChangesWorkload()) << imported.yaml;
  Matrix m = MustParse(imported);
  EXPECT_EQ(m.name, "ssd-test");
  EXPECT_THAT(m.axes, ElementsAre("rw"));
  ASSERT_EQ(m.cells.size(), 4u) << imported.yaml;
  const v1::RwMode want[] = {v1::READ, v1::RANDREAD, v1::WRITE, v1::RANDWRITE};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(m.cells[i].job().rw(), want[i]) << i;
    EXPECT_EQ(m.cells[i].job().iodepth(), 4u);
    EXPECT_EQ(m.cells[i].job().ioengine(), v1::LIBAIO);
    EXPECT_EQ(m.cells[i].target().device_class(), "file");  // a regular file: no guess
  }
  EXPECT_THAT(imported.yaml, HasSubstr("    - randread  # [rand-read] (bench/ssd-test.fio:15)\n"));
  EXPECT_THAT(imported.yaml, Not(HasSubstr("not imported")));
  EXPECT_THAT(imported.notes, ::testing::Contains(HasSubstr("phases became the axis rw")));
  EXPECT_THAT(imported.notes, Not(::testing::Contains(HasSubstr("guessed"))));
}

// Phases of two jobs each, alike but for the block size: the axis varies both.
TEST(FioImportTest, PhasesOfSeveralJobsBecomeAnAxisToo) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(R"([global]
filename=/dev/nvme0n1
rw=randread
[r1]
bs=4k
[r2]
bs=4k
iodepth=8
[r1-big]
stonewall
bs=128k
[r2-big]
bs=128k
iodepth=8
)",
                                                 "two.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  FioImport imported = Import(*jobs, "nvme");
  EXPECT_FALSE(imported.ChangesWorkload()) << imported.yaml;
  Matrix m = MustParse(imported);
  ASSERT_EQ(m.cells.size(), 2u) << imported.yaml;
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(m.cells[i].jobs_size(), 2) << imported.yaml;
    EXPECT_EQ(m.cells[i].jobs(1).job().iodepth(), 8u);
    EXPECT_EQ(m.cells[i].jobs(0).job().bs(), i == 0 ? 4096u : 131072u);
    EXPECT_EQ(m.cells[i].jobs(1).job().bs(), i == 0 ? 4096u : 131072u);
  }
}

// Phases that differ in two options, or repeat the first, are dropped and lost.
TEST(FioImportTest, PhasesThatAreNoAxisAreLost) {
  const std::pair<const char*, const char*> kCases[] = {
      {"[a]\nrw=read\n[b]\nstonewall\nrw=write\nbs=64k\n", "differ in bs, rw"},
      {"[a]\nrw=read\n[b]\nstonewall\nrw=read\n", "repeats the first"},
      {"[a]\nrw=read\n[b]\nwait_for=a\nrw=write\nthinktime_iotime=1s\n", "does not carry"},
  };
  for (const auto& [text, why] : kCases) {
    SCOPED_TRACE(text);
    absl::StatusOr<FioJobs> jobs = ParseFioJobFile(text, "p.fio");
    ASSERT_TRUE(jobs.ok());
    FioImport imported = Import(*jobs, "nvme");
    EXPECT_TRUE(imported.ChangesWorkload());
    EXPECT_EQ(MustParse(imported).cells.size(), 1u);
    bool found = false;
    for (const FioDrop& d : imported.dropped) {
      found |= d.what == "job 'b'" && d.where == "p.fio:3" && d.why.find(why) != std::string::npos;
    }
    EXPECT_TRUE(found) << imported.yaml;
  }
}

// fio's wait_for=X holds back only its job, until X has ended; the jobs after it start at
// once (backend.c run_threads: `continue`, where stonewall `break`s). It is a phase
// boundary, and the phases an axis, only when X is all that runs before the job and the
// job after it waits too; otherwise the cells would run what fio does not, a loss.
TEST(FioImportTest, WaitForIsAPhaseBoundaryOnlyWhereFioWaitsForEverything) {
  const char kExact[] = "[a]\nrw=read\n[b]\nwait_for=a\nrw=write\n[c]\nwait_for=b\nrw=randwrite\n";
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(kExact, "w.fio");
  ASSERT_TRUE(jobs.ok());
  FioImport exact = Import(*jobs, "nvme");
  EXPECT_FALSE(exact.ChangesWorkload()) << exact.yaml;
  EXPECT_EQ(MustParse(exact).cells.size(), 3u) << exact.yaml;

  const std::pair<const char*, const char*> kInexact[] = {
      // b runs beside a; c waits for a alone.
      {"[a]\nrw=read\n[b]\nrw=read\nbs=8k\n[c]\nwait_for=a\nrw=write\n[d]\nrw=write\nbs=8k\n",
       "fio starts 'c' when 'a' alone has ended, while 'a', 'b' may still run"},
      // d does not wait: fio starts it at once, beside a.
      {"[a]\nrw=read\n[c]\nwait_for=a\nrw=write\n[d]\nrw=write\nbs=8k\n",
       "fio starts 'd' at once, beside 'a', not after it"},
      // No job of the phase before has that name.
      {"[a]\nrw=read\n[c]\nwait_for=nobody\nrw=write\n",
       "no job of the phase before it has that name"},
  };
  for (const auto& [text, why] : kInexact) {
    SCOPED_TRACE(text);
    absl::StatusOr<FioJobs> parsed = ParseFioJobFile(text, "w.fio");
    ASSERT_TRUE(parsed.ok());
    FioImport imported = Import(*parsed, "nvme");
    EXPECT_TRUE(imported.ChangesWorkload()) << imported.yaml;
    bool found = false;
    for (const FioDrop& d : imported.dropped) {
      found |= d.what.starts_with("wait_for=") && d.changes_workload &&
               d.why.find(why) != std::string::npos;
    }
    EXPECT_TRUE(found) << imported.yaml;
  }
}

// Every string reads back as itself through the project's matrix reader, as a name, a
// description, a device class and a named job's name; reserved words are quoted.
TEST(FioImportTest, YamlScalarRoundTripsThroughTheMatrixReader) {
  const std::string kWords[] = {
      "null",  "Null", "NULL", "~",  "true",  "False", "yes",         "No",
      "on",    "OFF",  "y",    "n",  "123",   "0x1f",  "0o17",        "1e3",
      "6.10",  "-1",   "+1",   ".5", "1_000", "1:30",  "2024-01-01",  ".inf",
      "-.Inf", ".NaN", "<<",   "=",  "a: b",  "a #b",  "a#b",         "#x",
      "-x",    "- x",  "?x",   ":x", "x:",    ",x",    "[x",          "]x",
      "{x",    "}x",   "&x",   "*x", "!x",    "|x",    ">x",          "'x",
      "\"x",   "%x",   "@x",   "`x", "x'y",   "x\"y",  "back\\slash", "sim:null_blk",
      "nvme",  "a:b",  "ünï",
  };
  for (const std::string& w : kWords) {
    SCOPED_TRACE(w);
    const std::string q = YamlScalar(w);
    const std::string yaml =
        absl::StrCat("name: ", q, "\ndescription: ", q, "\njob: {rw: read}\njobs:\n  ", q,
                     ": {bs: 8k}\ntarget:\n  device_class: ", q, "\n");
    absl::StatusOr<Matrix> m = ParseMatrix(yaml, "w.yaml");
    ASSERT_TRUE(m.ok()) << m.status() << "\n" << yaml;
    EXPECT_EQ(m->name, w);
    EXPECT_EQ(m->description, w);
    ASSERT_EQ(m->cells.size(), 1u);
    EXPECT_EQ(m->cells[0].jobs(0).name(), w);
    EXPECT_EQ(m->cells[0].target().device_class(), w);
  }
  EXPECT_EQ(YamlScalar("yes"), "\"yes\"");
  EXPECT_EQ(YamlScalar("6.10"), "\"6.10\"");
  EXPECT_EQ(YamlScalar("a: b"), "\"a: b\"");
  EXPECT_EQ(YamlScalar("a #b"), "\"a #b\"");
  EXPECT_EQ(YamlScalar("tab\there"), "\"tab\\there\"");
  EXPECT_EQ(YamlScalar("nvme"), "nvme");
  EXPECT_EQ(YamlScalar("a:b"), "a:b");
  EXPECT_EQ(YamlScalar("32", ScalarKind::kOptionValue), "32");
  EXPECT_EQ(YamlScalar("32"), "\"32\"");
  EXPECT_EQ(YamlScalar("on", ScalarKind::kOptionValue), "\"on\"");
}

// Import -> the project's reader -> the same values: job names and a description that
// YAML would read as something else.
TEST(FioImportTest, ImportedNamesRoundTrip) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(
      "[global]\nfilename=/dev/nvme0n1\ndescription=a: b\n[yes]\nrw=read\n[123]\nrw=write\n"
      "[on]\nrw=randread\n",
      "names.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  FioImport imported = Import(*jobs, "6.10");
  Matrix m = MustParse(imported);
  EXPECT_EQ(m.name, "yes");
  EXPECT_EQ(m.description, "a: b");  // fio's own comment rule would take " #..." away
  ASSERT_EQ(m.cells.size(), 1u);
  ASSERT_EQ(m.cells[0].jobs_size(), 3);
  EXPECT_EQ(m.cells[0].jobs(0).name(), "yes");
  EXPECT_EQ(m.cells[0].jobs(1).name(), "123");
  EXPECT_EQ(m.cells[0].jobs(2).name(), "on");
  EXPECT_EQ(m.cells[0].target().device_class(), "6.10");
}

// Classes are guessed only from block devices' kernel names; a regular file is `file`;
// anything else is the placeholder, which validate refuses, named in the matrix written.
TEST(FioImportTest, ClassesAreGuessedFromBlockDeviceNamesOnly) {
  const std::pair<const char*, ClassGuess> kCases[] = {
      {"/dev/nvme0n1", {"nvme", true}},
      {"/dev/nvme1n2p3", {"nvme", true}},
      {"/dev/nvme0", {"", false}},
      {"/dev/sda", {"sd", true}},
      {"/dev/sdab2", {"sd", true}},
      {"/dev/vdb", {"vd", true}},
      {"/dev/xvda", {"xvd", true}},
      {"/dev/nullb0", {"null_blk", true}},
      {"/dev/loop3", {"loop", true}},
      {"/dev/mmcblk0p1", {"mmc", true}},
      {"/dev/dm-2", {"dm", true}},
      {"/dev/mapper/vg-lv", {"dm", true}},
      {"/dev/md127", {"md", true}},
      {"/dev/null", {"", false}},
      {"/dev/zero", {"", false}},
      {"/dev/sg0", {"", false}},
      {"/dev/disk/by-id/nvme-x", {"", false}},
      {"/dev/snd", {"", false}},
      {"fio-rand-read", {"file", false}},
      {"/tmp/testfile", {"file", false}},
  };
  for (const auto& [path, want] : kCases) {
    const ClassGuess got = GuessClass(path);
    EXPECT_EQ(got.device_class, want.device_class) << path;
    EXPECT_EQ(got.guessed, want.guessed) << path;
  }
  absl::StatusOr<FioJobs> sd = ParseFioJobFile("[j]\nfilename=/dev/sdc\n", "g.fio");
  ASSERT_TRUE(sd.ok());
  EXPECT_THAT(Import(*sd).yaml,
              HasSubstr("device_class: sd  # guessed from filename=/dev/sdc (g.fio:2): confirm"));

  absl::StatusOr<FioJobs> dev_null = ParseFioJobFile("[j]\nfilename=/dev/null\n", "n.fio");
  ASSERT_TRUE(dev_null.ok());
  auto imported = ImportFio(
      *dev_null, {.source = "n.fio", .device_class = "", .kernel = "", .output_name = "n.yaml"});
  ASSERT_TRUE(imported.ok());
  EXPECT_THAT(imported->yaml, HasSubstr("device_class: CHANGE-ME"));
  // Placed in the matrix written, named as its file, not as the .fio.
  EXPECT_THAT(imported->problems, ::testing::StartsWith("n.yaml:"));
  EXPECT_THAT(imported->problems, HasSubstr(":17: key 'device_class': expected a device class"));
  EXPECT_THAT(imported->problems, HasSubstr("not a placeholder"));
  EXPECT_THAT(imported->notes, ::testing::Contains(HasSubstr("not a block device name")));
}

// fio's aliases (fio --cmdhelp: "alias:") of the options blkbench runs.
TEST(FioImportTest, FioAliasesAreTheirOptions) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(R"([a]
filename=/dev/nvme0n1
readwrite=randread
blocksize_range=4k-16k
io_limit=1g
fileoffset=1m
timeout=7
time_based
iodepth=16
iodepth_batch=4
iodepth_batch_complete=2
)",
                                                 "alias.fio");
  ASSERT_TRUE(jobs.ok());
  FioImport imported = Import(*jobs, "nvme");
  EXPECT_TRUE(imported.dropped.empty()) << imported.yaml;
  const v1::JobSpec job = MustParse(imported).cells[0].job();
  EXPECT_EQ(job.rw(), v1::RANDREAD);
  EXPECT_EQ(job.bs(), 4096u);
  EXPECT_EQ(job.bs_max(), 16384u);
  EXPECT_EQ(job.io_size(), 1u << 30);
  EXPECT_EQ(job.offset(), 1u << 20);
  EXPECT_EQ(job.runtime_ns(), 7'000'000'000u);
  EXPECT_EQ(job.iodepth_batch_submit(), 4u);
  EXPECT_EQ(job.iodepth_batch_complete_min(), 2u);
  EXPECT_THAT(imported.yaml, HasSubstr("runtime: 7  # fio timeout (alias.fio:7)"));
  // On the command line too: fio takes --timeout as the runtime of every job.
  absl::StatusOr<FioJobs> cmd = ParseFioCommandLine({"--timeout=3", "--name=x", "--time_based"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(MustParse(Import(*cmd, "nvme")).cells[0].job().runtime_ns(), 3'000'000'000u);
}

// fio's buffered is the inverse of direct; a colon escaped with '\' is part of a name.
TEST(FioImportTest, BufferedIsTheInverseOfDirectAndEscapedColonsAreOneFile) {
  for (const auto& [option, direct] :
       {std::pair{"buffered=0", true}, {"buffered=1", false}, {"buffered", false}}) {
    absl::StatusOr<FioJobs> jobs =
        ParseFioJobFile(absl::StrCat("[b]\nfilename=/dev/sdb\n", option, "\n"), "b.fio");
    ASSERT_TRUE(jobs.ok());
    FioImport imported = Import(*jobs, "sd");
    EXPECT_TRUE(imported.dropped.empty()) << imported.yaml;
    EXPECT_EQ(MustParse(imported).cells[0].job().direct(), direct) << option;
    EXPECT_THAT(imported.yaml, HasSubstr("  # fio buffered (b.fio:3)"));
  }
  absl::StatusOr<FioJobs> bsg = ParseFioJobFile("[b]\nfilename=/dev/bsg/0\\:0\\:0\\:0\n", "c.fio");
  ASSERT_TRUE(bsg.ok());
  auto imported = ImportFio(*bsg, {.source = "c.fio", .device_class = "", .kernel = ""});
  ASSERT_TRUE(imported.ok());
  EXPECT_TRUE(imported->dropped.empty()) << imported->yaml;  // one file, not four
  EXPECT_THAT(imported->yaml, HasSubstr("filename=/dev/bsg/0:0:0:0 (c.fio:2): not a block device"));
}

// Jobs that run at once share one run's runtime, ramp_time and thread: the first job's,
// and another job's own is a loss (the matrix still validates).
TEST(FioImportTest, JobsAtOnceShareTheRunsClockAndLauncher) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(
      "[global]\nfilename=/dev/sdb\n[a]\nruntime=10\n[b]\nruntime=20\n[c]\nthread\n", "run.fio");
  ASSERT_TRUE(jobs.ok());
  FioImport imported = Import(*jobs, "sd");
  Matrix m = MustParse(imported);
  ASSERT_EQ(m.cells[0].jobs_size(), 3);
  for (const v1::NamedJob& job : m.cells[0].jobs()) {
    EXPECT_EQ(job.job().runtime_ns(), 10'000'000'000u) << job.name();
    EXPECT_FALSE(job.job().thread()) << job.name();
  }
  std::vector<std::string> lost;
  for (const FioDrop& d : imported.dropped) {
    if (d.changes_workload) lost.push_back(absl::StrCat(d.where, ": ", d.what));
  }
  EXPECT_THAT(lost, ElementsAre("run.fio:6: runtime of job 'b'", "run.fio:8: thread=1"));
}

}  // namespace
}  // namespace blkbench::workloads
