// Tests for matrix files with mistakes: each is reported with FILE:LINE:COL, the
// key, and what was expected, and all mistakes in a file are reported together.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/resolved_job.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A valid header so each test adds only the mistake under test (from line 3 on).
constexpr char kHead[] = "name: t\ntarget: {device_class: null_blk}\n";

// Parses `text` as "m.yaml" and returns the error lines; fails if it parsed.
std::vector<std::string> Errors(const std::string& text) {
  absl::StatusOr<Matrix> m = ParseMatrix(text, "m.yaml");
  EXPECT_FALSE(m.ok()) << "parsed:\n" << text;
  if (m.ok()) return {};
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  return absl::StrSplit(std::string(m.status().message()), '\n');
}

// The single error of `body` appended to kHead.
std::string OneError(const std::string& body) {
  std::vector<std::string> errors = Errors(absl::StrCat(kHead, body));
  EXPECT_EQ(errors.size(), 1u) << absl::StrJoin(errors, "\n");
  return errors.empty() ? "" : errors[0];
}

TEST(MatrixErrorsTest, UnknownKeySuggestsClosest) {
  EXPECT_EQ(OneError("job:\n  iodeth: 4\n"),
            "m.yaml:4:3: unknown key 'iodeth' (did you mean 'iodepth'?)");
  EXPECT_EQ(OneError("matrix:\n  sheduler: [none]\n"),
            "m.yaml:4:3: unknown key 'sheduler' (did you mean 'scheduler'?)");
  EXPECT_EQ(OneError("repeat: 3\n"), "m.yaml:3:1: unknown key 'repeat' (did you mean 'repeats'?)");
  EXPECT_EQ(OneError("job: {frobnicate: 1}\n"), "m.yaml:3:7: unknown key 'frobnicate'");
}

// Names and device classes show up in tables, logs and dashboards: no control
// characters or bidirectional overrides that would hide or reorder what they say.
TEST(MatrixErrorsTest, NamesAndDeviceClassesMustBePrintable) {
  std::vector<std::string> bidi = Errors("name: \"ok\\u202Eevil\"\ntarget: {device_class: ssd}\n");
  ASSERT_EQ(bidi.size(), 1u);
  EXPECT_EQ(bidi[0],
            "m.yaml:1:7: key 'name': expected up to 128 printable characters, got a "
            "bidirectional override at byte 2");
  std::vector<std::string> bel = Errors("name: t\ntarget: {device_class: \"ss\\x07d\"}\n");
  ASSERT_EQ(bel.size(), 1u);
  EXPECT_THAT(bel[0], HasSubstr("key 'device_class': expected a device class of up to 128"));
}

TEST(MatrixErrorsTest, BadSizeSuffix) {
  EXPECT_EQ(OneError("job: {size: 4q}\n"),
            "m.yaml:3:13: key 'size': expected a size (e.g. 512k, 1g, or bytes), got '4q'");
}

TEST(MatrixErrorsTest, BsNotMultipleOf512) {
  EXPECT_EQ(OneError("job: {bs: 4000}\n"),
            "m.yaml:3:11: key 'bs': expected a size that is a multiple of 512 (e.g. 4k), or one "
            "per direction as "
            "reads,writes[,trims] (e.g. 4k,64k; an empty one is 4k), got '4000'");
  EXPECT_THAT(OneError("job: {bs: 0}\n"), HasSubstr("key 'bs'"));
}

