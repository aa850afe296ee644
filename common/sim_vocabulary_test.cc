// Tests for the engine's vocabulary tables: kernel-profile syntax, patch flags and the
// schedulers they change, device classes and parameter parsing.
#include "common/sim_vocabulary.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SimVocabularyTest, Schedulers) {
  EXPECT_THAT(Schedulers(), ElementsAre("none", "mq-deadline", "bfq", "kyber"));
  EXPECT_TRUE(IsKnownScheduler("bfq"));
  EXPECT_FALSE(IsKnownScheduler("cfq"));
  EXPECT_FALSE(IsKnownScheduler(""));
}

TEST(SimVocabularyTest, KernelProfiles) {
  absl::StatusOr<SimKernel> k = ParseSimKernel("sim:5.18+split-whole-bio+wake-by-tags");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->major, 5);
  EXPECT_EQ(k->minor, 18);
  EXPECT_THAT(k->patches, ElementsAre("split-whole-bio", "wake-by-tags"));
  k = ParseSimKernel("");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->minor, 16);

  SimKernelError e;
  k = ParseSimKernel("sim:6.16+dd_batch_dispatch", &e);
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.bad_patch, "dd_batch_dispatch");
  EXPECT_THAT(e.message, HasSubstr("unknown patch flag \"dd_batch_dispatch\"; patch flags: "
                                   "plug-batch-retry, dd-batch-dispatch"));
  EXPECT_THAT(k.status().message(), HasSubstr("kernel \"sim:6.16+dd_batch_dispatch\": unknown"));
  e = {};
  EXPECT_FALSE(ParseSimKernel("sim:6.16+wake-by-tags+wake-by-tags", &e).ok());
  EXPECT_EQ(e.message, "patch flag \"wake-by-tags\" is given twice");
  for (const char* bad : {"6.16", "sim:", "sim:6", "sim:6.x", "sim:-1.2", "sim:6.16.1", "linux:6.1",
                          "sim:6.10+", "sim:6.10++wake-by-tags"}) {
    EXPECT_EQ(ParseSimKernel(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(SimVocabularyTest, PatchFlagsAndTheirSchedulers) {
  const PatchFlagDef* dd = FindPatchFlag("dd-batch-dispatch");
  ASSERT_NE(dd, nullptr);
  EXPECT_TRUE(PatchAppliesTo(*dd, "mq-deadline"));
  EXPECT_FALSE(PatchAppliesTo(*dd, "bfq"));
  EXPECT_FALSE(PatchAppliesTo(*dd, ""));  // no scheduler set: "none"
  EXPECT_EQ(PatchSchedulerList(*dd), "mq-deadline");
  const PatchFlagDef* tags = FindPatchFlag("wake-by-tags");
  ASSERT_NE(tags, nullptr);
  EXPECT_TRUE(PatchAppliesTo(*tags, "none"));
  EXPECT_EQ(PatchSchedulerList(*tags), "every scheduler");
  for (const PatchFlagDef& f : PatchFlags()) {
    EXPECT_FALSE(f.seed.empty()) << f.name;
    EXPECT_FALSE(f.change.empty()) << f.name;
    for (std::string_view s : f.schedulers) EXPECT_TRUE(IsKnownScheduler(s)) << f.name;
  }
  EXPECT_EQ(FindPatchFlag("nope"), nullptr);
}

TEST(SimVocabularyTest, DevicesAndParams) {
  const SimDeviceDef* sata = FindSimDevice("sim:ssd-sata");
  ASSERT_NE(sata, nullptr);
  EXPECT_EQ(sata->family, "ssd");
  EXPECT_EQ(FindSimDevice("ssd-sata"), nullptr);  // needs the prefix
  EXPECT_EQ(FindSimDevice("sim:floppy"), nullptr);
  EXPECT_THAT(DefaultSimDevices(), ElementsAre("sim:null_blk", "sim:hdd", "sim:ssd", "sim:optane"));
  EXPECT_THAT(SimDeviceList(), HasSubstr("sim:null_blk, sim:hdd, sim:hdd-seed003, sim:ssd"));
  for (const SimDeviceDef& d : SimDevices()) {
    EXPECT_NE(FindDeviceFamily(d.family), nullptr) << d.name;
  }

  const DeviceFamilyDef* engine = FindDeviceFamily("engine");
  ASSERT_NE(engine, nullptr);
  const DeviceParamDef* rq = FindDeviceParam(*engine, "rq_affinity");
  ASSERT_NE(rq, nullptr);
  EXPECT_EQ(DeviceParamExpected(*rq),
            "an integer from 0 to 2 (0, 1 or 2 as /sys/block/X/queue/rq_affinity)");
  ParsedParam v;
  EXPECT_TRUE(ParseDeviceParam(*rq, "2", &v));
  EXPECT_EQ(v.integer, 2u);
  EXPECT_FALSE(ParseDeviceParam(*rq, "3", &v));

  const DeviceFamilyDef* ssd = FindDeviceFamily("ssd");
  ASSERT_NE(ssd, nullptr);
  EXPECT_TRUE(ParseDeviceParam(*FindDeviceParam(*ssd, "read_us"), "80.5", &v));
  EXPECT_EQ(v.integer, 80'500u);  // ns
  EXPECT_TRUE(ParseDeviceParam(*FindDeviceParam(*ssd, "write_buffer"), "64MiB", &v));
  EXPECT_EQ(v.integer, uint64_t{64} << 20);
  EXPECT_FALSE(ParseDeviceParam(*FindDeviceParam(*ssd, "queue_depth"), "-1", &v));
  EXPECT_EQ(FindDeviceParam(*ssd, "colour"), nullptr);
  EXPECT_EQ(DeviceParamList(*engine), "can_queue, rq_affinity, irq_cpu, devices");
}

TEST(SimVocabularyTest, MachineProfiles) {
  EXPECT_TRUE(IsKnownMachineProfile("desktop-16"));
  EXPECT_TRUE(IsKnownMachineProfile(kDefaultMachine));
  EXPECT_FALSE(IsKnownMachineProfile("desktop16"));
  EXPECT_TRUE(IsMachineProfilePath("/etc/blkbench/lab.yaml"));
  EXPECT_FALSE(IsMachineProfilePath("small-vm"));
}

absl::string_view A(std::string_view s) { return {s.data(), s.size()}; }

// The vocabulary section of docs/matrix.md, as the tables say it.
std::string VocabularyMarkdown() {
  std::string md =
      "<!-- BEGIN sim vocabulary: generated from common/sim_vocabulary.cc; "
      "common/sim_vocabulary_test.cc checks it -->\n";
  std::vector<std::string> names;
  for (std::string_view s : Schedulers()) names.push_back(absl::StrCat("`", A(s), "`"));
  absl::StrAppend(&md, "**Schedulers** (`scheduler`): ", absl::StrJoin(names, ", "), ".\n\n");

  absl::StrAppend(&md,
                  "**Simulated device classes** (`target.device_class`):\n\n"
                  "| class | parameters | rotational | offered by default | model |\n"
                  "|---|---|---|---|---|\n");
  for (const SimDeviceDef& d : SimDevices()) {
    absl::StrAppend(&md, "| `sim:", A(d.name), "` | `device.", A(d.family), "` | ",
                    d.rotational ? "yes" : "no", " | ", d.offered_by_default ? "yes" : "no", " | ",
                    A(d.description), " |\n");
  }
  absl::StrAppend(&md,
                  "\n**Device parameters** of the engine's models and simulated host "
                  "(`device: {<family>: {<name>: value}}`):\n\n"
                  "| family | parameter | value |\n|---|---|---|\n");
  for (const DeviceFamilyDef& f : DeviceFamilies()) {
    for (const DeviceParamDef& p : f.params) {
      absl::StrAppend(&md, "| `", A(f.name), "` | `", A(p.name), "` | ", DeviceParamExpected(p),
                      " |\n");
    }
  }
  absl::StrAppend(&md, "\n**Kernel profiles** (`target.kernel` with a `sim:` class): ",
                  "`sim:<major>.<minor>[+flag...]`, default `", A(kDefaultSimKernel),
                  "`. The version selects the mechanisms of that era; each flag switches one "
                  "modelled change on, with any version.\n\n"
                  "| flag | changes | seed | what it models |\n|---|---|---|---|\n");
  for (const PatchFlagDef& f : PatchFlags()) {
    absl::StrAppend(&md, "| `", A(f.name), "` | ", PatchSchedulerList(f), " | ", A(f.seed), " | ",
                    A(f.change), " |\n");
  }
  absl::StrAppend(&md, "\n**Machine profiles** (`target.machine`, default `", A(kDefaultMachine),
                  "`), or a path to a profile file (containing `/` or ending in `.yaml`):\n\n"
                  "| name | machine |\n|---|---|\n");
  for (const MachineProfileDef& m : MachineProfiles()) {
    absl::StrAppend(&md, "| `", A(m.name), "` | ", A(m.description), " |\n");
  }
  absl::StrAppend(&md, "<!-- END sim vocabulary -->\n");
  return md;
}

TEST(SimVocabularyTest, MatrixReferenceListsTheVocabulary) {
  std::ifstream in(std::string(BLKBENCH_SOURCE_DIR) + "/docs/matrix.md");
  ASSERT_TRUE(in) << "docs/matrix.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string expected = VocabularyMarkdown();
  EXPECT_NE(text.str().find(expected), std::string::npos) << "docs/matrix.md must hold, verbatim:\n"
                                                          << expected;
}

}  // namespace
}  // namespace blkbench