// Sizes fit 64 bits, so the parser alone took bs: 4294967296g; common/job_bounds.h caps
// them, each error giving its reason, at the key that set the value.
TEST(MatrixErrorsTest, BlockSizesAreAtMost64m) {
  const std::string why =
      " is above 64m: larger blocks than the device's max I/O size are split by the block "
      "layer; blkbench caps bs at 64 MiB";
  EXPECT_EQ(OneError("job: {bs: 4294967296g}\n"), "m.yaml:3:11: bs 4096p" + why);
  // On sim:ssd this was stored as a done run with 0 IOPS (issue 32).
  EXPECT_THAT(Errors("name: t\ntarget: {device_class: 'sim:ssd'}\njob: {bs: 1t}\n"),
              ElementsAre("m.yaml:3:11: bs 1t" + why));
  EXPECT_EQ(OneError("job: {bsrange: 4k-128m}\n"), "m.yaml:3:16: bsrange maximum 128m" + why);
  EXPECT_EQ(OneError("job: {bssplit: 4k/50:1g/50}\n"), "m.yaml:3:16: bssplit block size 1g" + why);
  EXPECT_EQ(OneError("matrix:\n  bs: [4k, 128m]\n"),
            "m.yaml:4:12: bs 128m" + why + " (cell 1: bs=128m)");
  EXPECT_TRUE(ParseMatrix(absl::StrCat(kHead, "job: {bs: 64m}\n"), "m.yaml").ok());
}

TEST(MatrixErrorsTest, SizesTimesAndQueueSettingsHaveUpperBounds) {
  EXPECT_EQ(OneError("job: {size: 2048p}\n"),
            "m.yaml:3:13: size 2048p is above 1024p (1 EiB): beyond any block device; blkbench "
            "caps size, offset, offset_increment and io_size at 1 EiB");
  EXPECT_THAT(OneError("job: {io_size: 4096p}\n"), StartsWith("m.yaml:3:16: io_size 4096p"));
  EXPECT_EQ(OneError("job: {numjobs: 4096, offset_increment: 1024p}\n"),
            "m.yaml:3:40: the last job's region (offset + offset_increment × 4095 + size) ends "
            "beyond 8 EiB, the largest file offset (loff_t)");
  EXPECT_EQ(OneError("job: {runtime: 3000000}\n"),
            "m.yaml:3:16: runtime 3000000s is above 30 days (2592000s): a run holds its device "
            "and lease that long; blkbench caps runtime, ramp_time and startdelay at 30 days (a "
            "bare number is seconds)");
  EXPECT_THAT(OneError("job: {ramp_time: 31d}\n"), StartsWith("m.yaml:3:18: ramp_time 2678400s"));
  EXPECT_TRUE(
      ParseMatrix(absl::StrCat(kHead, "job: {runtime: 30d, size: 1024p}\n"), "m.yaml").ok());
  EXPECT_EQ(OneError("job: {nr_requests: 20000}\n"),
            "m.yaml:3:20: key 'nr_requests': expected an integer from 1 to 10240 (the kernel "
            "refuses more: BLK_MQ_MAX_DEPTH), got '20000'");
}

TEST(MatrixErrorsTest, IodepthZeroAndNumjobsTooLarge) {
  EXPECT_EQ(OneError("job:\n  iodepth: 0\n"),
            "m.yaml:4:12: key 'iodepth': expected an integer from 1 to 65536, got '0'");
  EXPECT_EQ(OneError("job:\n  numjobs: 4097\n"),
            "m.yaml:4:12: key 'numjobs': expected an integer from 1 to 4096, got '4097'");
}

TEST(MatrixErrorsTest, EmptyAxis) {
  EXPECT_EQ(OneError("matrix:\n  bs: []\n"),
            "m.yaml:4:7: key 'bs': empty axis (a list needs at least one value)");
}

TEST(MatrixErrorsTest, KeyInBothJobAndMatrix) {
  EXPECT_EQ(
      OneError("job: {bs: 4k}\nmatrix:\n  bs: [4k, 64k]\n"),
      "m.yaml:5:3: key 'bs' is given in both job: (line 3) and matrix:; give it in one place");
}

TEST(MatrixErrorsTest, AliasAndItsOptionTogether) {
  EXPECT_THAT(OneError("job: {iodepth: 8, iodepth_batch_submit: 4, iodepth_batch: 4}\n"),
              StartsWith("m.yaml:3:44: key 'iodepth_batch' sets the same option as "
                         "'iodepth_batch_submit'"));
  EXPECT_THAT(OneError("job: {rwmixread: 70}\nmatrix: {rwmixwrite: [10]}\n"),
              HasSubstr("m.yaml:4:10: key 'rwmixwrite' sets the same option as 'rwmixread'"));
}

TEST(MatrixErrorsTest, SameKeyTwiceInOneMap) {
  EXPECT_EQ(OneError("job:\n  bs: 4k\n  bs: 8k\n"),
            "m.yaml:5:3: key 'bs' appears twice in job: (first at line 4)");
}

TEST(MatrixErrorsTest, BadRwAndEngine) {
  EXPECT_EQ(OneError("job: {rw: randomread}\n"),
            "m.yaml:3:11: key 'rw': expected one of read, write, randread, randwrite, randrw, "
            "rw, readwrite, got 'randomread'");
  // The choices are common/resolved_job.h's engine vocabulary, in its order.
  EXPECT_EQ(OneError("job: {ioengine: posixaio}\n"),
            "m.yaml:3:17: key 'ioengine': expected one of " + IoEngineNames() +
                " (fio's null: write nop or \"null\"), got 'posixaio'");
  // Unquoted, fio's name for nop is YAML's null (the error points at the key).
  EXPECT_EQ(OneError("job: {ioengine: null}\n"),
            "m.yaml:3:7: key 'ioengine': expected one of " + IoEngineNames() +
                " (fio's null: write nop or \"null\"), got nothing");
}

TEST(MatrixErrorsTest, MissingName) {
  const std::vector<std::string> errors = Errors("target: {device_class: nvme}\n");
  EXPECT_THAT(errors, ElementsAre("m.yaml:1:1: missing required key 'name'"));
  EXPECT_THAT(Errors("name: ''\ntarget: {device_class: nvme}\n"),
              ElementsAre("m.yaml:1:7: key 'name': expected a non-empty name, got ''"));
}

TEST(MatrixErrorsTest, MissingDeviceClass) {
  EXPECT_THAT(Errors("name: x\ntarget: {kernel: '6.*'}\n"),
              ElementsAre("m.yaml:2:1: key 'target': missing required key 'device_class'"));
  EXPECT_THAT(Errors("name: x\njob: {bs: 4k}\n"),
              ElementsAre(HasSubstr("m.yaml:1:1: missing required key 'target'")));
  EXPECT_THAT(Errors("name: x\ntarget: {device_class: ''}\n"),
              ElementsAre(HasSubstr(
                  "m.yaml:2:24: key 'device_class': expected a device class of up to 128")));
}

// A placeholder (the importer writes CHANGE-ME) is not a class: a matrix keeping one would
// validate, be submitted, and wait for an agent that offers it.
TEST(MatrixErrorsTest, PlaceholderDeviceClassIsAnError) {
  for (const char* placeholder : {"CHANGE-ME", "change_me", "TODO", "FIXME", "xxx", "<class>"}) {
    EXPECT_THAT(Errors(absl::StrCat("name: x\ntarget:\n  device_class: '", placeholder, "'\n")),
                ElementsAre(absl::StrCat(
                    "m.yaml:3:17: key 'device_class': expected a device class of up to 128 "
                    "printable characters (e.g. null_blk, nvme, file, sim:null_blk), not a "
                    "placeholder such as CHANGE-ME, TODO or <class>, got '",
                    placeholder, "'")));
  }
  // An axis of classes is checked value by value.
  EXPECT_THAT(Errors("name: x\ntarget: {device_class: [sd, TBD]}\n"),
              ElementsAre(HasSubstr("m.yaml:2:29: key 'device_class': expected a device class")));
  EXPECT_TRUE(ParseMatrix("name: x\ntarget: {device_class: changed-me}\n", "m.yaml").ok());
}

TEST(MatrixErrorsTest, YamlSyntaxErrorHasPosition) {
  EXPECT_THAT(Errors("name: x\njob: {bs: [4k, 8k}\n"), ElementsAre(StartsWith("m.yaml:2:")));
  EXPECT_THAT(Errors("name: x\njob: {bs: [4k, 8k}\n")[0], HasSubstr("YAML syntax error"));
  EXPECT_THAT(Errors("name: x\njob: bs: 4k\n"),
              ElementsAre(StartsWith("m.yaml:2:8: YAML syntax error: invalid nested block "
                                     "mapping on the same line")));
}

// What a hostile submitter sends: the one-byte "," (which took yaml-cpp 0.7.0 to the
// OOM killer), nesting, alias bombs, a 4 MiB flood. Each is a positioned error at once.
TEST(MatrixErrorsTest, HostileYamlEndsInAPositionedError) {
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    bomb += absl::StrCat("a", i, ": &a", i, " [");
    for (int j = 0; j < 10; ++j) bomb += absl::StrCat(j ? ", " : "", "*a", i - 1);
    bomb += "]\n";
  }
  std::string flood = "name: [";
  while (flood.size() < (4 << 20) - 8) flood += "1, ";
  flood += "1]";
  const std::string cases[] = {",", std::string(200, '['), bomb, flood, "\t- x: ,"};
  for (const std::string& text : cases) {
    const absl::Time start = absl::Now();
    const std::vector<std::string> errors = Errors(text);
    // Bounded by the parser's 5 s limit, far above its cost even under ASan.
    EXPECT_LT(absl::Now() - start, absl::Seconds(10)) << text.substr(0, 40);
    ASSERT_EQ(errors.size(), 1u) << text.substr(0, 40);
    EXPECT_THAT(errors[0], StartsWith("m.yaml:")) << text.substr(0, 40);
  }
  EXPECT_THAT(Errors(",")[0], StartsWith("m.yaml:1:1: YAML syntax error"));
  EXPECT_THAT(Errors(std::string(200, '['))[0], HasSubstr("nested deeper than"));
  EXPECT_THAT(Errors(bomb)[0], HasSubstr("aliases count"));
  EXPECT_THAT(Errors(flood)[0], HasSubstr("YAML nodes"));
}

TEST(MatrixErrorsTest, TimeBasedNeedsRuntime) {
  EXPECT_EQ(OneError("job: {time_based: 1}\n"),
            "m.yaml:3:19: time_based=1 needs a runtime > 0 (otherwise the job never ends)");
  EXPECT_EQ(OneError("job: {time_based: true, runtime: 0}\n"),
            "m.yaml:3:34: time_based=1 needs a runtime > 0 (otherwise the job never ends)");
}

TEST(MatrixErrorsTest, BatchSubmitLargerThanIodepth) {
  EXPECT_EQ(OneError("job:\n  iodepth: 4\n  iodepth_batch_submit: 8\n"),
            "m.yaml:5:25: iodepth_batch_submit (8) is larger than iodepth (4)");
}

// The engines' limits are validate-time errors too (common/resolved_job.h), not a failure
// on the agent after the host was touched.
TEST(MatrixErrorsTest, IoUringRingLimit) {
  EXPECT_EQ(OneError("job:\n  ioengine: io_uring\n  iodepth: 40000\n"),
            "m.yaml:5:12: iodepth 40000 exceeds io_uring's maximum ring size of 32768 (the ring "
            "has iodepth entries)");
  // psync has one I/O in flight whatever iodepth says: no limit but the parser's.
  EXPECT_TRUE(ParseMatrix(absl::StrCat(kHead, "job: {iodepth: 40000}\n"), "m.yaml").ok());
}

TEST(MatrixErrorsTest, AxisProblemNamesTheCell) {
  EXPECT_EQ(OneError("job: {iodepth_batch_submit: 8}\nmatrix:\n  iodepth: [1, 32]\n"),
            "m.yaml:3:29: iodepth_batch_submit (8) is larger than iodepth (1) "
            "(cell 0: iodepth=1)");
}

TEST(MatrixErrorsTest, BatchCompleteMinAboveMax) {
  EXPECT_EQ(OneError("job: {iodepth: 32, iodepth_batch_complete_min: 16, "
                     "iodepth_batch_complete_max: 8}\n"),
            "m.yaml:3:48: iodepth_batch_complete_min (16) is larger than "
            "iodepth_batch_complete_max (8)");
}

TEST(MatrixErrorsTest, RwmixreadOutOfRange) {
  EXPECT_EQ(OneError("job: {rw: randrw, rwmixread: 101}\n"),
            "m.yaml:3:30: key 'rwmixread': expected a percentage from 0 to 100, got '101'");
}

TEST(MatrixErrorsTest, BadCpusAllowed) {
  EXPECT_EQ(OneError("job: {cpus_allowed: 3-1}\n"),
            "m.yaml:3:21: key 'cpus_allowed': expected a CPU list like 0-3,6, got '3-1'");
  EXPECT_THAT(OneError("job: {cpus_allowed: '0-3,x'}\n"), HasSubstr("got '0-3,x'"));
}

TEST(MatrixErrorsTest, DuplicateAxisValueByMeaning) {
  EXPECT_EQ(OneError("matrix:\n  bs: [4k, 8k,\n       4096]\n"),
            "m.yaml:5:8: key 'bs': duplicate axis value '4096' (same as '4k' at line 4)");
}

TEST(MatrixErrorsTest, SimKernelNeedsSimDevice) {
  EXPECT_EQ(OneError("matrix: {kernel: ['sim:6.16']}\n"),
            "m.yaml:3:19: kernel 'sim:6.16' is a simulator profile; it needs a sim: device_class "
            "(e.g. 'sim:null_blk'), got device_class 'null_blk' (cell 0: kernel=sim:6.16)");
}

TEST(MatrixErrorsTest, DirectNeedsAlignedSize) {
  EXPECT_EQ(OneError("job: {direct: 1, size: 1000}\n"),
            "m.yaml:3:24: with direct=1, size must be a multiple of 512 (got 1000 bytes)");
}

TEST(MatrixErrorsTest, IoUringOptionWithPsync) {
  EXPECT_EQ(OneError("job: {fixedbufs: 1}\n"),
            "m.yaml:3:18: fixedbufs is an io_uring option; it needs ioengine: io_uring");
}

TEST(MatrixErrorsTest, WrongTypes) {
  EXPECT_EQ(OneError("job: {bs: {a: 1}}\n"),
            "m.yaml:3:11: key 'bs': expected a size that is a multiple of 512 (e.g. 4k), or one "
            "per direction as "
            "reads,writes[,trims] (e.g. 4k,64k; an empty one is 4k), got a map");
  EXPECT_EQ(OneError("job: [bs, 4k]\n"),
            "m.yaml:3:6: key 'job': expected a map of keys, got a list");
  EXPECT_EQ(OneError("matrix:\n  bs: [[4k]]\n"),
            "m.yaml:4:8: key 'bs': expected a size that is a multiple of 512 (e.g. 4k), or one per "
            "direction as "
            "reads,writes[,trims] (e.g. 4k,64k; an empty one is 4k) in the "
            "list, got a list");
  EXPECT_EQ(OneError("job:\n  bs:\n"),
            "m.yaml:4:3: key 'bs': expected a size that is a multiple of 512 (e.g. 4k), or one per "
            "direction as "
            "reads,writes[,trims] (e.g. 4k,64k; an empty one is 4k), got nothing");
  EXPECT_EQ(OneError("repeats: [1, 2]\n"),
            "m.yaml:3:10: key 'repeats': expected an integer from 1 to 1000, got a list");
  EXPECT_THAT(Errors("- name: x\n"), ElementsAre(HasSubstr("m.yaml:1:1: expected a map")));
}

TEST(MatrixErrorsTest, KeysInTheWrongSection) {
  EXPECT_EQ(OneError("bs: 4k\n"),
            "m.yaml:3:1: key 'bs' is a job option; put it under job: or matrix:");
  EXPECT_EQ(OneError("job: {kernel: '6.*'}\n"),
            "m.yaml:3:7: key 'kernel' selects where cells run; put it under target: or matrix:");
  EXPECT_EQ(OneError("job: {irqmode: 1}\n"),
            "m.yaml:3:7: key 'irqmode' is a null_blk parameter; put it under device: null_blk:");
}

TEST(MatrixErrorsTest, DeviceMistakes) {
  EXPECT_EQ(OneError("device: {nullblk: {irqmode: 1}}\n"),
            "m.yaml:3:10: unknown device 'nullblk' (did you mean 'null_blk'?); devices with "
            "parameters: null_blk, hdd, ssd, optane, engine");
  EXPECT_EQ(OneError("device: {null_blk: {irqmode: 3}}\n"),
            "m.yaml:3:30: key 'null_blk.irqmode': expected 0 (none), 1 (softirq) or 2 (timer), "
            "got '3'");
  EXPECT_EQ(OneError("device: {null_blk: {submit_queue: 3}}\n"),
            "m.yaml:3:21: unknown key 'submit_queue' (did you mean 'submit_queues'?)");
}

TEST(MatrixErrorsTest, BadCgroupLayouts) {
  const std::string expected =
      "expected root, one, one:<weight>, per-job, or groups as name:weight*jobs,... (e.g. "
      "heavy:1000*1,light:100*1; weights 1 to 1000, names of a-z 0-9 _ -)";
  EXPECT_EQ(OneError("job: {cgroup: two}\n"),
            "m.yaml:3:15: key 'cgroup': " + expected + ", got 'two'");
  EXPECT_EQ(OneError("job: {cgroup: 'one:0'}\n"),
            "m.yaml:3:15: key 'cgroup': " + expected + ", got 'one:0'");
  EXPECT_EQ(OneError("matrix:\n  cgroup: [one, 'a:100*1,A:100*1']\n"),
            "m.yaml:4:17: key 'cgroup': " + expected + ", got 'a:100*1,A:100*1'");
  EXPECT_THAT(OneError("job: {cgroup: 'a:1001*1'}\n"), HasSubstr("got 'a:1001*1'"));
  EXPECT_THAT(OneError("job: {cgroup: 'a:100*1,a:100*1'}\n"), HasSubstr("got 'a:100*1,a:100*1'"));
}

TEST(MatrixErrorsTest, CgroupGroupsMustPlaceEveryJob) {
  EXPECT_EQ(OneError("job: {numjobs: 4, cgroup: 'heavy:1000*1,light:100*1'}\n"),
            "m.yaml:3:27: key 'cgroup': expected groups whose jobs add up to numjobs (4), got "
            "'heavy:1000*1,light:100*1' (2 jobs)");
  // As an axis value, the offending cell is named.
  EXPECT_EQ(OneError("job: {numjobs: 2}\nmatrix:\n  cgroup: [one, 'a:100*3']\n"),
            "m.yaml:5:17: key 'cgroup': expected groups whose jobs add up to numjobs (2), got "
            "'a:100*3' (3 jobs) (cell 1: cgroup=a:100*3)");
  // A bad numjobs is reported alone, not also as a mismatch.
  EXPECT_EQ(OneError("job: {numjobs: 0, cgroup: 'a:100*3'}\n"),
            "m.yaml:3:16: key 'numjobs': expected an integer from 1 to 4096, got '0'");
}

TEST(MatrixErrorsTest, RepeatsOutOfRange) {
  EXPECT_EQ(OneError("repeats: 0\n"),
            "m.yaml:3:10: key 'repeats': expected an integer from 1 to 1000, got '0'");
}

TEST(MatrixErrorsTest, TooManyCells) {
  std::string values;
  for (int i = 1; i <= 101; ++i) absl::StrAppend(&values, i == 1 ? "" : ", ", i);
  EXPECT_EQ(OneError(absl::StrCat("matrix:\n  nr_requests: [", values, "]\n  randseed: [", values,
                                  "]\n")),
            "m.yaml:3:1: the matrix expands to more than 10000 cells (nr_requests=101 x "
            "randseed=101); split it into smaller matrices");
}

TEST(MatrixErrorsTest, EmptyFileAndSeveralDocuments) {
  EXPECT_THAT(Errors(""), ElementsAre(HasSubstr("m.yaml:1:1: the file is empty")));
  EXPECT_THAT(Errors("# just a comment\n"), ElementsAre(HasSubstr("the file is empty")));
  EXPECT_THAT(Errors(absl::StrCat(kHead, "---\nname: u\n")),
              ElementsAre(HasSubstr("m.yaml:3:1: more than one YAML document")));
}

TEST(MatrixErrorsTest, AllErrorsAreReportedTogetherInFileOrder) {
  const std::vector<std::string> errors = Errors(R"(target: {device_class: null_blk}
job:
  iodeth: 4
  bs: 4000
  rw: randrw
  rwmixread: 101
  ioengine: posixaio
  time_based: 1
matrix:
  scheduler: [none, deadline]
)");
  EXPECT_THAT(errors, ElementsAre("m.yaml:1:1: missing required key 'name'",
                                  "m.yaml:3:3: unknown key 'iodeth' (did you mean 'iodepth'?)",
                                  HasSubstr("m.yaml:4:7: key 'bs'"),
                                  HasSubstr("m.yaml:6:14: key 'rwmixread'"),
                                  HasSubstr("m.yaml:7:13: key 'ioengine'"),
                                  HasSubstr("m.yaml:8:15: time_based=1 needs a runtime"),
                                  HasSubstr("m.yaml:10:21: key 'scheduler': expected one of none, "
                                            "mq-deadline, bfq, kyber, got 'deadline'")));
}

TEST(MatrixErrorsTest, CrossChecksSkipKeysWithBadValues) {
  // iodepth is bad, so "batch_submit > iodepth" is not also reported against the default.
  EXPECT_EQ(OneError("job: {iodepth: x, iodepth_batch_submit: 8}\n"),
            "m.yaml:3:16: key 'iodepth': expected an integer from 1 to 65536, got 'x'");
}

TEST(MatrixErrorsTest, EmptyFileNameStillLabelsErrors) {
  absl::StatusOr<Matrix> m = ParseMatrix("name: x\n", "");
  EXPECT_THAT(std::string(m.status().message()),
              StartsWith("<matrix>:1:1: missing required key 'target'"));
}

TEST(MatrixErrorsTest, OddYamlIsAnErrorNeverAnException) {
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  const std::vector<std::string> inputs = {
      deep,
      absl::StrCat("name: x\njob: {bs: ", deep, "}\n"),
      "name: x\ntarget: {device_class: *nowhere}\n",
      "name: &a x\ntarget: {device_class: *a}\njob: {bs: &b 4k}\nmatrix: {numjobs: *b}\n",
      "? {a: 1}\n: 2\n",
      "name: x\ntarget: {device_class: x}\njob: {? [bs] : 4k}\n",
      "\t\x01\xff",
      "name: x\ntarget: {device_class: x}\njob: {bs: \"\\u0000\"}\n",
      "---\n...\n",
      "name: x\ntarget: ~\n",
      "name: x\ntarget: {device_class: [x, y]}\nmatrix: {device_class: [z]}\n",
  };
  for (const std::string& text : inputs) {
    absl::StatusOr<Matrix> m = ParseMatrix(text, "odd.yaml");
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << text.substr(0, 80);
    EXPECT_THAT(std::string(m.status().message()), StartsWith("odd.yaml:")) << text.substr(0, 80);
  }
}

}  // namespace
}  // namespace blkbench::workloads
